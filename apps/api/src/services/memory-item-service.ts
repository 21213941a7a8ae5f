import {
  type Clock,
  type ContextBudgets,
  ContextBudgetsSchema,
  type FieldIssue,
  ftsMatchExpression,
  type Limits,
  MEMORY_CATEGORIES,
  type MemoryCategory,
  type MemorySettings,
  type Metadata,
  NotFoundError,
  parseMemorySettings,
  type TokenCounter,
  ValidationError,
  VERIFICATION_LEXICAL_CANDIDATES,
  validateMetadata,
  validationErrorFromZod,
  verifyMemory,
} from '@engram/core'
import { contentHash, type EmbeddingService } from '@engram/engine'
import type { Database, MemoryItem as MemoryItemRow, Prisma, Transaction } from '@engram/store-sqlite'
import { parseMetadata, parseRowId } from '@engram/store-sqlite'
import { z } from 'zod'
import type { PrivacyService } from './privacy-service.ts'

export const MAX_TAGS = 20
export const MAX_TAG_CHARS = 64
export const MAX_USER_ID_CHARS = 128
export const MAX_SOURCE_ID_CHARS = 256
/** A substring filter longer than any memory can match nothing; bounded like a search query. */
export const MAX_FILTER_SEARCH_CHARS = 2_000
/** Spec 001's example contents are one sentence; 10k characters leaves room for a paragraph or a list. */
export const MAX_MEMORY_CHARS = 10_000

export interface MemoryItemView {
  id: string
  agentId: string
  userId: string | null
  content: string
  category: MemoryCategory
  tags: string[]
  importance: number
  confidence: number
  pinned: boolean
  sourceConversationId: string | null
  sourceMessageId: string | null
  accessCount: number
  lastAccessedAt: Date | null
  validFrom: Date
  validUntil: Date | null
  supersededById: string | null
  metadata: Metadata
  tokenCount: number
  createdAt: Date
  updatedAt: Date
}

export function toMemoryItem(row: MemoryItemRow): MemoryItemView {
  return {
    id: String(row.id),
    agentId: row.agentId,
    userId: row.userId,
    content: row.content,
    category: row.category as MemoryCategory,
    tags: parseTags(row.tags),
    importance: row.importance,
    confidence: row.confidence,
    pinned: row.pinned,
    sourceConversationId: row.sourceConversationId,
    sourceMessageId: row.sourceMessageId,
    accessCount: row.accessCount,
    lastAccessedAt: row.lastAccessedAt,
    validFrom: row.validFrom,
    validUntil: row.validUntil,
    supersededById: row.supersededById == null ? null : String(row.supersededById),
    metadata: parseMetadata(row.metadata),
    tokenCount: row.tokenCount,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  }
}

function parseTags(text: string): string[] {
  try {
    const value = JSON.parse(text) as unknown
    return Array.isArray(value) ? value.filter((t): t is string => typeof t === 'string') : []
  } catch {
    return []
  }
}

const unit = z.number().min(0).max(1)
const sourceId = z.string().min(1).max(MAX_SOURCE_ID_CHARS)
const MemoryFieldsSchema = z.object({
  content: z
    .string()
    .max(MAX_MEMORY_CHARS)
    .refine((s) => s.trim().length > 0, 'must not be empty'),
  category: z.enum(MEMORY_CATEGORIES),
  tags: z
    .array(
      z
        .string()
        .min(1)
        .max(MAX_TAG_CHARS)
        .regex(/^[^\s,]+$/, 'must be one word (no spaces or commas)'),
    )
    .max(MAX_TAGS),
  importance: unit,
  confidence: unit,
  pinned: z.boolean(),
  userId: z.string().min(1).max(MAX_USER_ID_CHARS).nullable(),
  sourceConversationId: sourceId.nullable(),
  sourceMessageId: sourceId.nullable(),
  validFrom: z.date(),
  validUntil: z.date().nullable(),
})

export interface MemoryItemInput {
  content: string
  category: MemoryCategory
  tags?: string[] | null
  importance?: number | null
  confidence?: number | null
  pinned?: boolean | null
  userId?: string | null
  sourceConversationId?: string | null
  sourceMessageId?: string | null
  validFrom?: Date | null
  validUntil?: Date | null
  metadata?: Metadata | null
}

export type WriteOutcome = 'STORED' | 'DUPLICATE' | 'SUPERSEDED'

export interface MemoryWriteResult {
  outcome: WriteOutcome
  /** The stored item, or for a duplicate the existing item it duplicates. */
  item: MemoryItemView
  duplicateOf: MemoryItemView | null
  superseded: MemoryItemView | null
  layer: 'jaccard' | 'semantic' | null
  similarity: number | null
  /** Items that stopped being current to keep the agent under maxEntriesPerAgent. */
  evicted: MemoryItemView[]
}

export interface MemoryFilter {
  userId?: string | null
  categories?: MemoryCategory[] | null
  tags?: string[] | null
  minImportance?: number | null
  createdAfter?: Date | null
  createdBefore?: Date | null
  /** Valid at this time (default now). */
  asOf?: Date | null
  /** Superseded and expired items too. */
  includeSuperseded?: boolean | null
  pinned?: boolean | null
  search?: string | null
}

export interface StoredSettings {
  settings: MemorySettings
  contextBudgets: ContextBudgets
}

/**
 * Long-term memory items: verified on write (spec 003), guarded for sensitive data (spec 001),
 * embedded for search, valid over time (validFrom/validUntil, supersession).
 */
export class MemoryItemService {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly tokenCounter: TokenCounter,
    private readonly limits: Limits,
    private readonly privacy: PrivacyService,
    private readonly embeddings: EmbeddingService,
  ) {}

  // --- settings -------------------------------------------------------------------------------

  async settings(scope: string): Promise<StoredSettings> {
    const agent = await this.db.agent.findUnique({ where: { id: scope }, select: { memorySettings: true } })
    return parseStoredSettings(agent?.memorySettings ?? '{}')
  }

  /** Merges changes into the agent's settings; validated whole, so a bad value changes nothing. */
  async updateSettings(
    scope: string,
    changes: { settings?: Partial<MemorySettings>; contextBudgets?: Partial<ContextBudgets> },
  ): Promise<StoredSettings> {
    const agent = await this.db.agent.findUnique({ where: { id: scope }, select: { memorySettings: true } })
    const stored = safeJson(agent?.memorySettings ?? '{}')
    const nextSettings = { ...(stored.settings ?? {}), ...dropNulls(changes.settings ?? {}) }
    const nextBudgets = { ...(stored.contextBudgets ?? {}), ...dropNulls(changes.contextBudgets ?? {}) }
    parseMemorySettings(nextSettings)
    const budgets = ContextBudgetsSchema.safeParse(nextBudgets)
    if (!budgets.success) throw validationErrorFromZod(budgets.error, 'contextBudgets')
    await this.db.agent.update({
      where: { id: scope },
      data: { memorySettings: JSON.stringify({ settings: nextSettings, contextBudgets: nextBudgets }) },
    })
    return this.settings(scope)
  }

  // --- reads ----------------------------------------------------------------------------------

  async get(scope: string, id: string, { track = true } = {}): Promise<MemoryItemView> {
    const rowId = parseRowId(id)
    const row =
      rowId == null ? null : await this.db.memoryItem.findFirst({ where: { id: rowId, agentId: scope } })
    if (!row) throw new NotFoundError('MemoryItem', id)
    if (track) return (await this.recordAccess(scope, [row.id]))[0] ?? toMemoryItem(row)
    return toMemoryItem(row)
  }

  where(scope: string | null, filter: MemoryFilter): Prisma.MemoryItemWhereInput {
    this.assertFilter(filter)
    const asOf = filter.asOf ?? this.clock.now()
    return {
      ...(scope ? { agentId: scope } : {}),
      ...(filter.userId ? { userId: filter.userId } : {}),
      ...(filter.categories?.length ? { category: { in: filter.categories } } : {}),
      ...(filter.minImportance != null ? { importance: { gte: filter.minImportance } } : {}),
      ...(filter.pinned != null ? { pinned: filter.pinned } : {}),
      ...(filter.search ? { content: { contains: filter.search } } : {}),
      createdAt: {
        ...(filter.createdAfter ? { gte: filter.createdAfter } : {}),
        ...(filter.createdBefore ? { lte: filter.createdBefore } : {}),
      },
      AND: [
        ...(filter.tags ?? []).map((tag) => ({ tags: { contains: JSON.stringify(tag) } })),
        ...(filter.includeSuperseded
          ? []
          : [{ validFrom: { lte: asOf } }, { OR: [{ validUntil: null }, { validUntil: { gt: asOf } }] }]),
      ],
    }
  }

  private assertFilter(filter: MemoryFilter): void {
    const issues: FieldIssue[] = []
    if (filter.minImportance != null && !(filter.minImportance >= 0 && filter.minImportance <= 1))
      issues.push({ field: 'filter.minImportance', message: 'must be between 0 and 1', limit: '0..1' })
    if ((filter.tags?.length ?? 0) > MAX_TAGS)
      issues.push({ field: 'filter.tags', message: `at most ${MAX_TAGS} tags`, limit: MAX_TAGS })
    for (const [i, tag] of (filter.tags ?? []).entries())
      if (tag.length > MAX_TAG_CHARS)
        issues.push({
          field: `filter.tags.${i}`,
          message: `at most ${MAX_TAG_CHARS} characters`,
          limit: MAX_TAG_CHARS,
        })
    if ((filter.search?.length ?? 0) > MAX_FILTER_SEARCH_CHARS)
      issues.push({
        field: 'filter.search',
        message: `at most ${MAX_FILTER_SEARCH_CHARS} characters`,
        limit: MAX_FILTER_SEARCH_CHARS,
      })
    if ((filter.userId?.length ?? 0) > MAX_USER_ID_CHARS)
      issues.push({
        field: 'filter.userId',
        message: `at most ${MAX_USER_ID_CHARS} characters`,
        limit: MAX_USER_ID_CHARS,
      })
    if (filter.createdAfter && filter.createdBefore && filter.createdAfter > filter.createdBefore)
      issues.push({ field: 'filter.createdAfter', message: 'must not be after filter.createdBefore' })
    if (issues.length) throw new ValidationError(issues)
  }

  async stats(scope: string) {
    const now = this.clock.now()
    const current = this.where(scope, {})
    const [byCategory, total, valid, pinned, storage, coverage] = await Promise.all([
      this.db.memoryItem.groupBy({ by: ['category'], where: current, _count: { _all: true } }),
      this.db.memoryItem.count({ where: { agentId: scope } }),
      this.db.memoryItem.count({ where: current }),
      this.db.memoryItem.count({ where: { ...current, pinned: true } }),
      this.db.$queryRawUnsafe<{ contentBytes: number | null; vectorBytes: number | null }[]>(
        `SELECT (SELECT SUM(LENGTH(CAST("content" AS BLOB)) + LENGTH("tags") + LENGTH("metadata")) FROM "MemoryItem" WHERE "agentId" = ?) AS contentBytes,
                (SELECT SUM(LENGTH("vector")) FROM "Embedding" WHERE "agentId" = ? AND "kind" = 'memory' AND "model" = ?) AS vectorBytes`,
        scope,
        scope,
        this.embeddings.model,
      ),
      this.embeddings.coverage(scope),
    ])
    const memoryCoverage = coverage.find((c) => c.kind === 'memory')
    return {
      agentId: scope,
      asOf: now,
      total,
      current: valid,
      superseded: total - valid,
      pinned,
      byCategory: MEMORY_CATEGORIES.map((category) => ({
        category,
        count: byCategory.find((g) => g.category === category)?._count._all ?? 0,
      })),
      storageBytes: Number(storage[0]?.contentBytes ?? 0) + Number(storage[0]?.vectorBytes ?? 0),
      vectorBytes: Number(storage[0]?.vectorBytes ?? 0),
      embeddingModel: this.embeddings.model,
      embedded: memoryCoverage?.embedded ?? 0,
      embeddingCoverage:
        memoryCoverage && memoryCoverage.total > 0 ? memoryCoverage.embedded / memoryCoverage.total : 1,
      coverage,
    }
  }

  /** Every access counts (spec 003 access tracking): reads by id, search hits, context inclusion. */
  async recordAccess(scope: string, ids: readonly number[]): Promise<MemoryItemView[]> {
    if (ids.length === 0) return []
    const now = this.clock.now()
    await this.db.memoryItem.updateMany({
      where: { agentId: scope, id: { in: [...ids] } },
      data: { accessCount: { increment: 1 }, lastAccessedAt: now },
    })
    const rows = await this.db.memoryItem.findMany({ where: { agentId: scope, id: { in: [...ids] } } })
    const byId = new Map(rows.map((r) => [r.id, toMemoryItem(r)]))
    return ids.flatMap((id) => byId.get(id) ?? [])
  }

  // --- writes ---------------------------------------------------------------------------------

  /**
   * Stores a memory through the verification pipeline: a near-duplicate (Jaccard) or semantic
   * duplicate (cosine) is not stored and the existing item is returned; a same-category item in
   * the contradiction band is superseded by the new one. All in one transaction.
   */
  async create(scope: string, input: MemoryItemInput): Promise<MemoryWriteResult> {
    const now = this.clock.now()
    const fields = this.validate({
      content: input.content,
      category: input.category,
      tags: input.tags ?? [],
      importance: input.importance ?? 0.5,
      confidence: input.confidence ?? 1,
      pinned: input.pinned ?? false,
      userId: input.userId ?? null,
      sourceConversationId: input.sourceConversationId ?? null,
      sourceMessageId: input.sourceMessageId ?? null,
      validFrom: input.validFrom ?? now,
      validUntil: input.validUntil ?? null,
      metadata: input.metadata ?? {},
    })
    const guarded = await this.privacy.guard(
      scope,
      [
        { field: 'content', text: fields.content },
        ...fields.tags.map((text, i) => ({ field: `tags.${i}`, text })),
      ],
      [{ field: 'metadata', value: fields.metadata }],
    )
    const content = guarded.texts[0] as string
    const tags = guarded.texts.slice(1)
    const metadata = guarded.metadata[0] ?? {}
    const { settings } = await this.settings(scope)

    // The vector is computed before the transaction (a remote embedder may be slow); a failure
    // leaves it null: the item is stored anyway and embedded later.
    const [vector] = await this.embeddings.embedTexts(scope, [content])
    const neighbours =
      vector && settings.verificationEnabled
        ? (await this.embeddings.index(scope, 'memory')).search(vector, 10)
        : []

    const result = await this.db.$transaction(async (tx) => {
      // Candidates, not every memory: those sharing content words (see VERIFICATION_LEXICAL_CANDIDATES)
      // and the semantic neighbours, of which only the currently valid ones count.
      const match = ftsMatchExpression(content)
      const sharing = match
        ? await tx.$queryRawUnsafe<{ id: number }[]>(
            `SELECT o."id" AS id FROM "MemorySearch" CROSS JOIN "MemoryItem" o ON o."id" = "MemorySearch"."rowid"
              WHERE "MemorySearch" MATCH ? AND o."agentId" = ? ORDER BY bm25("MemorySearch") LIMIT ?`,
            match,
            scope,
            VERIFICATION_LEXICAL_CANDIDATES,
          )
        : []
      const existingRows = await tx.memoryItem.findMany({
        where: {
          ...this.currentWhere(scope, fields.userId, now),
          id: { in: [...sharing.map((row) => Number(row.id)), ...neighbours.map((n) => Number(n.id))] },
        },
        select: { id: true, content: true, category: true, createdAt: true },
      })
      const current = new Set(existingRows.map((r) => String(r.id)))
      const outcome = verifyMemory(
        { content, category: fields.category },
        existingRows.map((r) => ({
          id: String(r.id),
          content: r.content,
          category: r.category as MemoryCategory,
          createdAt: r.createdAt,
        })),
        // Only currently valid items of the same user count as duplicates.
        neighbours.filter((n) => current.has(n.id)),
        settings,
      )
      if (outcome.kind === 'duplicate') {
        const existing = await tx.memoryItem.findUniqueOrThrow({ where: { id: Number(outcome.of) } })
        return {
          outcome: 'DUPLICATE' as const,
          item: toMemoryItem(existing),
          duplicateOf: toMemoryItem(existing),
          superseded: null,
          layer: outcome.layer,
          similarity: outcome.similarity,
          evicted: [],
        }
      }
      const created = await tx.memoryItem.create({
        data: {
          agentId: scope,
          userId: fields.userId,
          content,
          category: fields.category,
          tags: JSON.stringify(tags),
          importance: fields.importance,
          confidence: fields.confidence,
          pinned: fields.pinned,
          sourceConversationId: fields.sourceConversationId,
          sourceMessageId: fields.sourceMessageId,
          validFrom: fields.validFrom,
          validUntil: fields.validUntil,
          metadata: JSON.stringify(metadata),
          contentHash: contentHash(content),
          tokenCount: this.tokenCounter.count(content),
          createdAt: now,
          updatedAt: now,
        },
      })
      let superseded: MemoryItemView | null = null
      if (outcome.supersedes) {
        superseded = toMemoryItem(
          await tx.memoryItem.update({
            where: { id: Number(outcome.supersedes) },
            data: { validUntil: now, supersededById: created.id, updatedAt: now },
          }),
        )
      }
      const evicted = await this.evictOverLimit(tx, scope, settings, now, created.id)
      return {
        outcome: superseded ? ('SUPERSEDED' as const) : ('STORED' as const),
        item: toMemoryItem(created),
        duplicateOf: null,
        superseded,
        layer: null,
        similarity: outcome.similarity,
        evicted,
      }
    })
    if (result.outcome !== 'DUPLICATE') {
      // The vector was needed for the duplicate check anyway; only a failed one is left to the queue.
      if (vector)
        await this.embeddings.store(scope, 'memory', [{ id: Number(result.item.id), text: content, vector }])
      else await this.embeddings.enqueue(scope, 'memory', [Number(result.item.id)])
    }
    return result
  }

  async update(scope: string, id: string, changes: Partial<MemoryItemInput>): Promise<MemoryItemView> {
    const item = await this.get(scope, id, { track: false })
    const next = this.validate({
      content: changes.content ?? item.content,
      category: changes.category ?? item.category,
      tags: changes.tags ?? item.tags,
      importance: changes.importance ?? item.importance,
      confidence: changes.confidence ?? item.confidence,
      pinned: changes.pinned ?? item.pinned,
      userId: changes.userId !== undefined ? changes.userId : item.userId,
      sourceConversationId: item.sourceConversationId,
      sourceMessageId: item.sourceMessageId,
      validFrom: changes.validFrom ?? item.validFrom,
      validUntil: changes.validUntil !== undefined ? changes.validUntil : item.validUntil,
      metadata: changes.metadata ?? item.metadata,
    })
    const guarded = await this.privacy.guard(
      scope,
      [
        { field: 'content', text: next.content },
        ...next.tags.map((text, i) => ({ field: `tags.${i}`, text })),
      ],
      [{ field: 'metadata', value: next.metadata }],
    )
    const content = guarded.texts[0] as string
    const row = await this.db.memoryItem.update({
      where: { id: Number(item.id) },
      data: {
        content,
        category: next.category,
        tags: JSON.stringify(guarded.texts.slice(1)),
        importance: next.importance,
        confidence: next.confidence,
        pinned: next.pinned,
        userId: next.userId,
        validFrom: next.validFrom,
        validUntil: next.validUntil,
        metadata: JSON.stringify(guarded.metadata[0] ?? {}),
        contentHash: contentHash(content),
        tokenCount: this.tokenCounter.count(content),
        updatedAt: this.clock.now(),
      },
    })
    if (content !== item.content) {
      await this.db.embedding.deleteMany({ where: { kind: 'memory', ownerId: row.id } })
      this.embeddings.forget(scope, 'memory', [row.id])
      // Off the request path, like every write's embedding.
      await this.embeddings.enqueue(scope, 'memory', [row.id])
    }
    return toMemoryItem(row)
  }

  async delete(scope: string, id: string): Promise<MemoryItemView> {
    const item = await this.get(scope, id, { track: false })
    await this.db.memoryItem.delete({ where: { id: Number(item.id) } })
    this.embeddings.forget(scope, 'memory', [Number(item.id)])
    return item
  }

  private currentWhere(scope: string, userId: string | null, now: Date): Prisma.MemoryItemWhereInput {
    return {
      agentId: scope,
      userId,
      validFrom: { lte: now },
      OR: [{ validUntil: null }, { validUntil: { gt: now } }],
    }
  }

  /**
   * Spec 003's maxEntriesPerAgent (0 = unlimited): past it, the least important unpinned items
   * stop being current (validUntil = now). They stay in history; nothing is deleted.
   */
  private async evictOverLimit(
    tx: Transaction,
    scope: string,
    settings: MemorySettings,
    now: Date,
    keepId: number,
  ): Promise<MemoryItemView[]> {
    if (settings.maxEntriesPerAgent === 0) return []
    const where = {
      agentId: scope,
      validFrom: { lte: now },
      OR: [{ validUntil: null }, { validUntil: { gt: now } }],
    }
    const count = await tx.memoryItem.count({ where })
    const excess = count - settings.maxEntriesPerAgent
    if (excess <= 0) return []
    const victims = await tx.memoryItem.findMany({
      where: { ...where, pinned: false, id: { not: keepId } },
      orderBy: [
        { importance: 'asc' },
        { lastAccessedAt: { sort: 'asc', nulls: 'first' } },
        { createdAt: 'asc' },
      ],
      take: excess,
      select: { id: true },
    })
    await tx.memoryItem.updateMany({
      where: { id: { in: victims.map((v) => v.id) } },
      data: { validUntil: now, updatedAt: now },
    })
    const rows = await tx.memoryItem.findMany({ where: { id: { in: victims.map((v) => v.id) } } })
    return rows.map(toMemoryItem)
  }

  private validate(input: Required<Omit<MemoryItemInput, 'metadata'>> & { metadata: Metadata }) {
    const parsed = MemoryFieldsSchema.safeParse(input)
    const issues: FieldIssue[] = parsed.success ? [] : validationErrorFromZod(parsed.error).issues
    if (input.content.length > MAX_MEMORY_CHARS) {
      // zod names the bound; say the length too.
      const issue = issues.find((i) => i.field === 'content')
      if (issue)
        issue.message = `must be at most ${MAX_MEMORY_CHARS} characters (got ${input.content.length})`
    }
    if (input.validUntil && input.validFrom && input.validUntil <= input.validFrom)
      issues.push({ field: 'validUntil', message: 'must be after validFrom' })
    issues.push(...validateMetadata(input.metadata ?? {}, 'metadata', this.limits))
    if (issues.length) throw new ValidationError(issues)
    return { ...(parsed.data as z.infer<typeof MemoryFieldsSchema>), metadata: input.metadata }
  }
}

export function safeJson(text: string): {
  settings?: Record<string, unknown>
  contextBudgets?: Record<string, unknown>
} {
  try {
    const value = JSON.parse(text) as unknown
    return value && typeof value === 'object' ? (value as Record<string, Record<string, unknown>>) : {}
  } catch {
    return {}
  }
}

function dropNulls<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v != null)) as Partial<T>
}

export function parseStoredSettings(text: string): StoredSettings {
  const stored = safeJson(text)
  return {
    settings: parseMemorySettings(stored.settings ?? {}),
    contextBudgets: ContextBudgetsSchema.parse(stored.contextBudgets ?? {}),
  }
}

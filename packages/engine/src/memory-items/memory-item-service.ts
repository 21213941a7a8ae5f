import {
  type Clock,
  type ContextBudgets,
  ContextBudgetsSchema,
  cosineSimilarity,
  type Limits,
  MEMORY_CATEGORIES,
  type MemorySettings,
  type Metadata,
  NotFoundError,
  parseMemorySettings,
  type SupersessionRule,
  type TokenCounter,
  ValidationError,
  VERIFICATION_LEXICAL_CANDIDATES,
  validationErrorFromZod,
  verifyMemory,
} from '@engram/core'
import { contentHash } from '../embeddings/content-hash.ts'
import type {
  MemoryItemOrder,
  MemoryItemQuery,
  MemoryItemRepository,
  MemoryItemView,
} from '../ports/memory-items.ts'
import type { PrivacyService, WriteGuard } from '../privacy/privacy-service.ts'
import type { MemoryEmbeddings } from './collaborators.ts'
import {
  assertMemoryFilter,
  dropNulls,
  type MemoryFilter,
  type MemoryItemInput,
  resolveStoredSettings,
  type StoredSettings,
  validateMemoryFields,
} from './memory-item-rules.ts'

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

/** A memory stored, changed or deleted: what derived data (the generated profile) follows. */
export interface MemoryItemChange {
  kind: 'created' | 'updated' | 'deleted'
  item: MemoryItemView
  /** For an update: the item before it. */
  before?: MemoryItemView
}

/** One write of a batch (`createMany`). */
export interface BatchedMemoryWrite {
  input: MemoryItemInput
  /** An item of the agent this write replaces beyond what verification decides (a model's correction). */
  supersedes?: string | null
}

/** A batch write's outcome: stored (or a duplicate), or refused by a limit or the privacy policy. */
export type BatchedWriteResult =
  | {
      ok: true
      result: MemoryWriteResult
      /** The item named by `supersedes`, when it was superseded (null: gone, pinned or no longer current). */
      alsoSuperseded: MemoryItemView | null
    }
  | { ok: false; error: ValidationError }

/** A write validated and guarded, ready for verification. */
interface PreparedWrite {
  fields: ReturnType<typeof validateMemoryFields>
  content: string
  tags: string[]
  metadata: Metadata
  supersedes: string | null
  /** When it was asked for: its default validFrom and its createdAt, as one write has always had. */
  at: Date
}

/** Semantic neighbours a write's duplicate check compares with. */
const SEMANTIC_NEIGHBOURS = 10

/**
 * The index's neighbours of a vector merged with the batch's memories stored before it (not in the
 * index yet), best first, as many as the index gives: what the index would have answered had they
 * been stored one at a time.
 */
function withBatchNeighbours(
  fromIndex: readonly { id: string; similarity: number }[],
  vector: Float32Array,
  storedBefore: readonly { id: string; vector: Float32Array }[],
): { id: string; similarity: number }[] {
  if (storedBefore.length === 0) return [...fromIndex]
  const batch = storedBefore.map((stored) => ({
    id: stored.id,
    similarity: cosineSimilarity(vector, stored.vector),
  }))
  const ids = new Set(batch.map((hit) => hit.id))
  return [...fromIndex.filter((hit) => !ids.has(hit.id)), ...batch]
    .sort((a, b) => b.similarity - a.similarity)
    .slice(0, SEMANTIC_NEIGHBOURS)
}

export type MemoryItemListener = (scope: string, changes: readonly MemoryItemChange[]) => Promise<void>

/**
 * Long-term memory items: verified on write (spec 003), guarded for sensitive data (spec 001),
 * embedded for search, valid over time (validFrom/validUntil, supersession).
 */
export class MemoryItemService {
  constructor(
    private readonly items: MemoryItemRepository,
    private readonly clock: Clock,
    private readonly tokenCounter: TokenCounter,
    private readonly limits: Limits,
    private readonly privacy: PrivacyService,
    private readonly embeddings: MemoryEmbeddings,
  ) {}

  private readonly listeners: MemoryItemListener[] = []

  /** Called after each write that changed items (not for a duplicate), once the write is committed. */
  onChange(listener: MemoryItemListener): void {
    this.listeners.push(listener)
  }

  private async changed(scope: string, changes: MemoryItemChange[]): Promise<void> {
    for (const listener of this.listeners) await listener(scope, changes)
  }

  // --- settings -------------------------------------------------------------------------------

  async settings(scope: string): Promise<StoredSettings> {
    return resolveStoredSettings(await this.items.settings(scope))
  }

  /** Merges changes into the agent's settings; validated whole, so a bad value changes nothing. */
  async updateSettings(
    scope: string,
    changes: { settings?: Partial<MemorySettings>; contextBudgets?: Partial<ContextBudgets> },
  ): Promise<StoredSettings> {
    const stored = await this.items.settings(scope)
    const nextSettings = { ...(stored.settings ?? {}), ...dropNulls(changes.settings ?? {}) }
    const nextBudgets = { ...(stored.contextBudgets ?? {}), ...dropNulls(changes.contextBudgets ?? {}) }
    parseMemorySettings(nextSettings)
    const budgets = ContextBudgetsSchema.safeParse(nextBudgets)
    if (!budgets.success) throw validationErrorFromZod(budgets.error, 'contextBudgets')
    // Other sections of the stored settings (memory formation's) are kept as they are.
    await this.items.saveSettings(scope, { ...stored, settings: nextSettings, contextBudgets: nextBudgets })
    return this.settings(scope)
  }

  // --- reads ----------------------------------------------------------------------------------

  async get(scope: string, id: string, { track = true } = {}): Promise<MemoryItemView> {
    const row = await this.items.find(scope, id)
    if (!row) throw new NotFoundError('MemoryItem', id)
    if (track) return (await this.recordAccess(scope, [row.id]))[0] ?? row
    return row
  }

  /** An item of the agent, or null, without counting an access (a link followed, not a recall). */
  find(scope: string, id: string): Promise<MemoryItemView | null> {
    return this.items.find(scope, id)
  }

  /** A filter validated and its time resolved (valid now unless it says otherwise). */
  query(filter: MemoryFilter): MemoryItemQuery {
    assertMemoryFilter(filter)
    return {
      userId: filter.userId || null,
      categories: filter.categories?.length ? filter.categories : null,
      tags: filter.tags ?? null,
      minImportance: filter.minImportance ?? null,
      createdAfter: filter.createdAfter || null,
      createdBefore: filter.createdBefore || null,
      validAt: filter.includeSuperseded ? null : (filter.asOf ?? this.clock.now()),
      pinned: filter.pinned ?? null,
      search: filter.search || null,
    }
  }

  /** One page of the agent's memories (every agent's for a null scope) and how many match in all. */
  async list(
    scope: string | null,
    filter: MemoryFilter,
    order: MemoryItemOrder,
  ): Promise<{ totalCount: number; page: (offset: number, limit: number) => Promise<MemoryItemView[]> }> {
    const query = this.query(filter)
    return {
      totalCount: await this.items.count(scope, query),
      page: (offset, limit) => this.items.page(scope, query, order, offset, limit),
    }
  }

  async stats(scope: string) {
    const now = this.clock.now()
    const [figures, coverage] = await Promise.all([
      this.items.figures(scope, now, this.embeddings.model),
      this.embeddings.coverage(scope),
    ])
    const memoryCoverage = coverage.find((c) => c.kind === 'memory')
    return {
      agentId: scope,
      asOf: now,
      total: figures.total,
      current: figures.current,
      superseded: figures.total - figures.current,
      pinned: figures.pinned,
      byCategory: MEMORY_CATEGORIES.map((category) => ({
        category,
        count: figures.byCategory.get(category) ?? 0,
      })),
      storageBytes: figures.contentBytes + figures.vectorBytes,
      vectorBytes: figures.vectorBytes,
      embeddingModel: this.embeddings.model,
      embedded: memoryCoverage?.embedded ?? 0,
      embeddingCoverage:
        memoryCoverage && memoryCoverage.total > 0 ? memoryCoverage.embedded / memoryCoverage.total : 1,
      coverage,
    }
  }

  /** Every access counts (spec 003 access tracking): reads by id, search hits, context inclusion. */
  async recordAccess(scope: string, ids: readonly (number | string)[]): Promise<MemoryItemView[]> {
    if (ids.length === 0) return []
    return this.items.recordAccess(scope, ids.map(String), this.clock.now())
  }

  // --- writes ---------------------------------------------------------------------------------

  /**
   * Stores a memory through the verification pipeline: a near-duplicate (Jaccard) or semantic
   * duplicate (cosine) is not stored and the existing item is returned; a same-category item in
   * the contradiction band is superseded by the new one. All in one transaction. `supersession`:
   * core's rule for the band (`replacement` for memories formed from conversation, see
   * `verifyMemory`); explicit writes keep spec 003's `overlap`.
   */
  async create(
    scope: string,
    input: MemoryItemInput,
    supersession: SupersessionRule = 'overlap',
  ): Promise<MemoryWriteResult> {
    const [written] = await this.createMany(scope, [{ input }], supersession)
    if (!written) throw new Error('createMany returned no result')
    if (!written.ok) throw written.error
    return written.result
  }

  /**
   * Stores several memories as `create` would one after another, each verified against the
   * agent's memories and the ones before it in the batch, with the outcome `create` gives it; but
   * with the settings, privacy policy and semantic index read once, one embedder call, one
   * transaction (all the batch's memories commit or none do), one vector write and one change
   * notice. A write refused by a limit or the privacy policy is returned as its ValidationError
   * and the others still form. `supersedes`: an item the write replaces beyond what verification
   * decides (a model's correction), under `supersede`'s rules.
   */
  async createMany(
    scope: string,
    writes: readonly BatchedMemoryWrite[],
    supersession: SupersessionRule = 'overlap',
  ): Promise<BatchedWriteResult[]> {
    const guard = await this.privacy.guarding(scope)
    const prepared: (PreparedWrite | ValidationError)[] = writes.map(({ input, supersedes }) => {
      try {
        return this.prepare(input, guard, supersedes ?? null)
      } catch (error) {
        if (error instanceof ValidationError) return error
        throw error
      }
    })
    const accepted = prepared.filter((write): write is PreparedWrite => !(write instanceof ValidationError))
    if (accepted.length === 0)
      return prepared.map((error) => ({ ok: false, error: error as ValidationError }))
    const { settings } = await this.settings(scope)

    // Vectors are computed before the transaction (a remote embedder may be slow); a failed one is
    // null: its item is stored anyway and embedded later.
    const vectors = await this.embeddings.embedTexts(
      scope,
      accepted.map((write) => write.content),
    )
    const index =
      settings.verificationEnabled && vectors.some((vector) => vector)
        ? await this.embeddings.index(scope, 'memory')
        : null
    const searched = accepted.map((_, i) => {
      const vector = vectors[i]
      return vector && index ? index.search(vector, SEMANTIC_NEIGHBOURS) : []
    })

    const results = await this.items.transaction(async (items) => {
      // The batch's stored memories, which the index does not hold yet: a later write of the batch
      // compares with them too, as it would have once they were stored and indexed one by one.
      const storedBefore: { id: string; vector: Float32Array }[] = []
      const out: MemoryWriteResult[] = []
      const alsoSuperseded: (MemoryItemView | null)[] = []
      for (const [i, write] of accepted.entries()) {
        const vector = vectors[i] ?? null
        const neighbours =
          vector && index ? withBatchNeighbours(searched[i] ?? [], vector, storedBefore) : (searched[i] ?? [])
        const result = await this.verifyAndWrite(items, scope, write, neighbours, settings, supersession)
        out.push(result)
        let replaced: MemoryItemView | null = null
        if (result.outcome !== 'DUPLICATE') {
          if (vector) storedBefore.push({ id: result.item.id, vector })
          if (write.supersedes && write.supersedes !== result.superseded?.id)
            replaced = await this.supersedeIn(
              items,
              scope,
              write.supersedes,
              result.item.id,
              this.clock.now(),
            )
        }
        alsoSuperseded.push(replaced)
      }
      return { out, alsoSuperseded }
    })

    const toStore: { id: number; text: string; vector: Float32Array }[] = []
    const toQueue: number[] = []
    const changes: MemoryItemChange[] = []
    for (const [i, result] of results.out.entries()) {
      if (result.outcome === 'DUPLICATE') continue
      const write = accepted[i] as PreparedWrite
      // The vector was needed for the duplicate check anyway; only a failed one is left to the queue.
      const vector = vectors[i]
      if (vector) toStore.push({ id: Number(result.item.id), text: write.content, vector })
      else toQueue.push(Number(result.item.id))
      changes.push(
        { kind: 'created', item: result.item },
        ...(result.superseded ? [{ kind: 'updated' as const, item: result.superseded }] : []),
        ...result.evicted.map((item) => ({ kind: 'updated' as const, item })),
      )
    }
    if (toStore.length > 0) await this.embeddings.store(scope, 'memory', toStore)
    if (toQueue.length > 0) await this.embeddings.enqueue(scope, 'memory', toQueue)
    if (changes.length > 0) await this.changed(scope, changes)

    let next = 0
    return prepared.map((write) => {
      if (write instanceof ValidationError) return { ok: false, error: write }
      const i = next++
      return {
        ok: true,
        result: results.out[i] as MemoryWriteResult,
        alsoSuperseded: results.alsoSuperseded[i] ?? null,
      }
    })
  }

  /** A write's fields validated and guarded by the privacy policy; throws ValidationError. */
  private prepare(input: MemoryItemInput, guard: WriteGuard, supersedes: string | null): PreparedWrite {
    const at = this.clock.now()
    const fields = validateMemoryFields(
      {
        content: input.content,
        category: input.category,
        tags: input.tags ?? [],
        importance: input.importance ?? 0.5,
        confidence: input.confidence ?? 1,
        pinned: input.pinned ?? false,
        userId: input.userId ?? null,
        sourceConversationId: input.sourceConversationId ?? null,
        sourceMessageId: input.sourceMessageId ?? null,
        validFrom: input.validFrom ?? at,
        validUntil: input.validUntil ?? null,
        metadata: input.metadata ?? {},
      },
      this.limits,
    )
    const guarded = guard(
      [
        { field: 'content', text: fields.content },
        ...fields.tags.map((text, i) => ({ field: `tags.${i}`, text })),
      ],
      [{ field: 'metadata', value: fields.metadata }],
    )
    return {
      fields,
      content: guarded.texts[0] as string,
      tags: guarded.texts.slice(1),
      metadata: guarded.metadata[0] ?? {},
      supersedes,
      at,
    }
  }

  /** One write's verification and, unless it is a duplicate, its row, supersession and evictions. */
  private async verifyAndWrite(
    items: MemoryItemRepository,
    scope: string,
    write: PreparedWrite,
    neighbours: readonly { id: string; similarity: number }[],
    settings: MemorySettings,
    supersession: SupersessionRule,
  ): Promise<MemoryWriteResult> {
    const now = write.at
    const { fields, content } = write
    // Candidates, not every memory: those sharing content words (see VERIFICATION_LEXICAL_CANDIDATES)
    // and the semantic neighbours, of which only the currently valid ones count.
    const sharing = await items.sharingWords(scope, content, VERIFICATION_LEXICAL_CANDIDATES)
    const existing = await items.currentAmong(scope, fields.userId, now, [
      ...sharing,
      ...neighbours.map((n) => n.id),
    ])
    const current = new Set(existing.map((r) => r.id))
    const outcome = verifyMemory(
      { content, category: fields.category },
      existing,
      // Only currently valid items of the same user count as duplicates.
      neighbours.filter((n) => current.has(n.id)),
      settings,
      supersession,
    )
    if (outcome.kind === 'duplicate') {
      const duplicate = await items.find(scope, outcome.of)
      if (!duplicate) throw new NotFoundError('MemoryItem', outcome.of)
      return {
        outcome: 'DUPLICATE',
        item: duplicate,
        duplicateOf: duplicate,
        superseded: null,
        layer: outcome.layer,
        similarity: outcome.similarity,
        evicted: [],
      }
    }
    const created = await items.create(scope, {
      userId: fields.userId,
      content,
      category: fields.category,
      tags: write.tags,
      importance: fields.importance,
      confidence: fields.confidence,
      pinned: fields.pinned,
      sourceConversationId: fields.sourceConversationId,
      sourceMessageId: fields.sourceMessageId,
      validFrom: fields.validFrom,
      validUntil: fields.validUntil,
      metadata: write.metadata,
      contentHash: contentHash(content),
      tokenCount: this.tokenCounter.count(content),
      createdAt: now,
    })
    const superseded = outcome.supersedes
      ? await items.supersede(scope, outcome.supersedes, created.id, now)
      : null
    const evicted = await this.evictOverLimit(items, scope, settings, now, created.id)
    return {
      outcome: superseded ? 'SUPERSEDED' : 'STORED',
      item: created,
      duplicateOf: null,
      superseded,
      layer: null,
      similarity: outcome.similarity,
      evicted,
    }
  }

  /**
   * Ends a current item's validity in favour of another of the agent's items (an extraction that
   * corrects what was known). Null when the item is gone, already superseded or expired, or pinned:
   * a user override is never replaced by automatic formation.
   */
  async supersede(scope: string, id: string, byId: string): Promise<MemoryItemView | null> {
    const now = this.clock.now()
    return this.items.transaction((items) => this.supersedeIn(items, scope, id, byId, now))
  }

  private async supersedeIn(
    items: MemoryItemRepository,
    scope: string,
    id: string,
    byId: string,
    now: Date,
  ): Promise<MemoryItemView | null> {
    const [item, by] = [await items.find(scope, id), await items.find(scope, byId)]
    if (!item || !by || item.id === by.id || item.pinned || item.supersededById !== null) return null
    if (item.validUntil !== null && item.validUntil <= now) return null
    return items.supersede(scope, id, byId, now)
  }

  async update(scope: string, id: string, changes: Partial<MemoryItemInput>): Promise<MemoryItemView> {
    const item = await this.get(scope, id, { track: false })
    const next = validateMemoryFields(
      {
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
      },
      this.limits,
    )
    const guarded = await this.privacy.guard(
      scope,
      [
        { field: 'content', text: next.content },
        ...next.tags.map((text, i) => ({ field: `tags.${i}`, text })),
      ],
      [{ field: 'metadata', value: next.metadata }],
    )
    const content = guarded.texts[0] as string
    const row = await this.items.update(scope, item.id, {
      content,
      category: next.category,
      tags: guarded.texts.slice(1),
      importance: next.importance,
      confidence: next.confidence,
      pinned: next.pinned,
      userId: next.userId,
      validFrom: next.validFrom,
      validUntil: next.validUntil,
      metadata: guarded.metadata[0] ?? {},
      contentHash: contentHash(content),
      tokenCount: this.tokenCounter.count(content),
      updatedAt: this.clock.now(),
    })
    if (content !== item.content) {
      await this.items.discardVectors(scope, row.id)
      this.embeddings.forget(scope, 'memory', [Number(row.id)])
      // Off the request path, like every write's embedding.
      await this.embeddings.enqueue(scope, 'memory', [Number(row.id)])
    }
    await this.changed(scope, [{ kind: 'updated', item: row, before: item }])
    return row
  }

  async delete(scope: string, id: string): Promise<MemoryItemView> {
    const item = await this.get(scope, id, { track: false })
    await this.items.delete(scope, item.id)
    this.embeddings.forget(scope, 'memory', [Number(item.id)])
    await this.changed(scope, [{ kind: 'deleted', item }])
    return item
  }

  /**
   * Spec 003's maxEntriesPerAgent (0 = unlimited): past it, the least important unpinned items
   * stop being current (validUntil = now). They stay in history; nothing is deleted.
   */
  private async evictOverLimit(
    items: MemoryItemRepository,
    scope: string,
    settings: MemorySettings,
    now: Date,
    keepId: string,
  ): Promise<MemoryItemView[]> {
    if (settings.maxEntriesPerAgent === 0) return []
    const excess = (await items.countCurrent(scope, now)) - settings.maxEntriesPerAgent
    if (excess <= 0) return []
    return items.expireLeastValued(scope, now, keepId, excess)
  }
}

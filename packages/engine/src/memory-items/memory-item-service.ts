import {
  type Clock,
  type ContextBudgets,
  ContextBudgetsSchema,
  type Limits,
  MEMORY_CATEGORIES,
  type MemorySettings,
  NotFoundError,
  parseMemorySettings,
  type SupersessionRule,
  type TokenCounter,
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
import type { PrivacyService } from '../privacy/privacy-service.ts'
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
    const now = this.clock.now()
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
        validFrom: input.validFrom ?? now,
        validUntil: input.validUntil ?? null,
        metadata: input.metadata ?? {},
      },
      this.limits,
    )
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
        ? await (await this.embeddings.index(scope, 'memory')).search(vector, 10)
        : []

    const result = await this.items.transaction(async (items) => {
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
          outcome: 'DUPLICATE' as const,
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
        tags,
        importance: fields.importance,
        confidence: fields.confidence,
        pinned: fields.pinned,
        sourceConversationId: fields.sourceConversationId,
        sourceMessageId: fields.sourceMessageId,
        validFrom: fields.validFrom,
        validUntil: fields.validUntil,
        metadata,
        contentHash: contentHash(content),
        tokenCount: this.tokenCounter.count(content),
        createdAt: now,
      })
      const superseded = outcome.supersedes
        ? await items.supersede(scope, outcome.supersedes, created.id, now)
        : null
      const evicted = await this.evictOverLimit(items, scope, settings, now, created.id)
      return {
        outcome: superseded ? ('SUPERSEDED' as const) : ('STORED' as const),
        item: created,
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
      await this.changed(scope, [
        { kind: 'created', item: result.item },
        ...(result.superseded ? [{ kind: 'updated' as const, item: result.superseded }] : []),
        ...result.evicted.map((item) => ({ kind: 'updated' as const, item })),
      ])
    }
    return result
  }

  /**
   * Ends a current item's validity in favour of another of the agent's items (an extraction that
   * corrects what was known). Null when the item is gone, already superseded or expired, or pinned:
   * a user override is never replaced by automatic formation.
   */
  async supersede(scope: string, id: string, byId: string): Promise<MemoryItemView | null> {
    const now = this.clock.now()
    return this.items.transaction(async (items) => {
      const [item, by] = [await items.find(scope, id), await items.find(scope, byId)]
      if (!item || !by || item.id === by.id || item.pinned || item.supersededById !== null) return null
      if (item.validUntil !== null && item.validUntil <= now) return null
      return items.supersede(scope, id, byId, now)
    })
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

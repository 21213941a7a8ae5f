import type { MemoryCategory, Metadata } from '@engram/core'

/** A long-term memory item (spec 003) as stored. */
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

export interface NewMemoryItem {
  userId: string | null
  content: string
  category: MemoryCategory
  tags: string[]
  importance: number
  confidence: number
  pinned: boolean
  sourceConversationId: string | null
  sourceMessageId: string | null
  validFrom: Date
  validUntil: Date | null
  metadata: Metadata
  /** The content's fingerprint, compared by imports and the embedding jobs. */
  contentHash: string
  tokenCount: number
  createdAt: Date
}

export type MemoryItemChanges = Omit<
  NewMemoryItem,
  'sourceConversationId' | 'sourceMessageId' | 'createdAt'
> & { updatedAt: Date }

/** Which items a read sees, already validated and with its time resolved. */
export interface MemoryItemQuery {
  userId?: string | null
  categories?: readonly MemoryCategory[] | null
  /** Items carrying every one of these tags. */
  tags?: readonly string[] | null
  minImportance?: number | null
  createdAfter?: Date | null
  createdBefore?: Date | null
  /** Only items valid at this time; null includes superseded and expired ones. */
  validAt: Date | null
  pinned?: boolean | null
  /** A substring of the content. */
  search?: string | null
}

export type MemoryItemOrder = 'createdAt' | 'updatedAt' | 'importance' | 'lastAccessedAt' | 'accessCount'

/** What a write's verification compares the new content against. */
export interface VerificationCandidate {
  id: string
  content: string
  category: MemoryCategory
  createdAt: Date
}

/** An agent's memory figures for its stats. */
export interface MemoryItemFigures {
  total: number
  current: number
  pinned: number
  /** Current items per category (categories without any are absent). */
  byCategory: Map<string, number>
  /** Bytes of content, tags and metadata of every item. */
  contentBytes: number
  /** Bytes of the items' vectors of the given embedding model. */
  vectorBytes: number
}

/** The agent's memory settings as stored: only what differs from the defaults. */
export interface StoredMemorySettings {
  settings?: Record<string, unknown>
  contextBudgets?: Record<string, unknown>
  /** Automatic summaries' settings (core's SummarySettingsSchema), only what differs from the defaults. */
  summaries?: Record<string, unknown>
  /** The generated profile's settings (core's ProfileSettingsSchema), only what differs from the defaults. */
  profile?: Record<string, unknown>
  /** Automatic memory formation's settings (FormationSettingsSchema), only what differs from the defaults. */
  formation?: Record<string, unknown>
  /** Maintenance's per-agent overrides (core's AgentMaintenanceSettingsSchema: retentionDays). */
  maintenance?: Record<string, unknown>
}

/**
 * Memory items of one agent at a time (a null agent in a list means every agent: an admin's
 * view, which leaves pools' storage agents out). Ids that are not the adapter's row ids find nothing rather than throwing.
 */
export interface MemoryItemRepository {
  /** Runs `fn` with this repository bound to one transaction: verification reads and the writes they decide. */
  transaction<T>(fn: (items: MemoryItemRepository) => Promise<T>): Promise<T>
  /** The agent's stored settings ({} when none or unreadable). */
  settings(agentId: string): Promise<StoredMemorySettings>
  saveSettings(agentId: string, stored: StoredMemorySettings): Promise<void>
  find(agentId: string, id: string): Promise<MemoryItemView | null>
  /** One more access for each item, at `at`; the items after it, in the order asked. */
  recordAccess(agentId: string, ids: readonly string[], at: Date): Promise<MemoryItemView[]>
  count(agentId: string | null, query: MemoryItemQuery): Promise<number>
  /** Newest-first by the order (never-accessed last), ties by id descending. */
  page(
    agentId: string | null,
    query: MemoryItemQuery,
    order: MemoryItemOrder,
    offset: number,
    limit: number,
  ): Promise<MemoryItemView[]>
  figures(agentId: string, at: Date, embeddingModel: string): Promise<MemoryItemFigures>
  /**
   * The ids of the agent's items sharing words with the text, best lexical match first: the
   * verification pipeline compares a write with these rather than with every memory.
   */
  sharingWords(agentId: string, text: string, limit: number): Promise<string[]>
  /** Of these ids, the items currently valid for the user (null: items without a user). */
  currentAmong(
    agentId: string,
    userId: string | null,
    at: Date,
    ids: readonly string[],
  ): Promise<VerificationCandidate[]>
  create(agentId: string, item: NewMemoryItem): Promise<MemoryItemView>
  /** Ends an item's validity at `at`, naming the item that replaces it. */
  supersede(agentId: string, id: string, byId: string, at: Date): Promise<MemoryItemView>
  /** How many of the agent's items are valid at `at` (spec 003's maxEntriesPerAgent counts these). */
  countCurrent(agentId: string, at: Date): Promise<number>
  /**
   * Ends the validity of up to `limit` current unpinned items other than `keepId`, the least
   * valuable first: lowest importance, then longest unused (never accessed first), then oldest.
   */
  expireLeastValued(agentId: string, at: Date, keepId: string, limit: number): Promise<MemoryItemView[]>
  update(agentId: string, id: string, changes: MemoryItemChanges): Promise<MemoryItemView>
  delete(agentId: string, id: string): Promise<void>
  /** Drops the item's stored vectors (of every model): its content changed, they describe the old one. */
  discardVectors(agentId: string, id: string): Promise<void>
}

/** Where something of an agent can remain. */
export type StoreKind = 'TABLE' | 'FULL_TEXT' | 'FILE' | 'CACHE' | 'QUEUE'

export interface StoreRemainder {
  store: string
  kind: StoreKind
  count: number
}

/**
 * The end of an agent's data in the store, below the rows: deleting rows is the repositories'
 * business, but what a deletion leaves physically (index segments still holding deleted terms,
 * stale page images, a log of older pages) is the adapter's, and so is knowing every place an
 * agent's data can sit. The engine asks for the purge and the count, and knows no storage words.
 */
export interface AgentDataStore {
  /**
   * After an agent's rows were deleted or replaced in bulk (every agent's when none is named):
   * erases what the store still keeps of them physically, so no byte of deleted text remains.
   */
  purge(agentId?: string): Promise<void>
  /**
   * What remains of an agent in every durable store the adapter has (one entry per store, zero
   * counts included, so a report lists them all); every count is zero once it is deleted.
   */
  remains(agentId: string): Promise<StoreRemainder[]>
  /** The agents that exist: what derived files of other ids are swept against. */
  agentIds(): Promise<string[]>
}

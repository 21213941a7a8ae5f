/**
 * The VectorStore port: an agent's vectors of one kind (messages, memories, knowledge), durable,
 * searched by cosine similarity. Adapters keep whatever index they like (an exact scan, HNSW files,
 * pgvector) in step; the engine only sees top-k. Every call names the agent: a search never
 * returns another tenant's vector.
 */
export interface VectorHit {
  id: string
  similarity: number
}

export interface StoredVector {
  id: string
  vector: Float32Array
  /**
   * The hash of the text the vector was computed from: a later embedding of the same text needs
   * nothing, and a saved index tells the vectors it holds that went stale.
   */
  contentHash?: string
}

/**
 * What the hot search paths search: an adapter's in-process index (answering at once, as often
 * as they like without a round trip) or a handle on the store's own search (pgvector answers in
 * SQL), so `search` may return a promise. `size` and `dimensions` are as of when it was handed out.
 */
export interface SearchableVectors {
  readonly dimensions: number | null
  readonly size: number
  search(query: Float32Array, limit: number): VectorHit[] | Promise<VectorHit[]>
}

/** What the engine knows about an agent's change history, so an adapter can skip re-checking. */
export interface SearchIndexOptions {
  /**
   * Changes whenever this process wrote the agent's data (AgentWrites.version); null when unknown.
   * While it (and whatever the adapter sees of other writers) stays the same, the index held in
   * memory is current without a query.
   */
  writeVersion: string | null
  /**
   * Runs only when something may have changed since the index was last checked, before the
   * adapter compares it with the stored vectors: the engine embeds what is still missing there
   * (a local embedder), so a search with nothing new pays for neither.
   */
  catchUp?: () => Promise<unknown>
}

export interface VectorStore {
  /**
   * Stores or replaces vectors. All vectors of one (agent, kind) share their dimensions: a vector
   * of other dimensions is rejected with a ValidationError naming `vector` and the expected size.
   */
  upsert(agentId: string, kind: string, vectors: readonly StoredVector[]): Promise<void>
  remove(agentId: string, kind: string, ids: readonly string[]): Promise<number>
  /** The `limit` most similar vectors, best first (ties by id). */
  topK(agentId: string, kind: string, query: Float32Array, limit: number): Promise<VectorHit[]>
  count(agentId: string, kind: string): Promise<number>
  /** The dimensions of the agent's vectors of that kind, or null before the first one. */
  dimensions(agentId: string, kind: string): Promise<number | null>
  /**
   * The (agent, kind) vectors ready for the hot search paths, brought up to date with the stored
   * vectors (an in-process index) or searched where they are stored (SQL). How it is kept (exact,
   * HNSW, saved graphs, pgvector) is the adapter's business.
   */
  searchIndex(agentId: string, kind: string, options: SearchIndexOptions): Promise<SearchableVectors>
  /**
   * The owners were deleted and their vectors with them (a trigger, a cascade): drops them from
   * what the adapter holds in memory, without another write.
   */
  forget(agentId: string, kind: string, ids: readonly string[]): void
  /**
   * Forgets what is held in memory for an agent (every agent when none is named) after its rows
   * were deleted or replaced (a deleted agent, a restore): nothing of it may serve a search again,
   * nor be persisted by background work still under way.
   */
  reset(agentId?: string): void
  /** How many (agent, kind) indexes are held in memory (or loading) for the agent. */
  held(agentId: string): number
  /**
   * What the adapter persisted for the agent besides its rows (saved index graphs, as paths or
   * names), of any model: the deletion report lists them, and they must go with the agent.
   */
  persisted(agentId: string): string[]
  /** Removes what persisted() lists, for the agent or every agent; returns how many. */
  removePersisted(agentId?: string): number
  /** Removes persisted indexes of agents not in the list (deleted while one was written). */
  removeOrphans(agentIds: readonly string[]): number
  /** Resolves when background index work (builds, saves) has finished. */
  settled(): Promise<void>
  /** At shutdown: abandons long builds, waits for the rest, persists unsaved changes. */
  flush(): Promise<void>
}

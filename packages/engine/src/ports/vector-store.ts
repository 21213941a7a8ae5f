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
}

import type { SearchableVectors } from '../ports/vector-store.ts'

/**
 * What the memory-item use cases call on the embedding service, which lives in apps/api until the
 * embeddings group moves it (its class satisfies this structurally). Owner ids are row numbers
 * there; the duplicate check's neighbours come back with string ids.
 */
export interface MemoryEmbeddings {
  /** The model whose vectors count (stats report its coverage and bytes). */
  readonly model: string
  /** Vectors for the agent's texts; null where the embedder failed. */
  embedTexts(agentId: string, texts: readonly string[]): Promise<(Float32Array | null)[]>
  /** The agent's memory index, for the semantic duplicate check. */
  index(agentId: string, kind: 'memory'): Promise<Pick<SearchableVectors, 'search'>>
  /** Stores vectors already computed (or computes them) for owners. */
  store(
    agentId: string,
    kind: 'memory',
    owners: { id: number; text: string; vector?: Float32Array }[],
  ): Promise<number>
  /** Queues owners to be embedded off the request path. */
  enqueue(agentId: string, kind: 'memory', ownerIds: readonly number[]): Promise<void>
  /** Drops owners from the in-memory index (their rows are gone or stale). */
  forget(agentId: string, kind: 'memory', ownerIds: readonly (number | string)[]): void
  /** Per kind: how many rows there are and how many have a vector of the current model. */
  coverage(agentId: string | null): Promise<MemoryEmbeddingCoverage[]>
}

/** One kind's coverage as the embedding service reports it (stats pass it on whole). */
export interface MemoryEmbeddingCoverage {
  kind: string
  total: number
  embedded: number
  queued: number
  failed: number
}

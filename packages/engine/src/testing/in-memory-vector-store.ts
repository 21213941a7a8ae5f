import { ExactVectorIndex, type VectorIndex } from '@engram/core'
import type {
  SearchableVectors,
  SearchIndexOptions,
  StoredVector,
  VectorHit,
  VectorStore,
} from '../ports/vector-store.ts'
import { assertDimensions } from '../vectors/dimensions.ts'

/**
 * The VectorStore port in memory: one exact index per (agent, kind), of one model's vectors.
 * Nothing is persisted beside it, and nothing runs in the background.
 */
export class InMemoryVectorStore implements VectorStore {
  private readonly indexes = new Map<string, VectorIndex>()
  /** The content hash each vector was stored with, by (agent, kind) and id. */
  private readonly hashes = new Map<string, Map<string, string>>()

  constructor(readonly model = 'vector-store') {}

  async upsert(agentId: string, kind: string, vectors: readonly StoredVector[]): Promise<void> {
    const index = this.index(agentId, kind)
    // Checked before the first write, so a bad batch changes nothing.
    for (const { vector } of vectors)
      assertDimensions(index.size > 0 ? index.dimensions : (vectors[0]?.vector.length ?? null), vector)
    const hashes = this.hashesOf(agentId, kind)
    for (const { id, vector, contentHash } of vectors) {
      index.upsert(id, vector)
      hashes.set(id, contentHash ?? '')
    }
  }

  async remove(agentId: string, kind: string, ids: readonly string[]): Promise<number> {
    const index = this.index(agentId, kind)
    const hashes = this.hashesOf(agentId, kind)
    let removed = 0
    for (const id of ids) {
      hashes.delete(id)
      if (index.remove(id)) removed++
    }
    return removed
  }

  async topK(agentId: string, kind: string, query: Float32Array, limit: number): Promise<VectorHit[]> {
    const index = this.index(agentId, kind)
    if (index.size === 0) return []
    assertDimensions(index.dimensions, query, 'query')
    return index.search(query, limit)
  }

  async count(agentId: string, kind: string): Promise<number> {
    return this.index(agentId, kind).size
  }

  async dimensions(agentId: string, kind: string): Promise<number | null> {
    const index = this.index(agentId, kind)
    return index.size > 0 ? index.dimensions : null
  }

  async searchIndex(agentId: string, kind: string, options: SearchIndexOptions): Promise<SearchableVectors> {
    // No version to compare: the vectors live here, so catching up is the only work.
    if (options.catchUp) await options.catchUp()
    return this.index(agentId, kind)
  }

  /** The rows are the index here: the owner's deletion has to take its vector along. */
  forget(agentId: string, kind: string, ids: readonly string[]): void {
    void this.remove(agentId, kind, ids)
  }

  /** Nothing here is derived from a durable copy, so there is nothing to drop. */
  reset(): void {}

  /** No index here is derived from a durable copy: the vectors themselves are the store. */
  held(): number {
    return 0
  }

  persisted(): string[] {
    return []
  }

  removePersisted(): number {
    return 0
  }

  removeOrphans(): number {
    return 0
  }

  async settled(): Promise<void> {}

  async flush(): Promise<void> {}

  /** The content hash the owner's vector was stored with; undefined when it has none. */
  contentHashOf(agentId: string, kind: string, id: string): string | undefined {
    return this.hashes.get(`${agentId}\u0000${kind}`)?.get(id)
  }

  /** How many vectors are stored, of every agent and kind. */
  total(): number {
    let total = 0
    for (const index of this.indexes.values()) total += index.size
    return total
  }

  /** Drops every vector; returns how many there were. */
  clear(): number {
    const removed = this.total()
    this.indexes.clear()
    this.hashes.clear()
    return removed
  }

  private hashesOf(agentId: string, kind: string): Map<string, string> {
    const key = `${agentId}\u0000${kind}`
    let hashes = this.hashes.get(key)
    if (!hashes) {
      hashes = new Map()
      this.hashes.set(key, hashes)
    }
    return hashes
  }

  private index(agentId: string, kind: string): VectorIndex {
    const key = `${agentId}\u0000${kind}`
    let index = this.indexes.get(key)
    if (!index) {
      index = new ExactVectorIndex()
      this.indexes.set(key, index)
    }
    return index
  }
}

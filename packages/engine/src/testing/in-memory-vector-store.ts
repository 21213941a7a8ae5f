import { ExactVectorIndex, type VectorIndex } from '@engram/core'
import type { StoredVector, VectorHit, VectorStore } from '../ports/vector-store.ts'
import { assertDimensions } from '../vectors/dimensions.ts'

/** The VectorStore port in memory: one exact index per (agent, kind). */
export class InMemoryVectorStore implements VectorStore {
  private readonly indexes = new Map<string, VectorIndex>()

  async upsert(agentId: string, kind: string, vectors: readonly StoredVector[]): Promise<void> {
    const index = this.index(agentId, kind)
    // Checked before the first write, so a bad batch changes nothing.
    for (const { vector } of vectors)
      assertDimensions(index.size > 0 ? index.dimensions : (vectors[0]?.vector.length ?? null), vector)
    for (const { id, vector } of vectors) index.upsert(id, vector)
  }

  async remove(agentId: string, kind: string, ids: readonly string[]): Promise<number> {
    const index = this.index(agentId, kind)
    let removed = 0
    for (const id of ids) if (index.remove(id)) removed++
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

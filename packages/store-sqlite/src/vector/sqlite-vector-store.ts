import {
  bytesToVector,
  type Clock,
  ExactVectorIndex,
  ValidationError,
  type VectorIndex,
  vectorToBytes,
} from '@engram/core'
import { assertDimensions, type StoredVector, type VectorHit, type VectorStore } from '@engram/engine'
import type { Database } from '../db/client.ts'
import { parseRowId } from '../mappers.ts'

/**
 * The VectorStore port on the `Embedding` table: rows are the durable copy (keyed by kind, owner
 * row id and model), an exact index per (agent, kind) loaded on first search is kept in step with
 * this process's writes. Ids are the owners' row ids, unique across agents, as the table's key
 * requires. `model` separates the vectors of two embedders (they are never compared).
 */
export class SqliteVectorStore implements VectorStore {
  private readonly indexes = new Map<string, VectorIndex>()

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly model: string,
  ) {}

  async upsert(agentId: string, kind: string, vectors: readonly StoredVector[]): Promise<void> {
    if (vectors.length === 0) return
    const expected = (await this.dimensions(agentId, kind)) ?? vectors[0]?.vector.length ?? null
    // Checked before the first write, so a bad batch changes nothing.
    for (const { vector } of vectors) assertDimensions(expected, vector)
    const rows = vectors.map(({ id, vector }) => ({ ownerId: this.ownerId(id), vector }))
    const createdAt = this.clock.now()
    await this.db.$transaction(async (tx) => {
      for (const { ownerId, vector } of rows) {
        const data = {
          agentId,
          dimensions: vector.length,
          vector: new Uint8Array(vectorToBytes(vector)),
          contentHash: '',
          createdAt,
        }
        await tx.embedding.upsert({
          where: { kind_ownerId_model: { kind, ownerId, model: this.model } },
          create: { kind, ownerId, model: this.model, ...data },
          update: data,
        })
      }
    })
    const index = this.indexes.get(this.key(agentId, kind))
    for (const { id, vector } of vectors) index?.upsert(id, vector)
  }

  async remove(agentId: string, kind: string, ids: readonly string[]): Promise<number> {
    const ownerIds = ids.flatMap((id) => parseRowId(id) ?? [])
    const { count } = await this.db.embedding.deleteMany({
      where: { agentId, kind, model: this.model, ownerId: { in: ownerIds } },
    })
    const index = this.indexes.get(this.key(agentId, kind))
    for (const id of ids) index?.remove(id)
    return count
  }

  async topK(agentId: string, kind: string, query: Float32Array, limit: number): Promise<VectorHit[]> {
    const index = await this.index(agentId, kind)
    if (index.size === 0) return []
    assertDimensions(index.dimensions, query, 'query')
    return index.search(query, limit)
  }

  async count(agentId: string, kind: string): Promise<number> {
    return this.db.embedding.count({ where: { agentId, kind, model: this.model } })
  }

  async dimensions(agentId: string, kind: string): Promise<number | null> {
    const row = await this.db.embedding.findFirst({
      where: { agentId, kind, model: this.model },
      select: { dimensions: true },
    })
    return row?.dimensions ?? null
  }

  /** Forgets loaded indexes (another process wrote, or rows were deleted in bulk). */
  invalidate(agentId: string | null): void {
    if (agentId === null) this.indexes.clear()
    else
      for (const key of [...this.indexes.keys()])
        if (key.startsWith(`${agentId}\u0000`)) this.indexes.delete(key)
  }

  private async index(agentId: string, kind: string): Promise<VectorIndex> {
    const key = this.key(agentId, kind)
    const cached = this.indexes.get(key)
    if (cached) return cached
    const index = new ExactVectorIndex()
    const rows = await this.db.embedding.findMany({
      where: { agentId, kind, model: this.model },
      select: { ownerId: true, vector: true },
    })
    for (const row of rows) index.upsert(String(row.ownerId), bytesToVector(row.vector))
    this.indexes.set(key, index)
    return index
  }

  private ownerId(id: string): number {
    const ownerId = parseRowId(id)
    if (ownerId == null)
      throw new ValidationError([{ field: 'id', message: "must be the row id of the vector's owner" }])
    return ownerId
  }

  private key(agentId: string, kind: string): string {
    return `${agentId}\u0000${kind}`
  }
}

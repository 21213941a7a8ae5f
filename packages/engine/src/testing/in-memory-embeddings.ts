import type {
  CachedVector,
  EmbeddingKind,
  EmbeddingRepository,
  OwnerText,
  OwnerToFill,
} from '../ports/embeddings.ts'
import type { JobQueue } from '../ports/job-queue.ts'
import type { InMemoryVectorStore } from './in-memory-vector-store.ts'

/**
 * The EmbeddingRepository port in memory. The in-memory store has no tables of memory items,
 * messages or knowledge yet, so the owners to embed are handed to it (`putOwners`); their vectors
 * are the in-memory vector store's, which holds one model's.
 */
export class InMemoryEmbeddingRepository implements EmbeddingRepository {
  private readonly owners = new Map<EmbeddingKind, Map<number, { agentId: string; text: string }>>()
  private readonly cachedVectors = new Map<string, CachedVector>()

  constructor(
    private readonly vectors: InMemoryVectorStore,
    private readonly jobs: JobQueue,
  ) {}

  /** Owners as their own tables would hold them (ids unique per kind, growing). */
  putOwners(kind: EmbeddingKind, owners: readonly { id: number; agentId: string; text: string }[]): void {
    const table = this.table(kind)
    for (const { id, agentId, text } of owners) table.set(id, { agentId, text })
  }

  /** Owners whose rows were deleted. */
  removeOwners(kind: EmbeddingKind, ids: readonly number[]): void {
    const table = this.table(kind)
    for (const id of ids) table.delete(id)
  }

  async ownerTexts(kind: EmbeddingKind, model: string, ownerIds: readonly number[]): Promise<OwnerText[]> {
    const table = this.table(kind)
    return ownerIds.flatMap((id) => {
      const owner = table.get(id)
      return owner ? [{ id, ...owner, embeddedHash: this.embeddedHash(kind, model, id, owner.agentId) }] : []
    })
  }

  async missing(
    agentId: string | null,
    kind: EmbeddingKind,
    model: string,
    limit: number,
    afterId: number,
  ): Promise<OwnerToFill[]> {
    return this.unembedded(agentId, kind, model)
      .filter((owner) => owner.id > afterId)
      .slice(0, limit)
  }

  async coverage(
    agentId: string | null,
    kind: EmbeddingKind,
    model: string,
  ): Promise<{ total: number; embedded: number }> {
    const total = [...this.table(kind).values()].filter((o) => !agentId || o.agentId === agentId).length
    return { total, embedded: total - this.unembedded(agentId, kind, model).length }
  }

  async queueMissing(agentId: string | null, model: string, jobKind: string): Promise<number> {
    let added = 0
    for (const kind of this.owners.keys())
      added += await this.jobs.enqueue(
        this.unembedded(agentId, kind, model).map((owner) => ({
          kind: jobKind,
          agentId: owner.agentId,
          key: `${kind}:${owner.id}`,
          payload: { kind, ownerId: owner.id },
        })),
      )
    return added
  }

  async cached(agentId: string, model: string, contentHashes: readonly string[]): Promise<CachedVector[]> {
    return contentHashes.flatMap((hash) => this.cachedVectors.get(cacheKey(agentId, model, hash)) ?? [])
  }

  async cache(vectors: readonly CachedVector[]): Promise<void> {
    for (const vector of vectors) {
      const key = cacheKey(vector.agentId, vector.model, vector.contentHash)
      if (!this.cachedVectors.has(key)) this.cachedVectors.set(key, vector)
    }
  }

  async uncache(agentId: string, contentHashes: readonly string[]): Promise<number> {
    let removed = 0
    for (const [key, vector] of this.cachedVectors)
      if (vector.agentId === agentId && contentHashes.includes(vector.contentHash)) {
        this.cachedVectors.delete(key)
        removed++
      }
    return removed
  }

  async hasOtherModels(model: string): Promise<boolean> {
    // The in-memory vector store holds one model's vectors: they are another model's, or none are.
    return model !== this.vectors.model && this.vectors.total() > 0
  }

  async removeOtherModels(model: string): Promise<number> {
    return model === this.vectors.model ? 0 : this.vectors.clear()
  }

  private unembedded(agentId: string | null, kind: EmbeddingKind, model: string): OwnerToFill[] {
    return [...this.table(kind)]
      .filter(
        ([id, o]) =>
          (!agentId || o.agentId === agentId) && this.embeddedHash(kind, model, id, o.agentId) === null,
      )
      .map(([id, o]) => ({ id, agentId: o.agentId, text: o.text }))
      .sort((a, b) => a.id - b.id)
  }

  private embeddedHash(kind: EmbeddingKind, model: string, id: number, agentId: string): string | null {
    if (model !== this.vectors.model) return null
    return this.vectors.contentHashOf(agentId, kind, String(id)) ?? null
  }

  private table(kind: EmbeddingKind): Map<number, { agentId: string; text: string }> {
    let table = this.owners.get(kind)
    if (!table) {
      table = new Map()
      this.owners.set(kind, table)
    }
    return table
  }
}

function cacheKey(agentId: string, model: string, hash: string): string {
  return `${agentId}\u0000${model}\u0000${hash}`
}

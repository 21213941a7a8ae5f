import {
  analyzeEntries,
  type Clock,
  compressMessage,
  ExactVectorIndex,
  type Limits,
  NotFoundError,
  type TokenCounter,
  ValidationError,
  type VectorIndex,
} from '@engram/core'
import type { TimeIdPageQuery } from '../paging/cursor.ts'
import type { ParameterStore } from '../parameters/parameter-store.ts'
import type { EntryFilter, EntryView, MemoryEntryRepository } from '../ports/repositories.ts'

export interface SearchHit {
  entry: EntryView
  similarity: number
}

/** Memory entries of one agent: listing, analysis, manual tier moves, embeddings and search. */
export class MemoryService {
  // One in-memory index per agent, built from memory_vectors on first search and kept in step
  // with this process's writes, so a search does not re-read every vector. Another process's
  // writes reach it through invalidate (the event bus's cache:invalidate).
  private readonly indexes = new Map<string, VectorIndex>()

  constructor(
    private readonly entries: MemoryEntryRepository,
    private readonly clock: Clock,
    private readonly tokenCounter: TokenCounter,
    private readonly limits: Limits,
    private readonly parameters: ParameterStore,
  ) {}

  async getEntry(scope: string, id: string): Promise<EntryView> {
    const entry = await this.entries.find(scope, id)
    if (!entry) throw new NotFoundError('MemoryEntry', id)
    return entry
  }

  /** One page of the agent's entries in (timestamp, id) order. */
  entryPage(scope: string, filter: EntryFilter, query: TimeIdPageQuery): Promise<EntryView[]> {
    return this.entries.page(scope, filter, query)
  }

  async analyze(scope: string, sessionId: string | null) {
    const entries = await this.entries.list(scope, sessionId)
    const parameters = await this.parameters.load(scope)
    const analysis = analyzeEntries(entries, this.clock.now(), { minRelevance: parameters.minRelevance })
    return { entries, ...analysis }
  }

  async promote(scope: string, id: string): Promise<EntryView> {
    const entry = await this.getEntry(scope, id)
    return this.entries.update(scope, entry.id, { type: 'long_term', relevance: 1 })
  }

  async compress(scope: string, id: string): Promise<EntryView> {
    const entry = await this.getEntry(scope, id)
    if (entry.isCompressed) return entry
    const compressed = compressMessage({ role: entry.role, content: entry.content })
    return this.entries.update(scope, entry.id, {
      content: compressed.content,
      tokenCount: this.tokenCounter.count(compressed.content),
      isCompressed: true,
    })
  }

  async drop(scope: string, id: string): Promise<EntryView> {
    const entry = await this.getEntry(scope, id)
    await this.entries.delete(scope, entry.id)
    this.indexes.get(scope)?.remove(entry.id)
    return entry
  }

  async upsertEmbedding(scope: string, entryId: string, values: number[]): Promise<EntryView> {
    this.assertVector(values, 'vector')
    const entry = await this.getEntry(scope, entryId)
    const vector = Float32Array.from(values)
    const expected = await this.dimensions(scope, entry.id)
    if (expected != null && expected !== vector.length) {
      throw new ValidationError([
        {
          field: 'vector',
          message: `must have ${expected} dimensions, like this agent's other vectors (got ${vector.length})`,
          limit: expected,
        },
      ])
    }
    await this.entries.upsertVector(scope, entry.id, vector)
    this.indexes.get(scope)?.upsert(entry.id, vector)
    return entry
  }

  async searchByVector(scope: string, values: number[], limit: number): Promise<SearchHit[]> {
    this.assertVector(values, 'vector')
    if (!Number.isInteger(limit) || limit < 1 || limit > this.limits.maxSearchLimit) {
      throw new ValidationError([
        {
          field: 'limit',
          message: `must be an integer from 1 to ${this.limits.maxSearchLimit}`,
          limit: this.limits.maxSearchLimit,
        },
      ])
    }
    const index = await this.index(scope)
    if (index.size === 0) return []
    if (index.dimensions != null && index.dimensions !== values.length) {
      throw new ValidationError([
        {
          field: 'vector',
          message: `must have ${index.dimensions} dimensions, like the stored vectors (got ${values.length})`,
          limit: index.dimensions,
        },
      ])
    }
    const hits = index.search(Float32Array.from(values), limit)
    const found = await this.entries.findMany(
      scope,
      hits.map((hit) => hit.id),
    )
    const byId = new Map(found.map((entry) => [entry.id, entry]))
    return hits.flatMap((hit) => {
      const entry = byId.get(hit.id)
      return entry ? [{ entry, similarity: hit.similarity }] : []
    })
  }

  /** Forget an agent's cached index after bulk deletes (sessions, optimizer drops). */
  invalidate(scope: string | null): void {
    if (scope === null) this.indexes.clear()
    else this.indexes.delete(scope)
  }

  /** Whether an in-memory index of the agent's entry vectors is held. */
  holdsIndex(scope: string): boolean {
    return this.indexes.has(scope)
  }

  private async index(scope: string): Promise<VectorIndex> {
    const cached = this.indexes.get(scope)
    if (cached) return cached
    const index = new ExactVectorIndex()
    for (const { entryId, vector } of await this.entries.vectors(scope)) index.upsert(entryId, vector)
    this.indexes.set(scope, index)
    return index
  }

  /** The dimension an agent's vectors have, ignoring the entry being replaced. */
  private async dimensions(scope: string, exceptEntryId: string): Promise<number | null> {
    return this.entries.vectorDimensions(scope, exceptEntryId)
  }

  private assertVector(values: number[], field: string): void {
    if (values.length === 0 || values.length > this.limits.maxVectorDimensions) {
      throw new ValidationError([
        {
          field,
          message: `must have 1 to ${this.limits.maxVectorDimensions} dimensions (got ${values.length})`,
          limit: this.limits.maxVectorDimensions,
        },
      ])
    }
    const bad = values.findIndex((value) => !Number.isFinite(value))
    if (bad >= 0)
      throw new ValidationError([{ field: `${field}.${bad}`, message: 'must be a finite number' }])
    if (values.every((value) => value === 0)) {
      throw new ValidationError([
        { field, message: 'must not be the zero vector (cosine similarity is undefined)' },
      ])
    }
  }
}

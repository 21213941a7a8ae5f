import {
  analyzeEntries,
  bytesToVector,
  type Clock,
  compressMessage,
  ExactVectorIndex,
  type Limits,
  NotFoundError,
  type TokenCounter,
  ValidationError,
  type VectorIndex,
  vectorNorm,
  vectorToBytes,
} from '@engram/core'
import type { Database } from '../db/client.ts'
import { type EntryView, parseRowId, toEntry } from './mappers.ts'
import type { ParameterStore } from './parameter-store.ts'

export interface SearchHit {
  entry: EntryView
  similarity: number
}

/** Memory entries of one agent: listing, analysis, manual tier moves, embeddings and search. */
export class MemoryService {
  // One in-memory index per agent, built from memory_vectors on first search and kept in step
  // with this process's writes, so a search does not re-read every vector.
  private readonly indexes = new Map<string, VectorIndex>()

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly tokenCounter: TokenCounter,
    private readonly limits: Limits,
    private readonly parameters: ParameterStore,
  ) {}

  async getEntry(scope: string, id: string): Promise<EntryView> {
    const rowId = parseRowId(id)
    const row =
      rowId == null ? null : await this.db.memoryEntry.findFirst({ where: { id: rowId, agentId: scope } })
    if (!row) throw new NotFoundError('MemoryEntry', id)
    return toEntry(row)
  }

  async analyze(scope: string, sessionId: string | null) {
    const rows = await this.db.memoryEntry.findMany({
      where: { agentId: scope, ...(sessionId ? { sessionId } : {}) },
      orderBy: [{ timestamp: 'asc' }, { id: 'asc' }],
    })
    const entries = rows.map(toEntry)
    const parameters = await this.parameters.load(scope)
    const analysis = analyzeEntries(entries, this.clock.now(), { minRelevance: parameters.minRelevance })
    return { entries, ...analysis }
  }

  async promote(scope: string, id: string): Promise<EntryView> {
    const entry = await this.getEntry(scope, id)
    const row = await this.db.memoryEntry.update({
      where: { id: Number(entry.id) },
      data: { type: 'long_term', relevance: 1 },
    })
    return toEntry(row)
  }

  async compress(scope: string, id: string): Promise<EntryView> {
    const entry = await this.getEntry(scope, id)
    if (entry.isCompressed) return entry
    const compressed = compressMessage({ role: entry.role, content: entry.content })
    const row = await this.db.memoryEntry.update({
      where: { id: Number(entry.id) },
      data: {
        content: compressed.content,
        tokenCount: this.tokenCounter.count(compressed.content),
        isCompressed: true,
      },
    })
    return toEntry(row)
  }

  async drop(scope: string, id: string): Promise<EntryView> {
    const entry = await this.getEntry(scope, id)
    await this.db.memoryEntry.delete({ where: { id: Number(entry.id) } })
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
    const data = {
      agentId: scope,
      dimensions: vector.length,
      vector: new Uint8Array(vectorToBytes(vector)),
      norm: vectorNorm(vector),
    }
    await this.db.memoryVector.upsert({
      where: { entryId: Number(entry.id) },
      create: { entryId: Number(entry.id), ...data },
      update: data,
    })
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
    const rows = await this.db.memoryEntry.findMany({
      where: { agentId: scope, id: { in: hits.map((hit) => Number(hit.id)) } },
    })
    const byId = new Map(rows.map((row) => [String(row.id), toEntry(row)]))
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
    const rows = await this.db.memoryVector.findMany({
      where: { agentId: scope },
      select: { entryId: true, vector: true },
    })
    for (const row of rows) index.upsert(String(row.entryId), bytesToVector(row.vector))
    this.indexes.set(scope, index)
    return index
  }

  /** The dimension an agent's vectors have, ignoring the entry being replaced. */
  private async dimensions(scope: string, exceptEntryId: string): Promise<number | null> {
    const other = await this.db.memoryVector.findFirst({
      where: { agentId: scope, entryId: { not: Number(exceptEntryId) } },
      select: { dimensions: true },
    })
    return other?.dimensions ?? null
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

import { NotFoundError } from '@engram/core'
import { inTimeIdRange, sortByTimeId } from '../paging/cursor.ts'
import type {
  AgentRecord,
  AgentRepository,
  EntryChanges,
  EntryFilter,
  EntryVector,
  EntryView,
  MemoryEntryRepository,
  NewEntry,
  ParameterRepository,
  Repositories,
} from '../ports/repositories.ts'
import type { UnitOfWork } from '../ports/unit-of-work.ts'
import { type AgentMemoryState, inMemoryArchive } from './in-memory-archive.ts'
import { containsIgnoringCase } from './text-match.ts'

interface State {
  agents: Map<string, AgentRecord>
  entries: Map<string, EntryView>
  vectors: Map<string, EntryVector>
  /** agentId → key → value */
  parameters: Map<string, Map<string, number>>
  nextEntryId: number
  /** agentId → what the agent remembers beyond entries and parameters (the archive's rows) */
  archives: Map<string, AgentMemoryState>
  nextArchiveId: number
}

function emptyState(): State {
  return {
    agents: new Map(),
    entries: new Map(),
    vectors: new Map(),
    parameters: new Map(),
    nextEntryId: 1,
    archives: new Map(),
    nextArchiveId: 1,
  }
}

/**
 * The repositories in memory, with a unit of work that rolls back by restoring a copy of the state
 * taken when the transaction began. Transactions run one at a time (like SQLite's single writer);
 * a call made outside a transaction while one runs is rolled back with it, a simplification only
 * tests live with.
 */
export class InMemoryRepositories implements UnitOfWork {
  private state = emptyState()
  private queue: Promise<unknown> = Promise.resolve()
  readonly repositories: Repositories

  constructor(private readonly now: () => Date) {
    this.repositories = {
      agents: this.agents(),
      memoryEntries: this.memoryEntries(),
      parameters: this.parameters(),
      archive: inMemoryArchive(() => this.state),
    }
  }

  transaction<T>(fn: (repositories: Repositories) => Promise<T>): Promise<T> {
    const run = async () => {
      const before = structuredClone(this.state)
      try {
        return await fn(this.repositories)
      } catch (error) {
        this.state = before
        throw error
      }
    }
    const result = this.queue.then(run, run)
    this.queue = result.catch(() => undefined)
    return result
  }

  /** The agents that exist (the in-memory agent data store sweeps and purges against them). */
  agentIds(): string[] {
    return [...this.state.agents.keys()]
  }

  /** What an agent owns here, per kind of record (the in-memory deletion report's rows). */
  owned(agentId: string): { agents: number; entries: number; vectors: number; parameters: number } {
    const entries = [...this.state.entries.values()].filter((e) => e.agentId === agentId)
    const ids = new Set(entries.map((e) => e.id))
    return {
      agents: this.state.agents.has(agentId) ? 1 : 0,
      entries: entries.length,
      vectors: [...this.state.vectors.keys()].filter((id) => ids.has(id)).length,
      parameters: this.state.parameters.get(agentId)?.size ?? 0,
    }
  }

  private agents(): AgentRepository {
    return {
      find: async (id) => this.state.agents.get(id) ?? null,
      upsert: async (id, name) => {
        const existing = this.state.agents.get(id)
        const agent = existing
          ? { ...existing, name: name ?? existing.name }
          : { id, name: name ?? id, createdAt: this.now() }
        this.state.agents.set(id, agent)
        return agent
      },
      delete: async (id) => {
        if (!this.state.agents.delete(id)) return false
        // What an agent owns goes with it, as the SQLite schema's cascades do.
        for (const [key, entry] of this.state.entries)
          if (entry.agentId === id) this.state.entries.delete(key)
        for (const [key, vector] of this.state.vectors)
          if (!this.state.entries.has(vector.entryId)) this.state.vectors.delete(key)
        this.state.parameters.delete(id)
        this.state.archives.delete(id)
        return true
      },
      list: async () =>
        [...this.state.agents.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
    }
  }

  private memoryEntries(): MemoryEntryRepository {
    const owned = (agentId: string, id: string) => {
      const entry = this.state.entries.get(id)
      return entry && entry.agentId === agentId ? entry : null
    }
    const require = (agentId: string, id: string) => {
      const entry = owned(agentId, id)
      if (!entry) throw new NotFoundError('MemoryEntry', id)
      return entry
    }
    const byAge = (a: EntryView, b: EntryView) =>
      a.timestamp.getTime() - b.timestamp.getTime() || Number(a.id) - Number(b.id)
    return {
      create: async (agentId, input: NewEntry) => {
        if (!this.state.agents.has(agentId)) throw new NotFoundError('Agent', agentId)
        const now = this.now()
        const entry: EntryView = {
          id: String(this.state.nextEntryId++),
          agentId,
          type: input.type,
          role: input.role,
          content: input.content,
          tokenCount: input.tokenCount,
          relevance: input.relevance,
          isCompressed: input.isCompressed ?? false,
          timestamp: input.timestamp,
          sessionId: input.sessionId ?? null,
          messageId: input.messageId ?? null,
          metadata: { ...(input.metadata ?? {}) },
          createdAt: now,
          updatedAt: now,
        }
        this.state.entries.set(entry.id, entry)
        return { ...entry }
      },
      find: async (agentId, id) => {
        const entry = owned(agentId, id)
        return entry ? { ...entry } : null
      },
      list: async (agentId, sessionId) =>
        [...this.state.entries.values()]
          .filter((e) => e.agentId === agentId && (sessionId == null || e.sessionId === sessionId))
          .sort(byAge)
          .map((e) => ({ ...e })),
      findMany: async (agentId, ids) =>
        ids.flatMap((id) => {
          const entry = owned(agentId, id)
          return entry ? [{ ...entry }] : []
        }),
      page: async (agentId, filter: EntryFilter, query) => {
        const rows = [...this.state.entries.values()]
          .filter(
            (e) =>
              e.agentId === agentId &&
              (filter.sessionId === undefined || e.sessionId === filter.sessionId) &&
              (filter.type === undefined || e.type === filter.type) &&
              (filter.isCompressed === undefined || e.isCompressed === filter.isCompressed) &&
              (filter.minRelevance === undefined || e.relevance >= filter.minRelevance) &&
              (filter.contentContains === undefined ||
                containsIgnoringCase(e.content, filter.contentContains)),
          )
          .map((e) => ({ entry: e, timestamp: e.timestamp, id: Number(e.id) }))
          .filter((row) => inTimeIdRange(row, query.range))
        return sortByTimeId(rows, query.direction)
          .slice(0, query.take)
          .map((row) => ({ ...row.entry }))
      },
      update: async (agentId, id, changes: EntryChanges) => {
        const entry = require(agentId, id)
        const updated = { ...entry, ...changes, updatedAt: this.now() }
        this.state.entries.set(id, updated)
        return { ...updated }
      },
      delete: async (agentId, id) => {
        require(agentId, id)
        this.state.entries.delete(id)
        this.state.vectors.delete(id)
      },
      vectors: async (agentId) =>
        [...this.state.vectors.values()]
          .filter((v) => owned(agentId, v.entryId))
          .map((v) => ({ entryId: v.entryId, vector: v.vector.slice() })),
      upsertVector: async (agentId, entryId, vector) => {
        require(agentId, entryId)
        this.state.vectors.set(entryId, { entryId, vector: vector.slice() })
      },
      vectorDimensions: async (agentId, exceptEntryId) => {
        for (const v of this.state.vectors.values())
          if (v.entryId !== exceptEntryId && owned(agentId, v.entryId)) return v.vector.length
        return null
      },
    }
  }

  private parameters(): ParameterRepository {
    return {
      values: async (agentId, keys) => {
        const stored = this.state.parameters.get(agentId) ?? new Map<string, number>()
        return new Map([...stored].filter(([key]) => !keys || keys.includes(key)))
      },
      put: async (agentId, key, value) => {
        if (!this.state.agents.has(agentId)) throw new NotFoundError('Agent', agentId)
        const stored = this.state.parameters.get(agentId) ?? new Map<string, number>()
        stored.set(key, value)
        this.state.parameters.set(agentId, stored)
      },
    }
  }
}

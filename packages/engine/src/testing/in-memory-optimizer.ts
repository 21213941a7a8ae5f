import type { DecayCandidate, MemoryEntry } from '@engram/core'
import type { SnapshotEvent } from '../ports/event-bus.ts'
import type { OptimizerRepository, OptimizerRunChanges } from '../ports/optimizer.ts'
import type { Repositories } from '../ports/repositories.ts'
import type { InMemoryRepositories } from './in-memory-repositories.ts'

/**
 * The optimizer's store over the in-memory repositories: entries are theirs, snapshots are kept
 * here. This adapter holds no knowledge, so there is nothing to decay.
 */
export class InMemoryOptimizerRepository implements OptimizerRepository {
  private history: SnapshotEvent[] = []
  private nextId = 1

  constructor(private readonly repositories: InMemoryRepositories) {}

  async agentsWithEntries(): Promise<string[]> {
    return this.repositories.agentIds().filter((id) => this.repositories.owned(id).entries > 0)
  }

  async entries(agentId: string, sessionId: string | null): Promise<MemoryEntry[]> {
    const entries = await this.repositories.repositories.memoryEntries.list(agentId, sessionId)
    return entries.map(
      ({ id, type, role, content, tokenCount, relevance, isCompressed, timestamp, sessionId }) => ({
        id,
        type,
        role,
        content,
        tokenCount,
        relevance,
        isCompressed,
        timestamp,
        sessionId,
      }),
    )
  }

  async decayCandidates(_agentId: string): Promise<DecayCandidate[]> {
    return []
  }

  applyRun(
    agentId: string,
    changes: OptimizerRunChanges,
    alongside: (repositories: Repositories) => Promise<void>,
  ): Promise<SnapshotEvent> {
    return this.repositories.transaction(async (repositories) => {
      const entries = repositories.memoryEntries
      // As SQLite's statements do, ids the agent does not own (or no longer has) change nothing.
      const owned = async (ids: readonly string[]) => (await entries.findMany(agentId, ids)).map((e) => e.id)
      for (const id of await owned(changes.drops)) await entries.delete(agentId, id)
      for (const id of await owned(changes.promotions))
        await entries.update(agentId, id, { type: 'long_term', relevance: 1 })
      const compressed = new Set(await owned(changes.compressions.map((c) => c.entryId)))
      for (const c of changes.compressions)
        if (compressed.has(c.entryId))
          await entries.update(agentId, c.entryId, {
            content: c.content,
            tokenCount: c.tokenCount,
            isCompressed: true,
          })
      await alongside(repositories)
      const event: SnapshotEvent = {
        id: String(this.nextId++),
        agentId,
        snapshot: structuredClone(changes.snapshot),
      }
      const newestFirst = [event, ...this.newestFirst(agentId)]
      const dropped = new Set(newestFirst.slice(changes.snapshotHistoryLimit))
      this.history = [...this.history, event].filter((e) => !dropped.has(e))
      return structuredClone(event)
    })
  }

  async lastRunAt(agentId: string): Promise<Date | null> {
    return this.newestFirst(agentId)[0]?.snapshot.timestamp ?? null
  }

  async snapshots(agentId: string | null, last: number): Promise<SnapshotEvent[]> {
    return structuredClone(this.newestFirst(agentId).slice(0, last).reverse())
  }

  /** Snapshots of agents that no longer exist go, as SQLite's cascade takes them with the agent. */
  forgetDeletedAgents(): void {
    const existing = new Set(this.repositories.agentIds())
    this.history = this.history.filter((e) => existing.has(e.agentId))
  }

  /** The agent's snapshot count (the in-memory deletion report's row). */
  count(agentId: string): number {
    return this.history.filter((e) => e.agentId === agentId).length
  }

  private newestFirst(agentId: string | null): SnapshotEvent[] {
    return this.history
      .filter((e) => agentId === null || e.agentId === agentId)
      .sort(
        (a, b) =>
          b.snapshot.timestamp.getTime() - a.snapshot.timestamp.getTime() || Number(b.id) - Number(a.id),
      )
  }
}

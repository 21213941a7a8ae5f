import type { NewJob } from '@engram/core'
import type { JobQueue } from '../ports/job-queue.ts'
import type {
  NewSummary,
  RecordedTurn,
  RemovedSummary,
  StoredSummary,
  SummaryCursor,
  SummaryListQuery,
  SummaryRepository,
} from '../ports/summaries.ts'
import type { InMemoryEmbeddingRepository } from './in-memory-embeddings.ts'

const cursorKey = (agentId: string, conversationId: string) => JSON.stringify([agentId, conversationId])

/** Summaries and cursors in memory; ids count up like the SQLite rows'. */
export class InMemorySummaries implements SummaryRepository {
  private readonly rows: StoredSummary[] = []
  private readonly cursors = new Map<string, SummaryCursor>()
  private nextId = 1

  async insert(summary: NewSummary): Promise<StoredSummary> {
    const row = { ...summary, id: String(this.nextId++) }
    this.rows.push(row)
    this.owners?.putOwners('summary', [{ id: Number(row.id), agentId: row.agentId, text: row.content }])
    const key = cursorKey(summary.agentId, summary.conversationId)
    const cursor = this.cursors.get(key) ?? {
      agentId: summary.agentId,
      conversationId: summary.conversationId,
      lastTurnAt: summary.createdAt,
      summarisedThroughId: null,
      lastSummaryAt: null,
      pendingTokens: 0,
    }
    this.cursors.set(key, {
      ...cursor,
      summarisedThroughId: summary.lastMessageId,
      lastSummaryAt: summary.createdAt,
      pendingTokens: 0,
    })
    return { ...row }
  }

  async list(agentId: string, query: SummaryListQuery): Promise<StoredSummary[]> {
    return this.rows
      .filter(
        (row) =>
          row.agentId === agentId &&
          (query.conversationId == null || row.conversationId === query.conversationId) &&
          (query.since == null || row.createdAt.getTime() >= query.since.getTime()),
      )
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || Number(b.id) - Number(a.id))
      .slice(0, query.limit)
      .map((row) => ({ ...row }))
  }

  async find(agentId: string, id: string): Promise<StoredSummary | null> {
    const row = this.rows.find((r) => r.agentId === agentId && r.id === id)
    return row ? { ...row } : null
  }

  /** The queue the turn's jobs go to (the in-memory store's). */
  constructor(private readonly jobs: Pick<JobQueue, 'enqueue'>) {}

  async recordTurn(
    agentId: string,
    conversationId: string,
    at: Date,
    tokens: number,
    jobsFor?: (turn: RecordedTurn) => readonly NewJob[],
  ): Promise<RecordedTurn> {
    let previous: SummaryCursor | null = null
    for (const cursor of this.cursors.values())
      if (cursor.agentId === agentId && (!previous || cursor.lastTurnAt > previous.lastTurnAt))
        previous = cursor
    const key = cursorKey(agentId, conversationId)
    const existing = this.cursors.get(key)
    const cursor: SummaryCursor = existing
      ? { ...existing, lastTurnAt: at, pendingTokens: existing.pendingTokens + tokens }
      : {
          agentId,
          conversationId,
          lastTurnAt: at,
          summarisedThroughId: null,
          lastSummaryAt: null,
          pendingTokens: tokens,
        }
    this.cursors.set(key, cursor)
    const recorded = {
      cursor: { ...cursor },
      previous: previous && previous.conversationId !== conversationId ? { ...previous } : null,
    }
    if (jobsFor) await this.jobs.enqueue(jobsFor(recorded))
    return recorded
  }

  async cursor(agentId: string, conversationId: string): Promise<SummaryCursor | null> {
    const cursor = this.cursors.get(cursorKey(agentId, conversationId))
    return cursor ? { ...cursor } : null
  }

  async deleteStoredBefore(agentId: string, cutoff: Date): Promise<RemovedSummary[]> {
    return this.remove((row) => row.agentId === agentId && row.createdAt.getTime() < cutoff.getTime())
  }

  async oldestStoredAt(agentId: string): Promise<Date | null> {
    let oldest: Date | null = null
    for (const row of this.rows)
      if (row.agentId === agentId && (!oldest || row.createdAt < oldest)) oldest = row.createdAt
    return oldest
  }

  async conversationsWithPendingTurns(agentId: string): Promise<string[]> {
    return [...this.cursors.values()]
      .filter(
        (c) =>
          c.agentId === agentId &&
          (c.pendingTokens > 0 ||
            c.lastSummaryAt === null ||
            c.lastSummaryAt.getTime() < c.lastTurnAt.getTime()),
      )
      .map((c) => c.conversationId)
      .sort()
  }

  async agentsWithSummaries(): Promise<string[]> {
    return [...new Set(this.rows.map((row) => row.agentId))].sort()
  }

  async deleteConversation(agentId: string, conversationId: string): Promise<RemovedSummary[]> {
    this.cursors.delete(cursorKey(agentId, conversationId))
    return this.remove((row) => row.agentId === agentId && row.conversationId === conversationId)
  }

  async count(agentId: string): Promise<number> {
    return this.rows.filter((row) => row.agentId === agentId).length
  }

  /** Everything of a deleted agent, as the SQLite schema's cascade does. */
  forgetAgent(agentId: string): void {
    this.remove((row) => row.agentId === agentId)
    for (const [key, cursor] of this.cursors) if (cursor.agentId === agentId) this.cursors.delete(key)
  }

  /**
   * The in-memory embedding repository has no tables to read owners from: it is told of every
   * summary stored and removed, as the SQLite one reads the Summary table.
   */
  embedWith(owners: Pick<InMemoryEmbeddingRepository, 'putOwners' | 'removeOwners'>): void {
    this.owners = owners
  }

  private owners: Pick<InMemoryEmbeddingRepository, 'putOwners' | 'removeOwners'> | null = null

  private remove(match: (row: StoredSummary) => boolean): RemovedSummary[] {
    const removed: RemovedSummary[] = []
    for (let i = this.rows.length - 1; i >= 0; i--) {
      const row = this.rows[i]
      if (row && match(row)) {
        this.rows.splice(i, 1)
        removed.push({ id: row.id, content: row.content })
      }
    }
    this.owners?.removeOwners(
      'summary',
      removed.map((row) => Number(row.id)),
    )
    return removed.reverse()
  }
}

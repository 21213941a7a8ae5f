import type { InMemorySessionRepository } from '@engram/core'
import type {
  CompactionReport,
  ExpiredConversation,
  MaintenanceRepository,
  MaintenanceRun,
  StoreCompaction,
} from '../ports/maintenance.ts'

/**
 * Maintenance's runs in memory, and the retention read over the in-memory sessions. The stores
 * here keep no storage time per message, so a session's is when Engram last appended to it
 * (recorded by `stored`, wired in createInMemoryStorage); promotion and pins are the SQL
 * adapters' (tested through the API on SQLite and Postgres).
 */
export class InMemoryMaintenance implements MaintenanceRepository {
  private readonly runs: MaintenanceRun[] = []
  private readonly storedAt = new Map<string, Date>()

  constructor(private readonly sessions: InMemorySessionRepository) {}

  /** A session was written to at `at` (Engram's clock). */
  stored(sessionId: string, at: Date): void {
    this.storedAt.set(sessionId, at)
  }

  /** A deleted agent's runs keep their counts and lose its id, as the SQL schema's SET NULL does. */
  forgetAgent(agentId: string): void {
    for (const run of this.runs) if (run.agentId === agentId) run.agentId = null
  }

  async start(run: Parameters<MaintenanceRepository['start']>[0]): Promise<MaintenanceRun | null> {
    if (run.slot && this.runs.some((r) => r.slot?.getTime() === run.slot?.getTime())) return null
    const record: MaintenanceRun = {
      ...run,
      status: 'RUNNING',
      finishedAt: null,
      removed: { conversations: 0, messages: 0, summaries: 0 },
      bytesReclaimed: null,
      steps: [],
      error: null,
    }
    this.runs.push(record)
    return { ...record }
  }

  async finish(id: string, outcome: Parameters<MaintenanceRepository['finish']>[1]): Promise<MaintenanceRun> {
    const run = this.runs.find((r) => r.id === id)
    if (!run) throw new Error(`no maintenance run ${id}`)
    Object.assign(run, outcome)
    return { ...run }
  }

  async list(offset: number, limit: number) {
    const newest = [...this.runs].sort(
      (a, b) => b.startedAt.getTime() - a.startedAt.getTime() || b.id.localeCompare(a.id),
    )
    return { totalCount: newest.length, runs: newest.slice(offset, offset + limit).map((r) => ({ ...r })) }
  }

  async lastScheduledSlot(): Promise<Date | null> {
    const slots = this.runs.flatMap((r) => (r.slot ? [r.slot] : []))
    return slots.length === 0 ? null : new Date(Math.max(...slots.map((s) => s.getTime())))
  }

  async expiredConversations(
    agentId: string,
    storedBefore: Date,
    limit: number,
  ): Promise<ExpiredConversation[]> {
    const expired: (ExpiredConversation & { at: number })[] = []
    for (const session of this.sessions.sessions.values()) {
      if (session.scope !== agentId) continue
      const at = this.storedAt.get(session.id) ?? session.createdAt
      if (at.getTime() >= storedBefore.getTime()) continue
      const messages = this.sessions.messages.filter((m) => m.sessionId === session.id).length
      expired.push({ conversationId: session.conversationId, messages, at: at.getTime() })
    }
    return expired
      .sort((a, b) => a.at - b.at)
      .slice(0, limit)
      .map(({ conversationId, messages }) => ({ conversationId, messages }))
  }

  async countSummariesBefore(): Promise<number> {
    return 0
  }
}

/** Nothing to compact in memory: the steps say so. */
export const IN_MEMORY_COMPACTION: StoreCompaction = {
  size: async () => null,
  compact: async (): Promise<CompactionReport> => ({ steps: [], bytesBefore: null, bytesAfter: null }),
}

/**
 * Maintenance (issue 17 §4, spec 002's maintenance block): the record of every run, the reads that
 * find what retention removes, and the store's compaction. Removal itself goes through the existing
 * deletion paths (the engine deletes an expired conversation exactly as deleteSession does), so
 * every derived store follows; the port only finds the candidates and keeps the runs.
 */

export const MAINTENANCE_TRIGGERS = ['SCHEDULED', 'MANUAL'] as const
export type MaintenanceTrigger = (typeof MAINTENANCE_TRIGGERS)[number]

export const MAINTENANCE_STATUSES = ['RUNNING', 'SUCCEEDED', 'FAILED'] as const
export type MaintenanceStatus = (typeof MAINTENANCE_STATUSES)[number]

/** What a run removed (or, dry, would remove), per kind of record; counts only, never content. */
export interface MaintenanceRemoved {
  conversations: number
  messages: number
  summaries: number
}

export const NOTHING_REMOVED: MaintenanceRemoved = { conversations: 0, messages: 0, summaries: 0 }

/** One step of a run, in order: what it did and how long it took. */
export interface MaintenanceStep {
  name: string
  /** What it did, for a person (counts and sizes, no agent data). */
  detail: string
  durationMs: number
}

export interface NewMaintenanceRun {
  id: string
  trigger: MaintenanceTrigger
  dryRun: boolean
  /** The cron occurrence a scheduled run is for: unique, so one slot runs once per database. */
  slot: Date | null
  /** The agent a manual run was limited to (set to null when that agent is deleted). */
  agentId: string | null
  /** The process that ran it (host:pid:nonce). */
  holder: string
  startedAt: Date
}

export interface MaintenanceRun extends NewMaintenanceRun {
  status: MaintenanceStatus
  finishedAt: Date | null
  removed: MaintenanceRemoved
  /** Bytes the store's files shrank by (SQLite), or the dead space freed (Postgres); null before it ends or when not measured. */
  bytesReclaimed: number | null
  steps: MaintenanceStep[]
  error: string | null
}

export interface MaintenanceRunOutcome {
  status: Exclude<MaintenanceStatus, 'RUNNING'>
  finishedAt: Date
  removed: MaintenanceRemoved
  bytesReclaimed: number | null
  steps: MaintenanceStep[]
  error: string | null
}

/** A conversation past retention: nothing in it was stored since the cutoff. */
export interface ExpiredConversation {
  conversationId: string
  messages: number
}

export interface MaintenanceRepository {
  /**
   * Records a run as RUNNING. A scheduled run's slot is unique: when another process already
   * recorded that slot, nothing is written and null is returned (the slot is theirs).
   */
  start(run: NewMaintenanceRun): Promise<MaintenanceRun | null>
  finish(id: string, outcome: MaintenanceRunOutcome): Promise<MaintenanceRun>
  /** Newest first. */
  list(offset: number, limit: number): Promise<{ totalCount: number; runs: MaintenanceRun[] }>
  /** The newest scheduled run's slot, or null when no scheduled run was ever recorded (an upgrade). */
  lastScheduledSlot(): Promise<Date | null>
  /**
   * The agent's conversations whose every message was stored (createdAt, Engram's clock, never the
   * caller's timestamp) before `storedBefore`, and that hold nothing kept: no promoted entry (type
   * long_term) and no pinned memory item citing the conversation. Oldest first, at most `limit`.
   */
  expiredConversations(agentId: string, storedBefore: Date, limit: number): Promise<ExpiredConversation[]>
  /** The agent's summaries stored before `storedBefore` (what summary retention removes). */
  countSummariesBefore(agentId: string, storedBefore: Date): Promise<number>
}

/** What compaction did, and what the store's files measured before and after. */
export interface CompactionReport {
  steps: MaintenanceStep[]
  bytesBefore: number | null
  bytesAfter: number | null
}

/**
 * The store's own compaction (SQLite: incremental vacuum, full-text merge, WAL truncation;
 * Postgres: VACUUM (ANALYZE)). Adapter words stay behind it: the engine asks and records.
 */
export interface StoreCompaction {
  /** The store's size in bytes now (file + WAL, or the database's size), null when unknown. */
  size(): Promise<number | null>
  /**
   * Compacts. `vectorRebuildDeletedShare`: an in-process vector index whose deleted entries pass
   * this share of it is rebuilt. A dry run measures and compacts nothing.
   */
  compact(options: { dryRun: boolean; vectorRebuildDeletedShare: number }): Promise<CompactionReport>
}

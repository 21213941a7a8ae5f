import type { ClaimOptions, Clock, Job, JobQueue, JobQueueStats, JobState, NewJob } from '@engram/core'
import {
  type Database,
  type NewRowJobs,
  type SyncStatements,
  sqliteDate,
  type Transaction,
  writePaths,
} from '../db/client.ts'
import { type SqlDialect, sqliteDialect } from '../db/dialect.ts'

/** Longest error text kept on a job: enough for a provider's message, not a whole response body. */
export const MAX_JOB_ERROR_CHARS = 2_000

/**
 * Queues a job unless one of the same agent and key is already pending (that one will do the
 * work: handlers read the current state of what they work on, not a copy in the payload). One
 * statement, so two writers cannot both queue it.
 */
const INSERT_JOB = `INSERT INTO "Job" ("kind", "agentId", "key", "payload", "state", "attempts", "runAfter", "createdAt", "updatedAt")
  SELECT ?, ?, ?, ?, 'pending', 0, ?, ?, ?
  WHERE NOT EXISTS (SELECT 1 FROM "Job" WHERE "agentId" = ? AND "key" = ? AND "state" = 'pending')`

/**
 * Takes due jobs under a lease, in one statement: SQLite runs it under its write lock, so two
 * workers (threads, processes) never take the same job; on Postgres the select locks the rows it
 * takes and passes over those another claim holds (the dialect's claimLock), as a re-checked
 * `IN (subquery)` alone would let two concurrent claims take one job. A job is due when pending
 * and past its runAfter, or running under a lease that expired (its worker is presumed dead).
 * Only the oldest live job of each (agent, key) can be taken: jobs of a key run one at a time
 * and in order.
 */
const CLAIM_JOBS = (forAgent: boolean, lock: string) => `UPDATE "Job"
  SET "state" = 'running', "leaseOwner" = ?, "leaseUntil" = ?, "attempts" = "attempts" + 1, "updatedAt" = ?
  WHERE "id" IN (
    SELECT j."id" FROM "Job" j
    WHERE j."kind" = ? ${forAgent ? 'AND j."agentId" = ?' : ''}
      AND ((j."state" = 'pending' AND j."runAfter" <= ?) OR (j."state" = 'running' AND j."leaseUntil" <= ?))
      AND NOT EXISTS (
        SELECT 1 FROM "Job" o
        WHERE o."agentId" = j."agentId" AND o."key" = j."key" AND o."id" < j."id" AND o."state" IN ('pending', 'running'))
    ORDER BY j."runAfter", j."id"
    LIMIT ?${lock ? ` ${lock}` : ''})
  RETURNING *`

/** Jobs one insertJobs statement takes (6 parameters each, well under SQLite's 32,766). */
const MAX_JOBS_PER_INSERT = 500

/** INSERT_JOB for `count` jobs of distinct keys in one statement (statements cached per count). */
function insertJobs(count: number): string {
  const rows = Array.from({ length: count }, () => '(?, ?, ?, ?, ?, ?)').join(', ')
  return `INSERT INTO "Job" ("kind", "agentId", "key", "payload", "state", "attempts", "runAfter", "createdAt", "updatedAt")
  SELECT v.column1, v.column2, v.column3, v.column4, 'pending', 0, v.column5, v.column6, v.column6 FROM (VALUES ${rows}) v
  WHERE NOT EXISTS (SELECT 1 FROM "Job" j WHERE j."agentId" = v.column2 AND j."key" = v.column3 AND j."state" = 'pending')`
}

/**
 * Jobs of rows the same write created (NewJob.ofNewRow), `count` of them: plain VALUES, no read of
 * the queue. A single row (an addMessage's embed job) also needs no statement journal, which would
 * make FTS5 flush its pending terms before the COMMIT (see AppendInserts).
 */
function insertNewRowJobs(count: number): string {
  const rows = Array.from({ length: count }, () => `(?, ?, ?, ?, 'pending', 0, ?, ?, ?)`).join(', ')
  return `INSERT INTO "Job" ("kind", "agentId", "key", "payload", "state", "attempts", "runAfter", "createdAt", "updatedAt") VALUES ${rows}`
}

/** A debounced job (NewJob.postpone): the pending job of its key waits until the later time. */
const POSTPONE_JOB = `UPDATE "Job" SET "runAfter" = ?, "updatedAt" = ?
  WHERE "agentId" = ? AND "key" = ? AND "state" = 'pending' AND "runAfter" < ?`

interface JobRow {
  id: number | bigint
  kind: string
  agentId: string
  key: string
  payload: string
  state: string
  attempts: number | bigint
  runAfter: string | Date
  leaseOwner: string | null
  leaseUntil: string | Date | null
  lastError: string | null
  createdAt: string | Date
}

type Executor = Database | Transaction

/**
 * The JobQueue port on the SQLite database, table "Job". Finished jobs are deleted; dead letters
 * (state failed) stay until retried or their agent is deleted. Every time is the engine's clock.
 */
export class SqliteJobQueue implements JobQueue {
  private readonly listeners = new Set<() => void>()
  private readonly newRowJobs: NewRowJobs

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly dialect: SqlDialect = sqliteDialect,
  ) {
    this.newRowJobs = writePaths(db).newRowJobs
  }

  /** Called after jobs are queued (a worker wakes up instead of waiting for its next poll). */
  onEnqueued(listener: () => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Queues jobs; returns how many were new (not already pending). */
  async enqueue(jobs: readonly NewJob[], executor: Executor = this.db): Promise<number> {
    let added = 0
    for (const job of jobs) {
      if (job.postpone) await executor.$executeRawUnsafe(POSTPONE_JOB, ...this.postponeParams(job))
      added += await executor.$executeRawUnsafe(INSERT_JOB, ...this.insertParams(job))
    }
    if (added > 0) this.notify()
    return added
  }

  /**
   * Queues jobs inside a synchronous write (DirectSqlite.write): they commit or roll back with the
   * rows they are about, so a crash between the two cannot lose the job.
   */
  enqueueIn(sql: SyncStatements, allJobs: readonly NewJob[]): number {
    let added = 0
    let jobs = allJobs
    if (this.newRowJobs === 'plain' && allJobs.some((job) => job.ofNewRow && !job.postpone)) {
      const fresh = allJobs.filter((job) => job.ofNewRow && !job.postpone)
      jobs = allJobs.filter((job) => !job.ofNewRow || job.postpone)
      for (let at = 0; at < fresh.length; at += MAX_JOBS_PER_INSERT) {
        const chunk = fresh.slice(at, at + MAX_JOBS_PER_INSERT)
        added += sql.run(
          insertNewRowJobs(chunk.length),
          ...chunk.flatMap((job) => this.valuesParams(job)),
        ).changes
      }
    }
    // A batch's plain jobs (an embed job per message of an addMessages) in one statement, unless
    // two share a key: the statement reads the queue before inserting any row of it.
    const plain = jobs.filter((job) => !job.postpone)
    const keys = new Set(plain.map((job) => JSON.stringify([job.agentId, job.key])))
    const together = plain.length > 1 && plain.length <= MAX_JOBS_PER_INSERT && keys.size === plain.length
    if (together)
      added += sql.run(insertJobs(plain.length), ...plain.flatMap((job) => this.rowParams(job))).changes
    for (const job of jobs) {
      if (together && !job.postpone) continue
      if (job.postpone) sql.run(POSTPONE_JOB, ...this.postponeParams(job))
      added += sql.run(INSERT_JOB, ...this.insertParams(job)).changes
    }
    // After the commit: the worker must not look before the rows are there.
    if (added > 0) setImmediate(() => this.notify())
    return added
  }

  /** insertNewRowJobs' columns for one job: rowParams' and the updatedAt. */
  private valuesParams(job: NewJob): unknown[] {
    const row = this.rowParams(job)
    return [...row, row[5]]
  }

  /** Queues one job per row a SELECT returns (columns agentId, key, payload), for bulk work. */
  async enqueueSelect(kind: string, select: string, params: readonly unknown[]): Promise<number> {
    const now = sqliteDate(this.clock.now())
    const added = await this.db.$executeRawUnsafe(
      `INSERT INTO "Job" ("kind", "agentId", "key", "payload", "state", "attempts", "runAfter", "createdAt", "updatedAt")
        SELECT ?, s."agentId", s."key", s."payload", 'pending', 0, ?, ?, ? FROM (${select}) s
        WHERE NOT EXISTS (SELECT 1 FROM "Job" q WHERE q."agentId" = s."agentId" AND q."key" = s."key" AND q."state" = 'pending')`,
      kind,
      now,
      now,
      now,
      ...params,
    )
    if (added > 0) this.notify()
    return added
  }

  async claim(kind: string, workerId: string, options: ClaimOptions): Promise<Job[]> {
    const now = this.clock.now()
    const at = sqliteDate(now)
    const rows = await this.db.$queryRawUnsafe<JobRow[]>(
      CLAIM_JOBS(options.agentId !== undefined, this.dialect.claimLock),
      workerId,
      sqliteDate(new Date(now.getTime() + options.leaseMs)),
      at,
      kind,
      ...(options.agentId !== undefined ? [options.agentId] : []),
      at,
      at,
      options.limit,
    )
    return rows.map(toJob).sort((a, b) => a.id - b.id)
  }

  /** Whether the agent has jobs of a kind that claim() would take now (a read: no write lock). */
  async hasDue(kind: string, agentId: string): Promise<boolean> {
    const at = sqliteDate(this.clock.now())
    const rows = await this.db.$queryRawUnsafe<unknown[]>(
      `SELECT 1 FROM "Job" WHERE "agentId" = ? AND "kind" = ?
        AND (("state" = 'pending' AND "runAfter" <= ?) OR ("state" = 'running' AND "leaseUntil" <= ?)) LIMIT 1`,
      agentId,
      kind,
      at,
      at,
    )
    return rows.length > 0
  }

  async extend(ids: readonly number[], workerId: string, leaseMs: number): Promise<number> {
    if (ids.length === 0) return 0
    const now = this.clock.now()
    return this.db.$executeRawUnsafe(
      `UPDATE "Job" SET "leaseUntil" = ?, "updatedAt" = ?
        WHERE "state" = 'running' AND "leaseOwner" = ? AND "id" IN (${ids.map(() => '?').join(', ')})`,
      sqliteDate(new Date(now.getTime() + leaseMs)),
      sqliteDate(now),
      workerId,
      ...ids,
    )
  }

  async complete(ids: readonly number[], workerId: string): Promise<void> {
    if (ids.length === 0) return
    await this.db.$executeRawUnsafe(
      `DELETE FROM "Job" WHERE "state" = 'running' AND "leaseOwner" = ? AND "id" IN (${ids.map(() => '?').join(', ')})`,
      workerId,
      ...ids,
    )
  }

  async fail(id: number, workerId: string, error: string, retryAt: Date | null): Promise<void> {
    await this.db.$executeRawUnsafe(
      `UPDATE "Job" SET "state" = ?, "runAfter" = COALESCE(?, "runAfter"), "leaseOwner" = NULL, "leaseUntil" = NULL,
          "lastError" = ?, "updatedAt" = ?
        WHERE "id" = ? AND "state" = 'running' AND "leaseOwner" = ?`,
      retryAt ? 'pending' : 'failed',
      retryAt ? sqliteDate(retryAt) : null,
      error.slice(0, MAX_JOB_ERROR_CHARS),
      sqliteDate(this.clock.now()),
      id,
      workerId,
    )
  }

  /**
   * Depth and lag per kind (`kinds` are listed even with no jobs). Lag is the age of the oldest
   * pending job, waiting for a retry or not: either way its work is not done; the due lag counts
   * only from when a job came due, so a debounce or a backoff is not mistaken for a backlog.
   */
  async stats(kinds: readonly string[] = []): Promise<JobQueueStats[]> {
    const rows = await this.db.$queryRawUnsafe<
      {
        kind: string
        state: string
        n: number | bigint
        oldest: string | Date | null
        due: string | Date | null
      }[]
    >(
      `SELECT "kind" AS kind, "state" AS state, COUNT(*) AS n,
          MIN(CASE WHEN "state" = 'pending' THEN "createdAt" END) AS oldest,
          MIN(CASE WHEN "state" = 'pending' AND "runAfter" <= ? THEN "runAfter" END) AS due
        FROM "Job" GROUP BY "kind", "state"`,
      sqliteDate(this.clock.now()),
    )
    const now = this.clock.now().getTime()
    const byKind = new Map<string, JobQueueStats>(
      kinds.map((kind) => [
        kind,
        { kind, pending: 0, running: 0, failed: 0, oldestPendingAgeMs: 0, oldestDueAgeMs: 0 },
      ]),
    )
    for (const row of rows) {
      let stats = byKind.get(row.kind)
      if (!stats) {
        stats = {
          kind: row.kind,
          pending: 0,
          running: 0,
          failed: 0,
          oldestPendingAgeMs: 0,
          oldestDueAgeMs: 0,
        }
        byKind.set(row.kind, stats)
      }
      const state = row.state as JobState
      if (state === 'pending' || state === 'running' || state === 'failed') stats[state] = Number(row.n)
      if (state === 'pending' && row.oldest)
        stats.oldestPendingAgeMs = Math.max(0, now - new Date(row.oldest).getTime())
      if (state === 'pending' && row.due)
        stats.oldestDueAgeMs = Math.max(0, now - new Date(row.due).getTime())
    }
    return [...byKind.values()].sort((a, b) => a.kind.localeCompare(b.kind))
  }

  /** Jobs of a kind counted by state and by one field of their payload (of an agent, or all). */
  async countByPayload(
    kind: string,
    field: string,
    agentId: string | null,
  ): Promise<{ value: string; state: JobState; count: number }[]> {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(field)) throw new Error(`not a payload field name: ${field}`)
    const rows = await this.db.$queryRawUnsafe<{ value: string; state: string; n: number | bigint }[]>(
      `SELECT ${this.dialect.jsonField('"payload"', field)} AS value, "state" AS state, COUNT(*) AS n FROM "Job"
        WHERE "kind" = ? ${agentId ? 'AND "agentId" = ?' : ''} GROUP BY 1, 2`,
      kind,
      ...(agentId ? [agentId] : []),
    )
    return rows.map((row) => ({
      value: String(row.value),
      state: row.state as JobState,
      count: Number(row.n),
    }))
  }

  /** Dead letters, newest first. */
  async failed(kind: string | null, agentId: string | null, limit: number): Promise<Job[]> {
    const rows = await this.db.job.findMany({
      where: { state: 'failed', ...(kind ? { kind } : {}), ...(agentId ? { agentId } : {}) },
      orderBy: { id: 'desc' },
      take: limit,
    })
    return rows.map((row) => toJob(row as unknown as JobRow))
  }

  /** Gives dead letters (of a kind, of an agent) a new set of attempts, due now. */
  async retryFailed(kind: string | null, agentId: string | null): Promise<number> {
    const { count } = await this.db.job.updateMany({
      where: { state: 'failed', ...(kind ? { kind } : {}), ...(agentId ? { agentId } : {}) },
      data: { state: 'pending', attempts: 0, runAfter: this.clock.now(), updatedAt: this.clock.now() },
    })
    if (count > 0) this.notify()
    return count
  }

  async cancel(agentId: string, keys: readonly string[]): Promise<number> {
    if (keys.length === 0) return 0
    return this.db.$executeRawUnsafe(
      `DELETE FROM "Job" WHERE "agentId" = ? AND "state" IN ('pending', 'failed') AND "key" IN (${keys.map(() => '?').join(', ')})`,
      agentId,
      ...keys,
    )
  }

  /** Removes an agent's jobs, in the transaction that removes its data. */
  async removeAgent(agentId: string, executor: Executor = this.db): Promise<number> {
    return executor.$executeRawUnsafe(`DELETE FROM "Job" WHERE "agentId" = ?`, agentId)
  }

  /** One row of insertJobs' VALUES. */
  private rowParams(job: NewJob): unknown[] {
    const now = this.clock.now()
    const at = sqliteDate(now)
    return [
      job.kind,
      job.agentId,
      job.key,
      JSON.stringify(job.payload ?? {}),
      sqliteDate(job.runAfter ?? now),
      at,
    ]
  }

  /** INSERT_JOB's parameters: a row's, then the agent and key its NOT EXISTS checks. */
  private insertParams(job: NewJob): unknown[] {
    const row = this.rowParams(job)
    return [...row, row[5], job.agentId, job.key]
  }

  private postponeParams(job: NewJob): unknown[] {
    const runAfter = sqliteDate(job.runAfter ?? this.clock.now())
    return [runAfter, sqliteDate(this.clock.now()), job.agentId, job.key, runAfter]
  }

  /** Wakes the workers after jobs were queued by an adapter's own statement (a batched enqueue). */
  jobsQueued(): void {
    this.notify()
  }

  private notify(): void {
    for (const listener of this.listeners) listener()
  }
}

function toJob(row: JobRow): Job {
  return {
    id: Number(row.id),
    kind: row.kind,
    agentId: row.agentId,
    key: row.key,
    payload: parsePayload(row.payload),
    state: row.state as JobState,
    attempts: Number(row.attempts),
    runAfter: new Date(row.runAfter),
    leaseOwner: row.leaseOwner,
    leaseUntil: row.leaseUntil === null ? null : new Date(row.leaseUntil),
    lastError: row.lastError,
    createdAt: new Date(row.createdAt),
  }
}

function parsePayload(text: string): Record<string, unknown> {
  try {
    const value = JSON.parse(text) as unknown
    return value && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {}
  } catch {
    return {}
  }
}

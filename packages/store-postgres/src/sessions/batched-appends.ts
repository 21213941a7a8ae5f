import { type Clock, type MessageToStore, type NewJob, type Session, ValidationError } from '@engram/core'
import {
  type AppendResult,
  type Database,
  type MessageAppend,
  PrismaSessionRepository,
  type Session as SessionRow,
  type SqliteJobQueue,
  sqliteDate,
  type Transaction,
} from '@engram/store-sqlite'
import { refuseNul, unavailable } from '../db/client.ts'

/**
 * Messages one batched transaction writes at most (the appends it takes, whole, until the next
 * would pass this; one append is always taken). Measured on postgresql-15 here (1,000 concurrent
 * addMessage, pool 4; docs/postgres-redis.md): 64 and 256 alike within this machine's noise,
 * 1,000 slower (one long transaction the next appends wait behind); a batch of 256 takes well
 * under a second.
 */
export const DEFAULT_APPEND_BATCH_MESSAGES = 256
/** Above this a batch's inserts could pass Postgres's 65,535 bind parameters. */
export const MAX_APPEND_BATCH_MESSAGES = 4_000

export interface AppendBatchOptions {
  /** Messages one transaction writes at most (DEFAULT_APPEND_BATCH_MESSAGES). */
  maxMessages?: number
}

interface Waiting extends MessageAppend {
  resolve: (result: AppendResult) => void
  reject: (error: unknown) => void
}

/**
 * The session repository on Postgres, with a replica's concurrent appends batched. Alone, each
 * append is an interactive transaction holding one of the pool's connections for several round
 * trips, so a burst queues for connections (and past Prisma's wait it fails). Here one
 * transaction is open for appends at a time; the appends that arrive while it runs wait, and the
 * next transaction takes them all (up to `maxMessages`), written by the same code as a single
 * append (`writeAppends`: one multi-row insert per table, one counter update per session, the
 * jobs in order, the full-text tokens from the client). No timer: a batch is what arrived while
 * the previous one was being written (and while its own transaction began).
 *
 * Each caller gets its own answer. Input the server would refuse (U+0000) is refused to its
 * caller before it joins a batch; when a batch's transaction fails anyway (its session deleted
 * meanwhile, …), its appends are written again one by one, each in its own transaction, so only
 * the guilty one fails, with the error it would have had alone. A server that cannot be reached
 * fails the whole batch with UnavailableError, untried one by one.
 *
 * Order: batches run one after another and each writes its appends in arrival order, so a
 * conversation's messages keep the order their appends were acknowledged in.
 */
export class PostgresSessionRepository extends PrismaSessionRepository {
  private readonly maxMessages: number
  private readonly waiting: Waiting[] = []
  private writing = false
  private readonly database: Database

  constructor(
    db: Database,
    /** The job queue's clock: the batched jobs' times are the engine's, as the queue's own are. */
    private readonly clock: Clock,
    jobs?: { queue: SqliteJobQueue; jobsFor?: (scope: string, messageIds: number[]) => NewJob[] },
    options: AppendBatchOptions = {},
  ) {
    super(db, jobs)
    this.database = db
    this.maxMessages = appendBatchSize(options.maxMessages)
  }

  override async appendMessages(session: Session, messages: MessageToStore[]): Promise<AppendResult> {
    // Validated before it joins a batch: a refusal is this caller's alone.
    refuseNul({
      data: messages.map((m) => ({ role: m.role, speaker: m.speaker, content: m.content })),
    })
    return new Promise<AppendResult>((resolve, reject) => {
      this.waiting.push({ session, messages, resolve, reject })
      if (!this.writing) void this.drain()
    })
  }

  private async drain(): Promise<void> {
    this.writing = true
    try {
      while (this.waiting.length > 0) await this.writeBatch()
    } finally {
      this.writing = false
    }
  }

  /**
   * Every session's count in one statement. The rows are locked in id order first (the CTE), as
   * the one-by-one updates do, so two replicas' batches sharing sessions cannot deadlock.
   */
  protected override async addToCounts(
    tx: Transaction,
    added: ReadonlyMap<string, number>,
  ): Promise<Map<string, SessionRow>> {
    const ids = [...added.keys()]
    const rows = await tx.$queryRawUnsafe<SessionRow[]>(
      `WITH "locked" AS (
         SELECT "id" FROM "Session" WHERE "id" = ANY(CAST(? AS text[])) ORDER BY "id" FOR NO KEY UPDATE)
       UPDATE "Session" s SET "messageCount" = s."messageCount" + v."n", "updatedAt" = CAST(? AS timestamptz)
       FROM unnest(CAST(? AS text[]), CAST(? AS integer[])) AS v("id", "n"), "locked" l
       WHERE s."id" = v."id" AND l."id" = v."id"
       RETURNING s.*`,
      ids,
      // Prisma fills updatedAt with the wall clock, not the injected one: so does this.
      new Date(),
      ids,
      ids.map((id) => added.get(id) as number),
    )
    return new Map(
      rows.map((row) => [
        row.id,
        { ...row, createdAt: new Date(row.createdAt), updatedAt: new Date(row.updatedAt) },
      ]),
    )
  }

  /**
   * The batch's jobs in two statements instead of one or two per job, with the effect the jobs
   * queued one by one would have: per (agent, key), the first job is the one inserted (unless
   * one is pending already), and each postponing job moves the pending one's start later.
   */
  protected override async enqueueJobs(
    queue: SqliteJobQueue,
    tx: Transaction,
    jobs: readonly NewJob[],
  ): Promise<void> {
    const now = this.clock.now()
    const byKey = new Map<string, { job: NewJob; insertAt: Date; postponeTo: Date | null }>()
    for (const job of jobs) {
      const runAfter = job.runAfter ?? now
      const key = `${job.agentId}\u0000${job.key}`
      const known = byKey.get(key)
      if (!known) {
        byKey.set(key, { job, insertAt: runAfter, postponeTo: job.postpone ? runAfter : null })
      } else if (job.postpone) {
        if (runAfter > known.insertAt) known.insertAt = runAfter
        if (!known.postponeTo || runAfter > known.postponeTo) known.postponeTo = runAfter
      }
    }
    const merged = [...byKey.values()]
    const stamp = sqliteDate(now)
    const postponed = merged.filter((m) => m.postponeTo !== null)
    if (postponed.length > 0)
      await tx.$executeRawUnsafe(
        `UPDATE "Job" j SET "runAfter" = v."runAfter", "updatedAt" = CAST(? AS timestamptz)
         FROM json_to_recordset(CAST(? AS json)) AS v("agentId" text, "key" text, "runAfter" timestamptz)
         WHERE j."agentId" = v."agentId" AND j."key" = v."key" AND j."state" = 'pending' AND j."runAfter" < v."runAfter"`,
        stamp,
        JSON.stringify(
          postponed.map((m) => ({
            agentId: m.job.agentId,
            key: m.job.key,
            runAfter: sqliteDate(m.postponeTo as Date),
          })),
        ),
      )
    // In the jobs' order (ids follow it: claims take a key's jobs oldest first).
    const added = await tx.$executeRawUnsafe(
      `INSERT INTO "Job" ("kind", "agentId", "key", "payload", "state", "attempts", "runAfter", "createdAt", "updatedAt")
       SELECT v."kind", v."agentId", v."key", v."payload", 'pending', 0, v."runAfter", CAST(? AS timestamptz), CAST(? AS timestamptz)
       FROM ROWS FROM (json_to_recordset(CAST(? AS json))
         AS ("kind" text, "agentId" text, "key" text, "payload" text, "runAfter" timestamptz))
         WITH ORDINALITY AS v("kind", "agentId", "key", "payload", "runAfter", "n")
       WHERE NOT EXISTS (SELECT 1 FROM "Job" q WHERE q."agentId" = v."agentId" AND q."key" = v."key" AND q."state" = 'pending')
       ORDER BY v."n"`,
      stamp,
      stamp,
      JSON.stringify(
        merged.map((m) => ({
          kind: m.job.kind,
          agentId: m.job.agentId,
          key: m.job.key,
          payload: JSON.stringify(m.job.payload ?? {}),
          runAfter: sqliteDate(m.insertAt),
        })),
      ),
    )
    if (added > 0) queue.jobsQueued()
  }

  /** The next appends, in arrival order, up to the batch's size (at least one). */
  private take(): Waiting[] {
    let messages = 0
    let count = 0
    for (const append of this.waiting) {
      if (count > 0 && messages + append.messages.length > this.maxMessages) break
      messages += append.messages.length
      count++
    }
    return this.waiting.splice(0, count)
  }

  private async writeBatch(): Promise<void> {
    const taken: { batch: Waiting[] | null } = { batch: null }
    let results: AppendResult[]
    try {
      results = await this.database.$transaction(async (tx) => {
        // Taken once the transaction has its connection: what arrived meanwhile joins it.
        taken.batch = this.take()
        return this.writeAppends(tx, taken.batch)
      })
    } catch (error) {
      // The transaction never began (no connection in time): the appends next in line fail with it.
      const failed = taken.batch ?? this.take()
      const down = unavailable(error)
      if (failed.length === 1 || down) {
        for (const append of failed) append.reject(down ?? error)
        return
      }
      for (const append of failed) {
        try {
          append.resolve(await super.appendMessages(append.session, append.messages))
        } catch (own) {
          append.reject(own)
        }
      }
      return
    }
    const batch = taken.batch ?? []
    for (const [i, append] of batch.entries()) append.resolve(results[i] as AppendResult)
  }
}

/** The batch size asked for, checked against the statement's parameter limit. */
export function appendBatchSize(asked: number | undefined): number {
  if (asked === undefined) return DEFAULT_APPEND_BATCH_MESSAGES
  if (!Number.isInteger(asked) || asked < 1 || asked > MAX_APPEND_BATCH_MESSAGES)
    throw new ValidationError([
      {
        field: 'appendBatch.maxMessages',
        message: `must be a whole number from 1 to ${MAX_APPEND_BATCH_MESSAGES} (got ${asked})`,
        limit: MAX_APPEND_BATCH_MESSAGES,
      },
    ])
  return asked
}

import { type MessageToStore, type NewJob, type Session, ValidationError } from '@engram/core'
import {
  type AppendResult,
  type Database,
  type MessageAppend,
  PrismaSessionRepository,
  type SqliteJobQueue,
} from '@engram/store-sqlite'
import { refuseNul, unavailable } from '../db/client.ts'

/**
 * Messages one batched transaction writes at most (the appends it takes, whole, until the next
 * would pass this; one append is always taken). Measured on postgresql-15 here (1,000 concurrent
 * addMessage, pool 4; docs/postgres-redis.md): the gain flattens well below it, and it keeps one
 * statement's parameters (13 per message row) far under Postgres's 65,535.
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
    jobs?: { queue: SqliteJobQueue; jobsFor?: (scope: string, messageIds: number[]) => NewJob[] },
    options: AppendBatchOptions = {},
  ) {
    super(db, jobs)
    this.database = db
    this.maxMessages = appendBatchSize(options.maxMessages)
  }

  override appendMessages(session: Session, messages: MessageToStore[]): Promise<AppendResult> {
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
    taken.batch?.forEach((append, i) => append.resolve(results[i] as AppendResult))
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

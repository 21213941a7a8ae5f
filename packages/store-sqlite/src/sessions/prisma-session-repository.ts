import { randomUUID } from 'node:crypto'
import {
  type MessageToStore,
  type NewJob,
  NotFoundError,
  type Session,
  type SessionRepository,
  type StoredMessage,
  ValidationError,
} from '@engram/core'
import type { MessageJobProducer, TurnRecorder, TurnToRecord } from '@engram/engine'
import {
  type AppendInserts,
  type Database,
  type DirectSqlite,
  directSqlite,
  type SyncStatements,
  sqliteDate,
  type Transaction,
  writePaths,
} from '../db/client.ts'
import { recordTurnIn, recordTurnInTransaction } from '../formation/sqlite-summaries.ts'
import type { Session as SessionRow } from '../generated/prisma/client.ts'
import type { SqliteJobQueue } from '../jobs/sqlite-job-queue.ts'
import { parseMetadata, parseRowId, toMessage, toSession } from '../mappers.ts'

/** The most speakers `participants` lists: enough for any conversation, bounded for a crowded agent. */
export const MAX_PARTICIPANTS = 1_000
/**
 * An agent's distinct speakers, most messages first (ties by name, so the list is stable). Read
 * from the (agentId, speaker) index alone, without touching the messages.
 */
export const PARTICIPANTS_SQL = `SELECT "speaker" FROM "Message" WHERE "agentId" = ? AND "speaker" IS NOT NULL
  GROUP BY "speaker" ORDER BY count(*) DESC, "speaker" LIMIT ?`

/** Attempts at creating a session while another process's commits keep failing it as busy. */
const SESSION_CREATE_ATTEMPTS = 5

/** One appendMessages call: messages for one session. */
export interface MessageAppend {
  session: Session
  messages: MessageToStore[]
}

export type AppendResult = { session: Session; messages: StoredMessage[] }

/** Message rows per INSERT of a group (10 parameters each, well under SQLite's 32,766). */
const MESSAGES_PER_INSERT = 500

const MESSAGE_COLUMNS = `"sessionId", "agentId", "role", "speaker", "content", "tokenCount", "isCompressed", "metadata", "timestamp", "createdAt"`
const INSERT_MESSAGE = `INSERT INTO "Message" (${MESSAGE_COLUMNS})
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
const INSERT_ENTRY = `INSERT INTO "MemoryEntry" ("agentId", "sessionId", "messageId", "type", "role", "content", "tokenCount", "relevance", "metadata", "timestamp", "createdAt", "updatedAt")
           VALUES (?, ?, ?, 'short_term', ?, ?, ?, ?, ?, ?, ?, ?)`
const ADD_TO_COUNT = `UPDATE "Session" SET "messageCount" = "messageCount" + ?, "updatedAt" = ? WHERE "id" = ? RETURNING *`

/** One message row's values, in MESSAGE_COLUMNS' order (both inserts bind them). */
function messageValues(
  session: Session,
  message: MessageToStore,
  metadata: string,
  timestamp: string,
  now: string,
): unknown[] {
  return [
    session.id,
    session.scope,
    message.role,
    message.speaker,
    message.content,
    message.tokenCount,
    message.isCompressed ? 1 : 0,
    metadata,
    timestamp,
    now,
  ]
}

/** INSERT_MESSAGE for `count` rows in one statement, returning their ids. */
function insertMessages(count: number): string {
  const rows = Array.from({ length: count }, () => '(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)').join(', ')
  return `INSERT INTO "Message" (${MESSAGE_COLUMNS}) VALUES ${rows} RETURNING "id"`
}

/** An append waiting for its group's write (AppendInserts 'per-commit'). */
interface QueuedAppend {
  session: Session
  messages: MessageToStore[]
  /** The wall clock when it was asked for, as Prisma would fill createdAt / updatedAt. */
  now: string
  resolve: (result: AppendResult) => void
  reject: (error: unknown) => void
}

/**
 * The session manager's storage in SQLite. Every message also becomes a short-term memory entry
 * (spec data flow, steps 2-4), written in the same transaction.
 */
/** A Session row as a prepared statement returns it (dates as SQLite stores them). */
interface SessionLookup {
  id: string
  agentId: string
  conversationId: string
  messageCount: number
  createdAt: string | number
  updatedAt: string | number
}

export class PrismaSessionRepository implements SessionRepository {
  private readonly direct: DirectSqlite | null
  private readonly producers: MessageJobProducer[] = []
  private readonly recorders: TurnRecorder[] = []
  private readonly appendInserts: AppendInserts
  private readonly appendsPerGroup: number
  /** The appends that will share the next group's write, while it has not run yet. */
  private appendGroup: QueuedAppend[] | null = null
  private readonly jobs: {
    queue: SqliteJobQueue
    jobsFor: (session: Session, ids: number[]) => NewJob[]
  } | null

  constructor(
    private readonly db: Database,
    /**
     * Jobs to queue for stored messages (their embedding; their extraction once the engine adds
     * its producer), in the same transaction: a crash right after the write cannot leave a
     * message that nothing will embed or extract.
     */
    jobs?: {
      queue: SqliteJobQueue
      jobsFor?: (scope: string, messageIds: number[]) => NewJob[]
    },
  ) {
    this.direct = directSqlite(db)
    this.appendInserts = writePaths(db).appendInserts
    this.appendsPerGroup = writePaths(db).appendsPerGroup
    if (jobs?.jobsFor) this.producers.push(jobs.jobsFor)
    this.jobs = jobs
      ? {
          queue: jobs.queue,
          jobsFor: (session, ids) =>
            this.producers.flatMap((produce) => produce(session.scope, ids, session)),
        }
      : null
  }

  /** Adds a producer of jobs queued with every batch of stored messages (needs the queue given at construction). */
  addMessageJobs(producer: MessageJobProducer): void {
    if (!this.jobs) throw new Error('this session repository was built without a job queue')
    this.producers.push(producer)
  }

  /**
   * Adds the summary cursor's write to every append's transaction, its jobs queued with the
   * messages' (needs the queue given at construction): one commit per turn, not two.
   */
  addTurnRecorder(recorder: TurnRecorder): void {
    if (!this.jobs) throw new Error('this session repository was built without a job queue')
    this.recorders.push(recorder)
  }

  /** The cursor writes the recorders ask for with this append (none when they leave it to after the commit). */
  private turnsToRecord(session: Session, messages: readonly MessageToStore[]): TurnToRecord[] {
    const turns: TurnToRecord[] = []
    for (const recorder of this.recorders) {
      const turn = recorder(session, messages)
      if (turn) turns.push(turn)
    }
    return turns
  }

  async findSession(scope: string, conversationId: string): Promise<Session | null> {
    // A prepared statement where there is one: every addMessage after another process wrote to
    // the agent finds its session again (that process's cache:invalidate dropped the cached one),
    // and Prisma's query costs ~10x the lookup itself (load bench, two server processes).
    if (this.direct) {
      const found = await this.direct.get<SessionLookup>(
        `SELECT "id", "agentId", "conversationId", "messageCount", "createdAt", "updatedAt" FROM "Session" WHERE "agentId" = ? AND "conversationId" = ?`,
        scope,
        conversationId,
      )
      return found
        ? toSession({
            ...found,
            createdAt: new Date(found.createdAt),
            updatedAt: new Date(found.updatedAt),
          } as unknown as SessionRow)
        : null
    }
    const row = await this.db.session.findUnique({
      where: { agentId_conversationId: { agentId: scope, conversationId } },
    })
    return row ? toSession(row) : null
  }

  async createSession(scope: string, conversationId: string, now: Date): Promise<Session> {
    for (let attempt = 1; ; attempt++) {
      try {
        const row = await this.db.session.upsert({
          where: { agentId_conversationId: { agentId: scope, conversationId } },
          create: { id: randomUUID(), agentId: scope, conversationId, createdAt: now },
          update: {},
        })
        return toSession(row)
      } catch (error) {
        const code = (error as { code?: string }).code
        // SQLite shared by several processes (replicas): the upsert's deferred transaction reads,
        // then writes, and a commit by another process in between fails the write at once with
        // SQLITE_BUSY (Prisma's P1008; a WAL snapshot cannot be upgraded, so busy_timeout does not
        // apply). Another attempt starts from a fresh snapshot. Seen in replicas.test.ts.
        if (code === 'P1008' && attempt < SESSION_CREATE_ATTEMPTS) continue
        // With concurrent writers (Postgres) two first messages of one conversation can both find
        // no session and both insert one: the loser reads the winner's, as SQLite's single writer would.
        if (code !== 'P2002') throw error
        const existing = await this.findSession(scope, conversationId)
        if (!existing) throw error
        return existing
      }
    }
  }

  async appendMessages(session: Session, messages: MessageToStore[]) {
    if (this.direct)
      return this.appendInserts === 'per-commit'
        ? this.appendInGroup(this.direct, session, messages)
        : this.appendDirect(this.direct, session, messages)
    const [result] = await this.db.$transaction((tx) => this.writeAppends(tx, [{ session, messages }]))
    if (!result) throw new Error('writeAppends returned no result')
    return result
  }

  /**
   * Writes several appends (of one session or many) in the caller's transaction, in the order
   * given, and answers each as if it had been written alone: its own rows, and its session's count
   * right after it. Two multi-row inserts for the whole set, one counter update per session, the
   * jobs in order. SQLite does not promise RETURNING order; autoincrement ids do follow insertion
   * order (Postgres's sequence too, within one statement), so sorting by id restores it.
   */
  async writeAppends(tx: Transaction, appends: readonly MessageAppend[]): Promise<AppendResult[]> {
    const messages = appends.flatMap((append) => append.messages)
    const sessionOf = appends.flatMap((append) => append.messages.map(() => append.session))
    const inserted = await tx.message.createManyAndReturn({
      data: messages.map((message, i) => {
        const session = sessionOf[i] as Session
        return {
          sessionId: session.id,
          agentId: session.scope,
          role: message.role,
          speaker: message.speaker,
          content: message.content,
          tokenCount: message.tokenCount,
          isCompressed: message.isCompressed,
          metadata: JSON.stringify(message.metadata),
          timestamp: message.timestamp,
        }
      }),
    })
    const rows = inserted.sort((a, b) => a.id - b.id)
    await tx.memoryEntry.createMany({
      data: rows.map((row, i) => ({
        agentId: row.agentId,
        sessionId: row.sessionId,
        messageId: row.id,
        type: 'short_term',
        role: row.role,
        content: row.content,
        tokenCount: row.tokenCount,
        relevance: (messages[i] as MessageToStore).initialRelevance,
        metadata: row.metadata,
        timestamp: row.timestamp,
      })),
    })
    const added = new Map<string, number>()
    for (const append of appends)
      added.set(append.session.id, (added.get(append.session.id) ?? 0) + append.messages.length)
    const updated = await this.addToCounts(tx, added)
    const results: AppendResult[] = []
    const jobs: NewJob[] = []
    let next = 0
    for (const append of appends) {
      const own = rows.slice(next, next + append.messages.length)
      next += append.messages.length
      const after = updated.get(append.session.id)
      // The session went (deleted meanwhile): the rows above roll back with this throw.
      if (!after) throw new NotFoundError('Session', append.session.conversationId)
      // The count this append left: the session's final count less what later appends of the
      // same session in this set added.
      const later = (added.get(append.session.id) ?? 0) - append.messages.length
      added.set(append.session.id, later)
      results.push({
        session: toSession({ ...after, messageCount: after.messageCount - later }),
        messages: own.map(toMessage),
      })
      if (this.jobs)
        jobs.push(
          ...this.jobs.jobsFor(
            append.session,
            own.map((row) => row.id),
          ),
        )
      // In arrival order: a later append of the same agent sees this one's cursor as its previous.
      for (const turn of this.turnsToRecord(append.session, append.messages)) {
        const { scope, conversationId } = append.session
        jobs.push(
          ...turn.jobsFor(await recordTurnInTransaction(tx, scope, conversationId, turn.at, turn.tokens)),
        )
      }
    }
    if (this.jobs && jobs.length > 0) await this.enqueueJobs(this.jobs.queue, tx, jobs)
    return results
  }

  /**
   * Adds each session's new messages to its count; the sessions as they are after it. One update
   * per session, taken in id order: two writers' sets sharing sessions lock their rows in the same
   * order, so they cannot deadlock each other. An adapter may do it in one statement.
   */
  protected async addToCounts(
    tx: Transaction,
    added: ReadonlyMap<string, number>,
  ): Promise<Map<string, SessionRow>> {
    const updated = new Map<string, SessionRow>()
    for (const id of [...added.keys()].sort()) {
      const increment = added.get(id) as number
      updated.set(id, await tx.session.update({ where: { id }, data: { messageCount: { increment } } }))
    }
    return updated
  }

  /** Queues the appends' jobs in their transaction, in order. An adapter may do it in fewer statements. */
  protected async enqueueJobs(
    queue: SqliteJobQueue,
    tx: Transaction,
    jobs: readonly NewJob[],
  ): Promise<void> {
    await queue.enqueue(jobs, tx)
  }

  /**
   * The same rows as the Prisma path, written by prepared statements in one synchronous
   * transaction (the hot path: every addMessage). Ids follow insertion order.
   */
  private async appendDirect(direct: DirectSqlite, session: Session, messages: MessageToStore[]) {
    // Prisma fills createdAt / updatedAt with the wall clock, not the injected one: so does this.
    const now = sqliteDate(new Date())
    const result = await direct.write((sql) => this.writeAppend(sql, session, messages, now))
    direct.committed.appends++
    return result
  }

  /** One append's own statements, in the order they always ran (the per-append path). */
  private writeAppend(
    sql: SyncStatements,
    session: Session,
    messages: MessageToStore[],
    now: string,
  ): AppendResult {
    const stored: StoredMessage[] = []
    for (const message of messages) {
      const metadata = JSON.stringify(message.metadata)
      const timestamp = sqliteDate(message.timestamp)
      const { lastInsertRowid } = sql.run(
        INSERT_MESSAGE,
        ...messageValues(session, message, metadata, timestamp, now),
      )
      insertEntry(sql, session, message, Number(lastInsertRowid), metadata, timestamp, now)
      stored.push(storedMessage(session, message, Number(lastInsertRowid), metadata))
    }
    const updated = sql.get<SessionRecord>(ADD_TO_COUNT, messages.length, now, session.id)
    // The session went (deleted meanwhile): the rows above roll back with this throw.
    if (!updated) throw new NotFoundError('Session', session.conversationId)
    if (this.jobs) {
      const jobs = this.jobs.jobsFor(
        session,
        stored.map((message) => Number(message.id)),
      )
      for (const turn of this.turnsToRecord(session, messages))
        jobs.push(
          ...turn.jobsFor(recordTurnIn(sql, session.scope, session.conversationId, turn.at, turn.tokens)),
        )
      this.jobs.queue.enqueueIn(sql, jobs)
    }
    return { session: sessionOf(updated), messages: stored }
  }

  /**
   * appendDirect for the appends of one group commit together (AppendInserts 'per-commit'): the
   * appends asked for before the group's write runs join it, and it writes them as one. The
   * statements that open a statement journal (the session counter's UPDATE, whose foreign keys
   * cascade; the summary cursor's upsert) come first, then all the group's messages in one INSERT,
   * their memory entries, and their jobs: FTS5 flushes its pending terms at every statement
   * journal, so the full-text index writes one segment for the group instead of one per message.
   * When one append fails the write (its session deleted meanwhile, a refused cursor), nothing of
   * the group is stored and each append runs again on its own, with its own answer.
   */
  private appendInGroup(direct: DirectSqlite, session: Session, messages: MessageToStore[]) {
    // Prisma fills createdAt / updatedAt with the wall clock, not the injected one: so does this.
    const now = sqliteDate(new Date())
    return new Promise<AppendResult>((resolve, reject) => {
      const queued: QueuedAppend = { session, messages, now, resolve, reject }
      const open = this.appendGroup
      if (open && open.length < this.appendsPerGroup) {
        open.push(queued)
        return
      }
      const group = [queued]
      this.appendGroup = group
      let failedInside = false
      direct
        .write((sql) => {
          // Appends asked for from here on form the next group. (A group commit may run this
          // twice, after a rollback: the same group both times.)
          if (this.appendGroup === group) this.appendGroup = null
          try {
            return this.writeGroup(sql, group)
          } catch (error) {
            failedInside = true
            throw error
          }
        })
        .then(
          (results) => {
            direct.committed.appends += group.length
            group.forEach((append, i) => {
              append.resolve(results[i] as AppendResult)
            })
          },
          (error) => {
            // Refused before it ran (the connection did not open, the write lock never came):
            // later appends must not join a group nothing will write.
            if (this.appendGroup === group) this.appendGroup = null
            // BEGIN or COMMIT failed: the answer for all. (A lone append runs again too: its
            // statements here differ in order, and so could its error.)
            if (!failedInside) for (const append of group) append.reject(error)
            else
              for (const append of group)
                this.appendDirect(direct, append.session, append.messages).then(append.resolve, append.reject)
          },
        )
    })
  }

  private writeGroup(sql: SyncStatements, group: readonly QueuedAppend[]): AppendResult[] {
    // One message alone writes one segment either way: its own statements cost less than the
    // group's (no multi-row statement, no arrays across appends). Its answer is the same.
    const only = group.length === 1 ? (group[0] as QueuedAppend) : null
    if (only && only.messages.length === 1)
      return [this.writeAppend(sql, only.session, only.messages, only.now)]
    // In arrival order: an append's count and cursor are those it left, as when written alone.
    const counts = group.map(({ session, messages, now }) => {
      const updated = sql.get<SessionRecord>(ADD_TO_COUNT, messages.length, now, session.id)
      // The session went (deleted meanwhile): the group rolls back with this throw.
      if (!updated) throw new NotFoundError('Session', session.conversationId)
      return updated
    })
    const turnJobs = group.map(({ session, messages }) =>
      this.jobs
        ? this.turnsToRecord(session, messages).flatMap((turn) =>
            turn.jobsFor(recordTurnIn(sql, session.scope, session.conversationId, turn.at, turn.tokens)),
          )
        : [],
    )
    const rows = group.flatMap((append) =>
      append.messages.map((message) => ({
        append,
        message,
        metadata: JSON.stringify(message.metadata),
        timestamp: sqliteDate(message.timestamp),
      })),
    )
    const ids: number[] = []
    for (let at = 0; at < rows.length; at += MESSAGES_PER_INSERT) {
      const chunk = rows.slice(at, at + MESSAGES_PER_INSERT)
      const params = chunk.flatMap(({ append, message, metadata, timestamp }) =>
        messageValues(append.session, message, metadata, timestamp, append.now),
      )
      // RETURNING's order is not promised; autoincrement ids follow insertion order.
      const returned = sql.all<{ id: number | bigint }>(insertMessages(chunk.length), ...params)
      ids.push(...returned.map((row) => Number(row.id)).sort((a, b) => a - b))
    }
    rows.forEach(({ append, message, metadata, timestamp }, i) => {
      insertEntry(sql, append.session, message, ids[i] as number, metadata, timestamp, append.now)
    })
    const results: AppendResult[] = []
    let next = 0
    group.forEach(({ session, messages }, i) => {
      const stored = rows
        .slice(next, next + messages.length)
        .map(({ message, metadata }, j) => storedMessage(session, message, ids[next + j] as number, metadata))
      next += messages.length
      if (this.jobs) {
        const jobs = this.jobs.jobsFor(
          session,
          stored.map((message) => Number(message.id)),
        )
        jobs.push(...(turnJobs[i] as NewJob[]))
        this.jobs.queue.enqueueIn(sql, jobs)
      }
      results.push({ session: sessionOf(counts[i] as SessionRecord), messages: stored })
    })
    return results
  }

  async listMessagesBefore(session: Session, olderThanId: string): Promise<StoredMessage[]> {
    const pivot = await this.pivot(this.db, session, olderThanId)
    const rows = await this.db.message.findMany({
      where: { sessionId: session.id, isCompressed: false, ...olderThan(pivot) },
      orderBy: [{ timestamp: 'asc' }, { id: 'asc' }],
    })
    return rows.map(toMessage)
  }

  async compressMessagesBefore(session: Session, olderThanId: string, summary: MessageToStore) {
    return this.db.$transaction(async (tx) => {
      const pivot = await this.pivot(tx, session, olderThanId)
      const { count } = await tx.message.updateMany({
        where: { sessionId: session.id, isCompressed: false, ...olderThan(pivot) },
        data: { isCompressed: true },
      })
      const row = await tx.message.create({
        data: {
          sessionId: session.id,
          agentId: session.scope,
          role: summary.role,
          speaker: summary.speaker,
          content: summary.content,
          tokenCount: summary.tokenCount,
          metadata: JSON.stringify(summary.metadata),
          timestamp: summary.timestamp,
        },
      })
      const updated = await tx.session.update({
        where: { id: session.id },
        data: { messageCount: { increment: 1 } },
      })
      if (this.jobs) await this.jobs.queue.enqueue(this.jobs.jobsFor(session, [row.id]), tx)
      return { session: toSession(updated), compressedCount: count, summaryMessage: toMessage(row) }
    })
  }

  /**
   * Who speaks in the agent's conversations: its messages' distinct speakers, most frequent first,
   * at most `limit` (MAX_PARTICIPANTS). Search uses it to tell a participant's name in a query
   * from a word to match.
   */
  async participants(scope: string, limit = MAX_PARTICIPANTS): Promise<string[]> {
    const take = Number.isFinite(limit) ? Math.max(0, Math.min(Math.trunc(limit), MAX_PARTICIPANTS)) : 0
    if (take === 0) return []
    const rows = this.direct
      ? await this.direct.all<{ speaker: string }>(PARTICIPANTS_SQL, scope, take)
      : await this.db.$queryRawUnsafe<{ speaker: string }[]>(PARTICIPANTS_SQL, scope, take)
    return rows.map((row) => row.speaker)
  }

  async deleteSession(scope: string, conversationId: string): Promise<boolean> {
    const { count } = await this.db.session.deleteMany({ where: { agentId: scope, conversationId } })
    return count > 0
  }

  private async pivot(db: Database | Transaction, session: Session, olderThanId: string) {
    const id = parseRowId(olderThanId)
    if (id == null)
      throw new ValidationError([
        { field: 'olderThanId', message: 'must be a message id (a positive integer)' },
      ])
    const row = await db.message.findFirst({ where: { id, sessionId: session.id } })
    if (!row) throw new NotFoundError('Message', olderThanId)
    return row
  }
}

/** A Session row as `RETURNING *` gives it (dates as SQLite stores them). */
type SessionRecord = Record<keyof SessionRow, string | number>

function sessionOf(record: SessionRecord): Session {
  return toSession({
    ...record,
    createdAt: new Date(record.createdAt),
    updatedAt: new Date(record.updatedAt),
  } as unknown as SessionRow)
}

/** A message's short-term memory entry (spec data flow, step 4), beside the message. */
function insertEntry(
  sql: SyncStatements,
  session: Session,
  message: MessageToStore,
  messageId: number,
  metadata: string,
  timestamp: string,
  now: string,
): void {
  sql.run(
    INSERT_ENTRY,
    session.scope,
    session.id,
    messageId,
    message.role,
    message.content,
    message.tokenCount,
    message.initialRelevance,
    metadata,
    timestamp,
    now,
    now,
  )
}

function storedMessage(
  session: Session,
  message: MessageToStore,
  id: number,
  metadata: string,
): StoredMessage {
  return {
    id: String(id),
    sessionId: session.id,
    role: message.role,
    speaker: message.speaker,
    content: message.content,
    tokenCount: message.tokenCount,
    isCompressed: message.isCompressed,
    timestamp: new Date(message.timestamp),
    metadata: parseMetadata(metadata),
  }
}

/** Messages sort by (timestamp, id): imported histories carry their own times. */
function olderThan(pivot: { id: number; timestamp: Date }) {
  return {
    OR: [{ timestamp: { lt: pivot.timestamp } }, { timestamp: pivot.timestamp, id: { lt: pivot.id } }],
  }
}

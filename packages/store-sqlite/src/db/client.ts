import fs from 'node:fs'
import path from 'node:path'
import { PrismaBetterSqlite3 } from '@prisma/adapter-better-sqlite3'
import type BetterSqlite3 from 'better-sqlite3'
import { PrismaClient } from '../generated/prisma/client.ts'

export type Database = PrismaClient
/** The client handed to a transaction callback. */
export type Transaction = Parameters<Parameters<PrismaClient['$transaction']>[0]>[0]

/**
 * Set on the connection when it opens. WAL lets readers go on while one writer commits; with WAL,
 * synchronous=NORMAL syncs at checkpoints instead of every commit (a power cut may lose the last
 * commits, never corrupt the file). busy_timeout waits for another process's write lock.
 * secure_delete overwrites deleted rows and freed pages with zeros, so deleted text does not stay
 * readable in the file's free space (see AgentLifecycle.purge for the WAL and full-text segments).
 * auto_vacuum INCREMENTAL (effective on a new file; maintenance converts an older one) lets
 * maintenance return free pages to the file system without a full VACUUM.
 */
/** How long a statement waits for another process's lock before SQLITE_BUSY (ms). */
export const BUSY_TIMEOUT_MS = 5_000

export const CONNECTION_PRAGMAS = [
  'auto_vacuum = INCREMENTAL',
  'journal_mode = WAL',
  'synchronous = NORMAL',
  `busy_timeout = ${BUSY_TIMEOUT_MS}`,
  'foreign_keys = ON',
  'temp_store = MEMORY',
  'secure_delete = ON',
] as const

/** How often an open connection refreshes its query planner statistics (PRAGMA optimize). */
export const STATISTICS_REFRESH_MS = 60 * 60 * 1_000

/**
 * Gathers the statistics SQLite's query planner needs (ANALYZE through PRAGMA optimize, sampling
 * at most 400 rows per index so it stays in the tens of milliseconds). Without them the planner
 * guesses that `"agentId" = ?` is selective and walks an agent's whole index for
 * `"agentId" = ? AND "id" IN (...)` (bench: load, 5.5 ms instead of 0.13 ms per memory fetch for an
 * agent with 100K memories). `all` checks every table (at open); otherwise only those this
 * connection used. Failures are left for the next run: statistics only speed things up.
 */
export function refreshPlannerStatistics(
  connection: BetterSqlite3.Database,
  options: { all: boolean },
): void {
  try {
    connection.pragma('analysis_limit = 400')
    connection.pragma(options.all ? 'optimize = 0x10002' : 'optimize')
  } catch {
    // Busy or read-only: the planner keeps the statistics it has.
  }
}

const directs = new WeakMap<Database, DirectSqlite>()

export interface DatabaseOptions {
  /** A group commit's wait for another process's write lock on the event loop (ms); see DirectSqlite. */
  groupCommitLockWaitMs?: number
  /** When a group commit puts each write in a savepoint (GROUP_COMMIT_SAVEPOINTS, see GroupCommitSavepoints). */
  groupCommitSavepoints?: GroupCommitSavepoints
  /** How the jobs of rows a write just created are inserted (NEW_ROW_JOBS, see NewRowJobs). */
  newRowJobs?: NewRowJobs
  /** How the appends of one group commit insert their messages (APPEND_INSERTS, see AppendInserts). */
  appendInserts?: AppendInserts
  /** Appends one group's write carries at most (APPENDS_PER_GROUP). */
  appendsPerGroup?: number
}

/**
 * `plain` (the default): a job marked `ofNewRow` (a new message's embed job) is inserted with plain
 * VALUES; `checked`: like any job, `INSERT … SELECT … WHERE NOT EXISTS` a pending job of its key
 * (the statements before issue 18: a read of the queue's index per job, and a statement that needs
 * a statement journal). Kept so the two can be measured side by side (ENGRAM_SQLITE_NEW_ROW_JOBS).
 */
export type NewRowJobs = 'plain' | 'checked'
export const NEW_ROW_JOBS: NewRowJobs = 'plain'

/**
 * `per-commit` (the default): the appends a group commit takes write their counters and cursors
 * first, then every message of the batch in one INSERT, then the memory entries and jobs, so the
 * full-text index writes one segment per commit. `per-append`: each append runs its own statements
 * (the path before issue 18), and FTS5 writes a segment per message: its trigger makes every
 * message INSERT open a statement journal, and FTS5 flushes its pending terms whenever a statement
 * opens one (fts5SavepointMethod). Kept so the two can be measured side by side
 * (ENGRAM_SQLITE_APPEND_INSERTS).
 */
export type AppendInserts = 'per-commit' | 'per-append'
export const APPEND_INSERTS: AppendInserts = 'per-commit'
/**
 * Appends one group's write carries at most with `per-commit` (the rest start the next group, the
 * next commit): a transaction stays short, like MAX_GROUP_COMMIT's writes. Configurable, 1-4,096
 * (1: each append its own write, whatever AppendInserts says).
 */
export const APPENDS_PER_GROUP = 256

/** The write-path settings a database was opened with (their defaults for a client not made here). */
export interface WritePaths {
  newRowJobs: NewRowJobs
  appendInserts: AppendInserts
  appendsPerGroup: number
}
const writePathsOf = new WeakMap<Database, WritePaths>()

export function writePaths(db: Database): WritePaths {
  return (
    writePathsOf.get(db) ?? {
      newRowJobs: NEW_ROW_JOBS,
      appendInserts: APPEND_INSERTS,
      appendsPerGroup: APPENDS_PER_GROUP,
    }
  )
}

export function createDatabase(databaseFile: string, options: DatabaseOptions = {}): Database {
  fs.mkdirSync(path.dirname(databaseFile), { recursive: true })
  const factory = new PrismaBetterSqlite3({ url: `file:${databaseFile}`, timeout: BUSY_TIMEOUT_MS })
  const direct = new DirectSqlite(options.groupCommitLockWaitMs, options.groupCommitSavepoints)
  const connect = factory.connect.bind(factory)
  factory.connect = async () => {
    const adapter = await connect()
    direct.attach(adapter as unknown as PrismaAdapter)
    return adapter
  }
  const base = new PrismaClient({ adapter: factory })
  const db = withoutFindUniqueBatching(base)
  direct.connect = () => db.$connect()
  directs.set(db, direct)
  writePathsOf.set(db, {
    newRowJobs: options.newRowJobs ?? NEW_ROW_JOBS,
    appendInserts: options.appendInserts ?? APPEND_INSERTS,
    appendsPerGroup: Math.max(1, Math.min(4_096, Math.trunc(options.appendsPerGroup ?? APPENDS_PER_GROUP))),
  })
  return db
}

/**
 * findUnique calls started in the same tick are batched by Prisma into one query whose bound
 * parameters are not chunked (prisma/prisma#23957): a thousand concurrent addMessage calls bound
 * over SQLite's limit and every one of them failed. Each findUnique runs as the equivalent
 * findFirst instead (a compound unique key such as `agentId_conversationId: {...}` spread into its
 * fields), which Prisma never batches. The client's type is unchanged: only that method is routed.
 */
function withoutFindUniqueBatching(client: PrismaClient): PrismaClient {
  return client.$extends({
    query: {
      $allModels: {
        findUnique({ model, args }) {
          const delegate = (client as unknown as Record<string, { findFirst(a: unknown): Promise<unknown> }>)[
            model.charAt(0).toLowerCase() + model.slice(1)
          ] as { findFirst(a: unknown): Promise<unknown> }
          return delegate.findFirst({
            ...args,
            where: spreadCompoundKeys(args.where as Record<string, unknown>),
          })
        },
      },
    },
  }) as unknown as PrismaClient
}

/** `{ agentId_conversationId: { agentId, conversationId } }` → `{ agentId, conversationId }`. */
function spreadCompoundKeys(where: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(where)) {
    const compound =
      /^[A-Za-z]\w*_[A-Za-z]\w*$/.test(key) && value && typeof value === 'object' && !Array.isArray(value)
    if (compound) Object.assign(out, value)
    else out[key] = value
  }
  return out
}

/** The prepared-statement path beside Prisma, on Prisma's own connection (null for other clients). */
export function directSqlite(db: Database): DirectSqlite | null {
  return directs.get(db) ?? null
}

type Params = readonly unknown[]

/**
 * A read in raw SQL, on the cached prepared statements when the connection is the one Prisma's
 * better-sqlite3 adapter opened (search runs a dozen such reads per query: through Prisma each is
 * prepared anew and its rows converted twice), through Prisma otherwise. Integers may come back as
 * numbers or BigInts: callers convert with Number().
 */
export function readRows<Rows extends unknown[]>(
  db: Database,
  sql: string,
  ...params: Params
): Promise<Rows> {
  const direct = directSqlite(db)
  return (direct ? direct.all(sql, ...params) : db.$queryRawUnsafe<Rows>(sql, ...params)) as Promise<Rows>
}

/**
 * How a client other than SQLite's reads rows without Prisma (a Postgres pool's prepared
 * statements): `?` placeholders, rows as the driver gives them.
 */
export type HotRowReader = (sql: string, params: Params) => Promise<unknown[]>
const hotReaders = new WeakMap<object, HotRowReader>()

/** Registers (or with null removes) the reader `readHotRows` uses for a client. */
export function registerHotReader(db: object, reader: HotRowReader | null): void {
  if (reader) hotReaders.set(db, reader)
  else hotReaders.delete(db)
}

/** The reader registered for a client, if any. */
export function hotReaderOf(db: object): HotRowReader | null {
  return hotReaders.get(db) ?? null
}

/**
 * readRows for the few reads every search makes (its hits' rows and dialogue context): on a
 * client with a registered reader they skip Prisma's raw-query path, which on Postgres costs
 * more CPU than the statements themselves. Only for statements whose columns come back alike
 * from both (integers of 32 bits, text, booleans, floats, times): a 64-bit count or a numeric
 * would come back as a string from the driver, a BigInt or Decimal from Prisma.
 */
export function readHotRows<Rows extends unknown[]>(
  db: Database,
  sql: string,
  ...params: Params
): Promise<Rows> {
  const reader = hotReaders.get(db)
  return (reader ? reader(sql, params) : readRows(db, sql, ...params)) as Promise<Rows>
}
interface QueuedWrite {
  work: (sql: SyncStatements) => unknown
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}
/** Writes per group commit at most, so one transaction stays short. */
export const MAX_GROUP_COMMIT = 256

/**
 * How long a group commit's BEGIN IMMEDIATE waits, blocking the event loop, for another process's
 * write lock before it hands the loop back and tries again (ms). The connection's busy_timeout
 * (5 s) would block every request of the process for as long as the other holds the lock; with
 * several server processes on one file (ENGRAM_WORKERS) that stalled them all, and a process
 * descheduled while holding the lock made waits run out ("database is locked", load bench).
 */
export const GROUP_COMMIT_LOCK_WAIT_MS = 2

/**
 * When a group commit wraps each of its writes in a savepoint. `each`: always, so a write that
 * throws rolls back alone. `on-failure` (the default): the batch first runs without them and,
 * only if one of its writes throws, is rolled back whole and run again with a savepoint each.
 * A savepoint per write was ~40% of the SQL's CPU per addMessage (issue 18, measured on SQLite
 * 3.51: SQLite keeps a copy of every page a savepoint touches, ~20 per append across the tables,
 * their indexes and the full-text index). Writes must therefore be safe to run again after a
 * rollback (what a write's callback computes comes from the database, its side effects are
 * idempotent).
 */
export type GroupCommitSavepoints = 'each' | 'on-failure'
export const GROUP_COMMIT_SAVEPOINTS: GroupCommitSavepoints = 'on-failure'

/** How long a group commit keeps trying to take the write lock before its writes fail (ms). */
export const GROUP_COMMIT_LOCK_DEADLINE_MS = 5_000

function isBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY')
}
interface PrismaAdapter {
  client: BetterSqlite3.Database
  startTransaction(level?: unknown): Promise<{ commit(): Promise<void>; rollback(): Promise<void> }>
}

/**
 * Hot paths (every request's key lookup, appending messages) run cached prepared statements on the
 * connection Prisma's adapter opened, skipping Prisma's per-query compilation. One connection,
 * so one writer: a direct write waits until no Prisma transaction is open on it (it would
 * otherwise land inside that transaction and share its fate), then runs synchronously to commit,
 * so nothing can interleave with it. Never call write() inside a Prisma transaction's callback: it
 * would wait for that very transaction to end.
 */
export class DirectSqlite {
  connect: () => Promise<void> = async () => {}

  constructor(
    private readonly lockWaitMs = GROUP_COMMIT_LOCK_WAIT_MS,
    private readonly savepoints: GroupCommitSavepoints = GROUP_COMMIT_SAVEPOINTS,
  ) {}

  /**
   * What this connection's group commits carried since it opened: commits, the writes they ran,
   * and the appends of messages among them (counted by the session repository; one write may carry
   * many), and how often BEGIN IMMEDIATE found another process holding the write lock. The load
   * bench reads them to compare appends per commit with one and several processes.
   */
  readonly committed = { commits: 0, writes: 0, appends: 0, lockRefusals: 0 }

  private connection: BetterSqlite3.Database | null = null
  private readonly statements = new Map<string, BetterSqlite3.Statement>()
  private openTransactions = 0
  private waiters: (() => void)[] = []
  private readonly queue: QueuedWrite[] = []
  /** A retry of the queued writes once another process's write lock may be free. */
  private lockRetry: ReturnType<typeof setTimeout> | null = null
  /** Since when (performance.now()) the write lock has been refused, while it is. */
  private lockRefusedSince: number | null = null

  attach(adapter: PrismaAdapter): void {
    const connection = adapter.client
    for (const pragma of CONNECTION_PRAGMAS) connection.pragma(pragma)
    refreshPlannerStatistics(connection, { all: true })
    // A long-lived connection refreshes them now and then, as SQLite advises; the connection's own
    // statistics are the ones its planner reads, so this cannot move to another thread.
    const refresh = setInterval(() => {
      if (this.connection !== connection || !connection.open) clearInterval(refresh)
      else refreshPlannerStatistics(connection, { all: false })
    }, STATISTICS_REFRESH_MS)
    refresh.unref()
    this.connection = connection
    this.statements.clear()
    const start = adapter.startTransaction.bind(adapter)
    adapter.startTransaction = async (level) => {
      this.openTransactions++
      let transaction: Awaited<ReturnType<typeof start>>
      try {
        transaction = await start(level)
      } catch (error) {
        this.transactionEnded()
        throw error
      }
      // Prisma sends COMMIT / ROLLBACK itself, then calls these: the transaction is over.
      for (const end of ['commit', 'rollback'] as const) {
        const original = transaction[end].bind(transaction)
        transaction[end] = async () => {
          try {
            await original()
          } finally {
            this.transactionEnded()
          }
        }
      }
      return transaction
    }
  }

  /** The first row, or undefined. Integers come back as numbers (Prisma's connection says BigInt). */
  async get<T>(sql: string, ...params: Params): Promise<T | undefined> {
    return (await this.statement(sql)).get(...params) as T | undefined
  }

  async all<T>(sql: string, ...params: Params): Promise<T[]> {
    return (await this.statement(sql)).all(...params) as T[]
  }

  /**
   * Rows as arrays of the columns' values in select order: no object with named keys per row, which
   * at 100K rows (the optimizer's stamps) was a quarter of the read. The statement is cached by its
   * text like any other, so its raw mode is set for this read and put back.
   */
  async allArrays(sql: string, ...params: Params): Promise<unknown[][]> {
    const statement = await this.statement(sql)
    statement.raw(true)
    try {
      return statement.all(...params) as unknown[][]
    } finally {
      statement.raw(false)
    }
  }

  /**
   * Visits rows one at a time and returns how many there were. The statement is drained in the same
   * synchronous turn: an open better-sqlite3 iterator holds the connection, so handing it back across
   * an `await` let any concurrent resolver's statement fail with "This database connection is busy
   * executing a query" (three aliased searches in one request did).
   */
  async forEachRow<T>(sql: string, params: Params, visit: (row: T) => void): Promise<number> {
    const statement = await this.statement(sql)
    let rows = 0
    for (const row of statement.iterate(...params) as IterableIterator<T>) {
      visit(row)
      rows++
    }
    return rows
  }

  /**
   * Runs `work` atomically: all of its statements commit or none do. `work` is synchronous; its
   * `run`, `get` and `all` use the cached statements.
   *
   * Group commit: the writes asked for in the same turn of the event loop share one transaction,
   * each inside a savepoint of its own, in the order they were asked. One that throws rolls back
   * to its savepoint (nothing of it is stored, the others are unaffected) and its caller gets the
   * error. Fewer commits matter beyond the commit itself: the full-text index writes a new segment
   * at every commit.
   */
  write<T>(work: (sql: SyncStatements) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject })
      if (this.queue.length === 1) setImmediate(() => void this.flush())
    })
  }

  private async flush(): Promise<void> {
    // A retry is due: it flushes what is queued then, including what joins meanwhile.
    if (this.lockRetry) return
    let connection: BetterSqlite3.Database
    try {
      connection = await this.open()
      while (this.openTransactions > 0 || connection.inTransaction) {
        if (this.openTransactions > 0) await new Promise<void>((resolve) => this.waiters.push(resolve))
        // A transaction begun outside Prisma's API (raw BEGIN) tells no one when it ends: poll.
        else await new Promise((resolve) => setTimeout(resolve, 1))
      }
    } catch (error) {
      for (const queued of this.queue.splice(0)) queued.reject(error)
      return
    }
    // Synchronous from here to COMMIT: nothing else runs on the connection meanwhile. Writes asked
    // for while this batch waited are part of it.
    const batch = this.queue.splice(0, MAX_GROUP_COMMIT)
    if (this.queue.length > 0) setImmediate(() => void this.flush())
    const sql: SyncStatements = {
      run: (text, ...params) => this.cached(connection, text).run(...params),
      get: <R>(text: string, ...params: Params) =>
        this.cached(connection, text).get(...params) as R | undefined,
      all: <R>(text: string, ...params: Params) => this.cached(connection, text).all(...params) as R[],
    }
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = []
    try {
      if (!this.takeWriteLock(connection, batch)) return
      if (this.savepoints === 'on-failure') {
        if (this.runWhole(connection, sql, batch)) return
        // A write threw: the batch was rolled back whole; again, each write in its savepoint.
        if (!this.takeWriteLock(connection, batch)) return
      }
      for (const { work } of batch) {
        sql.run('SAVEPOINT engram_write')
        try {
          outcomes.push({ ok: true, value: work(sql) })
          sql.run('RELEASE engram_write')
        } catch (error) {
          sql.run('ROLLBACK TO engram_write')
          sql.run('RELEASE engram_write')
          outcomes.push({ ok: false, error })
        }
      }
      sql.run('COMMIT')
      this.counted(batch)
    } catch (error) {
      // BEGIN or COMMIT failed: none of the batch is stored.
      if (connection.inTransaction) connection.prepare('ROLLBACK').run()
      for (const queued of batch) queued.reject(error)
      return
    }
    batch.forEach((queued, i) => {
      const outcome = outcomes[i] as (typeof outcomes)[number]
      if (outcome.ok) queued.resolve(outcome.value)
      else queued.reject(outcome.error)
    })
  }

  /**
   * The batch's writes in the transaction just begun, without a savepoint each, then COMMIT, each
   * write answered: true. When one throws: ROLLBACK (nothing of the batch stays, the lock is
   * released) and false, for the caller to run the batch again with savepoints; a lone write's
   * error is its answer at once (true: there is nothing to run again). A failed COMMIT throws, as
   * on the savepoint path.
   */
  private runWhole(connection: BetterSqlite3.Database, sql: SyncStatements, batch: QueuedWrite[]): boolean {
    const values: unknown[] = []
    try {
      for (const { work } of batch) values.push(work(sql))
    } catch (error) {
      if (connection.inTransaction) connection.prepare('ROLLBACK').run()
      if (batch.length > 1) return false
      ;(batch[0] as QueuedWrite).reject(error)
      return true
    }
    sql.run('COMMIT')
    this.counted(batch)
    batch.forEach((queued, i) => {
      queued.resolve(values[i])
    })
    return true
  }

  private counted(batch: readonly QueuedWrite[]): void {
    this.committed.commits++
    this.committed.writes += batch.length
  }

  /**
   * BEGIN IMMEDIATE, waiting at most `lockWaitMs` (GROUP_COMMIT_LOCK_WAIT_MS) on the event loop. When another
   * process holds the write lock the batch goes back to the head of the queue and a timer tries
   * again: requests go on meanwhile, and those that write join the next commit. Past
   * GROUP_COMMIT_LOCK_DEADLINE_MS the lock error is the batch's answer. False: not begun.
   */
  private takeWriteLock(connection: BetterSqlite3.Database, batch: QueuedWrite[]): boolean {
    try {
      connection.pragma(`busy_timeout = ${this.lockWaitMs}`)
      this.cached(connection, 'BEGIN IMMEDIATE').run()
      this.lockRefusedSince = null
      return true
    } catch (error) {
      const now = performance.now()
      if (isBusy(error)) this.committed.lockRefusals++
      this.lockRefusedSince ??= now
      if (!isBusy(error) || now - this.lockRefusedSince > GROUP_COMMIT_LOCK_DEADLINE_MS) {
        this.lockRefusedSince = null
        throw error
      }
      this.queue.unshift(...batch)
      this.lockRetry ??= setTimeout(() => {
        this.lockRetry = null
        void this.flush()
      }, 1)
      return false
    } finally {
      connection.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`)
    }
  }

  private transactionEnded(): void {
    this.openTransactions--
    if (this.openTransactions > 0) return
    const waiting = this.waiters
    this.waiters = []
    for (const resume of waiting) resume()
  }

  private async open(): Promise<BetterSqlite3.Database> {
    if (!this.connection) await this.connect()
    if (!this.connection) throw new Error('the database connection did not open')
    return this.connection
  }

  private async statement(sql: string): Promise<BetterSqlite3.Statement> {
    return this.cached(await this.open(), sql)
  }

  private cached(connection: BetterSqlite3.Database, sql: string): BetterSqlite3.Statement {
    let statement = this.statements.get(sql)
    if (!statement) {
      statement = connection.prepare(sql).safeIntegers(false)
      this.statements.set(sql, statement)
    }
    return statement
  }
}

export interface SyncStatements {
  run(sql: string, ...params: Params): BetterSqlite3.RunResult
  get<R>(sql: string, ...params: Params): R | undefined
  all<R>(sql: string, ...params: Params): R[]
}

/** A Date as Prisma stores DateTime columns in SQLite. */
export function sqliteDate(date: Date): string {
  const time = date.getTime()
  // A write formats the same instant several times (its rows, jobs and cursor share the clock's now).
  if (time === lastFormatted.time) return lastFormatted.text
  const text = date.toISOString().replace('Z', '+00:00')
  lastFormatted = { time, text }
  return text
}

let lastFormatted = { time: Number.NaN, text: '' }

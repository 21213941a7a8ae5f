import { createHash } from 'node:crypto'
import { UnavailableError, ValidationError } from '@engram/core'
import {
  type HotRowReader,
  registerHotReader,
  type Database as SqliteShapedDatabase,
} from '@engram/store-sqlite'
import { PrismaPg } from '@prisma/adapter-pg'
import pg from 'pg'
import { PrismaClient } from '../generated/prisma/client.ts'
import { type SearchModel, tokensForWrite } from './search-tokens.ts'

export type PostgresDatabase = PrismaClient

/** Spec 002's connection pool: ten connections per replica unless configured. */
export const DEFAULT_POOL_SIZE = 10

export interface PostgresDatabaseOptions {
  /** Connections this process keeps to the server at most (`poolSize`, spec 002: 10). */
  poolSize?: number
  /** How long a request waits for a free connection before it fails (ms). */
  connectionTimeoutMs?: number
}

const SEARCH_MODELS = new Set<string>(['Message', 'MemoryItem', 'Knowledge'])
const modelKey = (model: string) => (model.charAt(0).toLowerCase() + model.slice(1)) as SearchModel

/**
 * A Prisma client on Postgres through `@prisma/adapter-pg` (a `pg` pool). Every create, update and
 * upsert of a searchable row carries its FTS5 tokens (see search-tokens.ts), computed here so no
 * write path has to remember them; the trigger of the full_text_search migration stores them.
 */
export function createPostgresDatabase(url: string, options: PostgresDatabaseOptions = {}): PostgresDatabase {
  // The pool is made here (and ended with the client) so its figures can be read: spec 002's
  // memory.postgres.pool.active gauge (poolActivity below).
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize ?? DEFAULT_POOL_SIZE,
    connectionTimeoutMillis: options.connectionTimeoutMs ?? 10_000,
  })
  const adapter = new PrismaPg(pool, { disposeExternalPool: true })
  // A transaction waits for a free connection as long as a query does (Prisma's default is 2 s:
  // a burst of writes beyond the pool would fail instead of queueing).
  const waitMs = options.connectionTimeoutMs ?? 10_000
  const base = new PrismaClient({ adapter, transactionOptions: { maxWait: waitMs, timeout: 30_000 } })
  const extended = base.$extends({
    query: {
      async $allOperations({ model, operation, args, query }) {
        if (model) refuseNul(args)
        if (model && SEARCH_MODELS.has(model)) addSearchTokens(modelKey(model), operation, args)
        try {
          return await query(args)
        } catch (error) {
          throw unavailable(error) ?? error
        }
      },
    },
  }) as unknown as PostgresDatabase
  pools.set(extended, pool)
  return extended
}

const pools = new WeakMap<PostgresDatabase, pg.Pool>()

/**
 * The connection pool's figures now (spec 002's memory.postgres.pool.active): connections open,
 * those running a query (open less idle), and requests waiting for one; null for a database not
 * made by createPostgresDatabase.
 */
export function poolActivity(db: PostgresDatabase): { open: number; active: number; waiting: number } | null {
  const pool = pools.get(db)
  if (!pool) return null
  return { open: pool.totalCount, active: pool.totalCount - pool.idleCount, waiting: pool.waitingCount }
}

/**
 * Postgres text cannot hold U+0000 (SQLite's can): a write carrying it is refused as bad input
 * naming the field, before the server would refuse it as an internal error.
 */
export function refuseNul(args: unknown): void {
  const a = args as Record<string, unknown>
  // What is written, and what a write or read looks up (a compound key one level down).
  const rows = [a.data, a.create, a.update, a.where].flatMap((d) => (Array.isArray(d) ? d : d ? [d] : []))
  for (const row of rows) {
    if (!row || typeof row !== 'object') continue
    for (const [field, value] of Object.entries(row as Record<string, unknown>)) {
      const values =
        value && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date)
          ? Object.entries(value as Record<string, unknown>)
          : [[field, value] as const]
      for (const [name, text] of values) {
        if (typeof text === 'string' && text.includes('\u0000'))
          throw new ValidationError([
            {
              field: name === 'equals' ? field : String(name),
              message: 'must not contain the NUL character (U+0000): Postgres text cannot hold it',
            },
          ])
      }
    }
  }
}

/** Adds the FTS5 tokens to a write of a searchable model's text (see search-tokens.ts). */
function addSearchTokens(model: SearchModel, operation: string, args: unknown): void {
  const a = args as Record<string, unknown>
  switch (operation) {
    case 'create':
    case 'update':
    case 'updateMany':
      withTokens(model, a, 'data', operation === 'create')
      break
    case 'upsert':
      withTokens(model, a, 'create', true)
      withTokens(model, a, 'update', false)
      break
    case 'createMany':
    case 'createManyAndReturn': {
      const rows = a.data
      if (Array.isArray(rows)) a.data = rows.map((row) => addTokens(model, row, true))
      else withTokens(model, a, 'data', true)
      break
    }
  }
}

/**
 * What the driver says when the server cannot be reached or dropped the connection (the
 * adapter's error kinds; Prisma's P1001 can't reach, P1002 timed out, P1017 closed, P2024 no
 * free connection in the pool in time, P2028 with "Unable to start a transaction in the given
 * time": a transaction that waited past its maxWait for a connection). The server is there but
 * busy beyond what this replica can queue: the caller may try again, as after an outage.
 */
const UNREACHABLE_KINDS = new Set([
  'DatabaseNotReachable',
  'ConnectionClosed',
  'SocketTimeout',
  'DatabaseDoesNotExist',
  'TooManyConnections',
])
const UNREACHABLE_CODES = new Set(['P1001', 'P1002', 'P1017', 'P2024'])
// P2028 is every transaction API error (a closed or expired transaction too): only the one of a
// transaction that could not start is the pool's, the others are the caller's.
const TRANSACTION_NOT_STARTED = /Unable to start a transaction in the given time/i
// pg's pool gives up on a connection after connectionTimeoutMillis; Prisma passes the error on
// with no code, only pg's messages (the pool's wait, a new connection's handshake).
const POOL_TIMED_OUT =
  /timeout exceeded when trying to connect|Connection terminated due to connection timeout/i
// SQLSTATEs of a server going away: admin shutdown, crash shutdown, cannot connect now.
const UNREACHABLE_STATES = new Set(['57P01', '57P02', '57P03'])

/** The engine's UnavailableError for a connection failure; null for any other error. */
export function unavailable(error: unknown): UnavailableError | null {
  if (error instanceof UnavailableError) return error
  const e = error as { code?: unknown; meta?: { driverAdapterError?: { cause?: Record<string, unknown> } } }
  const cause = e?.meta?.driverAdapterError?.cause
  const kind = typeof cause?.kind === 'string' ? cause.kind : null
  const state = typeof cause?.code === 'string' ? cause.code : null
  const message = error instanceof Error ? error.message : String((e as { message?: unknown })?.message ?? '')
  const unreachable =
    (kind !== null && UNREACHABLE_KINDS.has(kind)) ||
    (typeof e?.code === 'string' && UNREACHABLE_CODES.has(e.code)) ||
    (e?.code === 'P2028' && TRANSACTION_NOT_STARTED.test(message)) ||
    POOL_TIMED_OUT.test(message) ||
    (state !== null && (UNREACHABLE_STATES.has(state) || state.startsWith('08')))
  return unreachable ? new UnavailableError() : null
}

function withTokens(
  model: SearchModel,
  args: Record<string, unknown>,
  field: string,
  creating: boolean,
): void {
  const data = args[field]
  if (data && typeof data === 'object')
    args[field] = addTokens(model, data as Record<string, unknown>, creating)
}

function addTokens(
  model: SearchModel,
  data: Record<string, unknown>,
  creating: boolean,
): Record<string, unknown> {
  const tokens = tokensForWrite(model, data, creating)
  return tokens ? { ...data, ...tokens } : data
}

/**
 * `?` placeholders (the SQL the shared Prisma code writes, SQLite's style) as Postgres's `$1, $2…`.
 * Quoted strings (a doubled quote inside one reads as two strings side by side, copied alike),
 * quoted identifiers, line comments and block comments are copied as they are.
 */
export function postgresPlaceholders(sql: string): string {
  let out = ''
  let n = 0
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i] as string
    if (c === "'" || c === '"') {
      const end = sql.indexOf(c, i + 1)
      const stop = end === -1 ? sql.length : end + 1
      out += sql.slice(i, stop)
      i = stop - 1
    } else if (c === '-' && sql[i + 1] === '-') {
      const end = sql.indexOf('\n', i)
      const stop = end === -1 ? sql.length : end
      out += sql.slice(i, stop)
      i = stop - 1
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2)
      const stop = end === -1 ? sql.length : end + 2
      out += sql.slice(i, stop)
      i = stop - 1
    } else if (c === '?') {
      out += `$${++n}`
    } else {
      out += c
    }
  }
  return out
}

const RAW_METHODS = new Set(['$queryRawUnsafe', '$executeRawUnsafe'])
const views = new WeakMap<object, SqliteShapedDatabase>()

/**
 * The Postgres client seen through the type the shared Prisma code is written against (the two
 * generated clients have the same models and fields: schema-parity.test.ts), with that code's raw
 * SQL placeholders translated, also inside interactive transactions. Code whose SQL differs by
 * dialect has its own Postgres implementation; this view serves the rest.
 */
export function sharedView(db: PostgresDatabase): SqliteShapedDatabase {
  const view = wrap(db as unknown as object) as SqliteShapedDatabase
  const pool = pools.get(db)
  if (pool) registerHotReader(view, preparedReader(pool))
  return view
}

/** Statement texts given a name (prepared once per connection) at most; past it, unnamed. */
export const MAX_PREPARED_READS = 256

/**
 * Search's per-request reads (store-sqlite's readHotRows) on the pool itself, as named prepared
 * statements: through Prisma's raw-query path each cost ~1.5-2× the Node CPU (its row conversion)
 * and was parsed and planned anew on every call. Measured on a 10K-turn history: the four reads
 * of a hybrid search 8.1 → 5.1 ms of Node CPU (docs/speed-pgscale18.md).
 */
function preparedReader(pool: pg.Pool): HotRowReader {
  const names = new Map<string, string>()
  return async (sql, params) => {
    const text = postgresPlaceholders(sql)
    let name = names.get(text)
    if (name === undefined && names.size < MAX_PREPARED_READS) {
      name = `engram_read_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`
      names.set(text, name)
    }
    try {
      const result = await pool.query({ ...(name ? { name } : {}), text, values: [...params] })
      return result.rows
    } catch (error) {
      throw unavailable(error) ?? unreachableState(error) ?? error
    }
  }
}

/** A connection failure as pg reports it without Prisma (SQLSTATE on the error itself). */
function unreachableState(error: unknown): UnavailableError | null {
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code !== 'string') return null
  const down =
    UNREACHABLE_STATES.has(code) || code.startsWith('08') || code === 'ECONNREFUSED' || code === 'ECONNRESET'
  return down ? new UnavailableError() : null
}

function wrap(client: object): unknown {
  const known = views.get(client)
  if (known) return known
  const view = new Proxy(client, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown
      if (typeof property !== 'string' || typeof value !== 'function') return value
      if (RAW_METHODS.has(property)) {
        return (sql: string, ...params: unknown[]) =>
          (value as (...a: unknown[]) => unknown).call(target, postgresPlaceholders(sql), ...params)
      }
      if (property === '$transaction') {
        // Starting a transaction takes a connection: a server that is down fails here, typed.
        return async (work: unknown, ...rest: unknown[]) => {
          try {
            return await (value as (...a: unknown[]) => Promise<unknown>).call(
              target,
              typeof work === 'function' ? (tx: object) => (work as (t: unknown) => unknown)(wrap(tx)) : work,
              ...rest,
            )
          } catch (error) {
            throw unavailable(error) ?? error
          }
        }
      }
      // Prisma's methods expect their own client as `this`, not the view.
      return (value as (...a: unknown[]) => unknown).bind(target)
    },
  })
  views.set(client, view as SqliteShapedDatabase)
  return view
}

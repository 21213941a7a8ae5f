import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Clock, Embedder, LlmProvider } from '@engram/core'
import { applyPostgresMigrations, postgresPlaceholders } from '@engram/store-postgres'
import type { Database } from '@engram/store-sqlite'
import { createDatabase as createPostgresDatabase, dropDatabase } from '@engram/test-servers'
import Database3 from 'better-sqlite3'
import pg from 'pg'
import { inject } from 'vitest'
import { ensureAdminKey } from '../src/admin-key.ts'
import { type OpenedStore, openStore } from '../src/store.ts'
import { type App, type AppOptions, createApp } from '../src/yoga.ts'

export const ADMIN_KEY = 'test-admin-key-0123456789abcdef'

/**
 * What a test moves an app's time with: ManualClock (delays on real timers), or core's
 * ManualTimerClock, whose timers (catch-ups, gathers, polls, flushes) fire only as it moves.
 */
export interface TestClock extends Clock {
  set(date: Date | string): void
  advance(ms: number): void
}

/** A clock the test moves by hand: no sleeping, no flaky time windows. */
export class ManualClock implements TestClock {
  constructor(private current = new Date('2026-01-15T10:00:00.000Z')) {}
  now(): Date {
    return new Date(this.current)
  }
  set(date: Date | string): void {
    this.current = new Date(date)
  }
  advance(ms: number): void {
    this.current = new Date(this.current.getTime() + ms)
  }
}

/**
 * The backend the API suite runs on: `sqlite` (default) or `postgres` (ENGRAM_TEST_BACKEND, set by
 * the vitest project of that name: the same test files, each app on its own Postgres database).
 */
export const TEST_BACKEND: 'sqlite' | 'postgres' =
  process.env.ENGRAM_TEST_BACKEND === 'postgres' ? 'postgres' : 'sqlite'

let postgresTemplate: Promise<string> | null = null
/**
 * A fresh, migrated Postgres database for one app: copied from a template this worker migrated
 * once (a CREATE DATABASE … TEMPLATE costs a fraction of applying the migrations again).
 */
export async function freshPostgresDatabase(): Promise<string> {
  const server = inject('postgresUrl')
  postgresTemplate ??= (async () => {
    const name = `engram_template_${process.env.VITEST_POOL_ID ?? '0'}_${process.pid}`
    await applyPostgresMigrations(await createPostgresDatabase(server, name))
    return name
  })()
  return createPostgresDatabase(server, undefined, { template: await postgresTemplate })
}

/** Apps open on each Postgres database this worker made (dropped when none is left). */
const openApps = new Map<string, number>()

export interface TestApp {
  app: App
  db: Database
  /** The database the app runs on (its SQLite file, or its Postgres database). */
  store: OpenedStore
  clock: TestClock
  /** The SQLite file; on Postgres a path in the test's folder where no file is ever written. */
  databaseFile: string
  /** The Postgres database the app runs on, or null on SQLite. */
  postgresUrl: string | null
  dir: string
  gql<T = any>(query: string, variables?: Record<string, unknown>, key?: string | null): Promise<GqlResult<T>>
  close(): Promise<void>
}

export interface GqlResult<T> {
  status: number
  data: T
  errors?: { message: string; extensions?: Record<string, unknown> }[]
}

/** A real app on its own migrated SQLite file: one database per test file, never shared. */
export async function createTestApp(
  options: {
    databaseFile?: string
    clock?: TestClock
    optimizerIntervalMs?: number
    maxDepth?: number
    maxCost?: number
    embedder?: Embedder
    /** The language model memory formation, summaries and the profile ask (none: offline). */
    llm?: LlmProvider | null
    /** Backups go to <dir>/backups unless named. */
    backupDirectory?: string
    /** ENGRAM_SEARCH_COMMON_TERM_SHARE and _MIN_DOCUMENTS. */
    commonTerms?: { share: number; minDocuments: number }
    /** Receives the app's log lines (quiet unless ENGRAM_TEST_LOG is set). */
    log?: { info(...args: unknown[]): void; warn(...args: unknown[]): void; error(...args: unknown[]): void }
    /** Any other configuration, as the server would read it from the environment. */
    env?: Partial<AppOptions['env']>
    /** ENGRAM_KEY_FACT_MODE. */
    keyFactMode?: 'spec' | 'strict'
    /** Lower HNSW thresholds, so a test gets saved vector graphs with a few hundred vectors. */
    vectorIndex?: AppOptions['vectorIndex']
    /** Formation dials beyond ENGRAM_EXTRACTION* (the offline extractor's settings). */
    formation?: AppOptions['formation']
    /** The ceiling of Redis' reconnection backoff, when env.REDIS_URL is set. */
    redisReconnectMaxDelayMs?: number
    /** Run on this Postgres database (kept when the app closes) instead of the backend's default. */
    postgresUrl?: string
    /** Open the same database as this app (another process would): its SQLite file or Postgres database. */
    sameStoreAs?: TestApp
    /** On Postgres, messages one batched append transaction writes at most (ENGRAM_DB_APPEND_BATCH). */
    appendBatchMessages?: number
  } = {},
): Promise<TestApp> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-api-'))
  const shared = options.sameStoreAs
  const onPostgres = shared
    ? shared.postgresUrl !== null
    : TEST_BACKEND === 'postgres' && options.databaseFile === undefined
  const databaseFile = options.databaseFile ?? shared?.databaseFile ?? path.join(dir, 'test.db')
  // A database made here is dropped on close; one the test gave (or shares) is not this app's.
  const ownDatabase =
    onPostgres && options.postgresUrl === undefined && !shared ? await freshPostgresDatabase() : null
  const postgresUrl = options.postgresUrl ?? shared?.postgresUrl ?? ownDatabase
  if (ownDatabase) openApps.set(ownDatabase, 0)
  if (postgresUrl && openApps.has(postgresUrl))
    openApps.set(postgresUrl, (openApps.get(postgresUrl) ?? 0) + 1)
  const store = await openStore(postgresUrl ?? `file:${databaseFile}`, {
    poolSize: 4,
    ...(options.appendBatchMessages ? { appendBatchMessages: options.appendBatchMessages } : {}),
  })
  const db = store.db
  await ensureAdminKey(db, ADMIN_KEY)
  const clock = options.clock ?? new ManualClock()
  const quiet = options.log ?? (process.env.ENGRAM_TEST_LOG ? console : { info() {}, warn() {}, error() {} })
  const app = createApp({
    db,
    postgres: store.postgres,
    clock,
    log: quiet,
    embedder: options.embedder,
    llm: options.llm ?? null,
    databaseFile: store.databaseFile,
    backupDirectory: options.backupDirectory ?? path.join(dir, 'backups'),
    vectorIndex: options.vectorIndex,
    formation: options.formation,
    redisReconnectMaxDelayMs: options.redisReconnectMaxDelayMs,
    env: {
      NODE_ENV: 'test',
      OPTIMIZER_INTERVAL_MS: options.optimizerIntervalMs ?? 0,
      ENGRAM_TOKENIZER: 'o200k_base',
      ENGRAM_MAX_QUERY_DEPTH: options.maxDepth ?? 12,
      ENGRAM_MAX_QUERY_COST: options.maxCost ?? 20_000,
      ...(options.keyFactMode ? { ENGRAM_KEY_FACT_MODE: options.keyFactMode } : {}),
      ...(options.commonTerms
        ? {
            ENGRAM_SEARCH_COMMON_TERM_SHARE: options.commonTerms.share,
            ENGRAM_SEARCH_COMMON_TERM_MIN_DOCUMENTS: options.commonTerms.minDocuments,
          }
        : {}),
      ...options.env,
    },
  })
  return {
    app,
    db,
    store,
    clock,
    databaseFile,
    postgresUrl: postgresUrl ?? null,
    dir,
    async gql(query, variables, key = ADMIN_KEY) {
      const response = await app.yoga.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body: JSON.stringify({ query, variables }),
      })
      const body = (await response.json()) as { data: any; errors?: GqlResult<any>['errors'] }
      return { status: response.status, data: body.data, errors: body.errors }
    },
    async close() {
      await app.close()
      await store.close()
      // The database made for the first app goes once the last app sharing it has closed.
      if (postgresUrl && openApps.has(postgresUrl)) {
        const left = (openApps.get(postgresUrl) ?? 1) - 1
        if (left > 0) openApps.set(postgresUrl, left)
        else {
          openApps.delete(postgresUrl)
          await dropDatabase(postgresUrl)
        }
      }
      fs.rmSync(dir, { recursive: true, force: true })
    },
  }
}

/** Creates an agent with its own key through the API, as an operator would. */
export async function createAgentKey(t: TestApp, agentId: string): Promise<string> {
  const result = await t.gql(
    `mutation($agentId: ID!) { createApiKey(agentId: $agentId) { __typename ... on CreatedApiKey { key } ... on Error { message } } }`,
    { agentId },
  )
  const key = result.data?.createApiKey?.key
  if (!key) throw new Error(`createApiKey failed: ${JSON.stringify(result)}`)
  return key
}

/**
 * A subscription is registered a moment after the client asks for it, and nothing signals when:
 * publish, then check, a bounded number of times.
 */
export async function publishUntil(received: () => boolean, publish: () => Promise<unknown>) {
  for (let attempt = 0; attempt < 100 && !received(); attempt++) {
    await publish()
    for (let i = 0; i < 10 && !received(); i++) await new Promise((r) => setTimeout(r, 10))
  }
}

/**
 * An SSE response's text as it arrives (`text()` reads what came so far); `close()` cancels the
 * reader (in process, yoga.fetch does not end the body on abort alone) and waits for it to stop.
 */
export function readEventStream(response: Response): { text(): string; close(): Promise<void> } {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  let text = ''
  const reading = (async () => {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return
      text += decoder.decode(value)
    }
  })().catch(() => {})
  return {
    text: () => text,
    async close() {
      await reader.cancel().catch(() => {})
      await reading
    },
  }
}

/**
 * A connection of its own to an app's database, as another process would have: SQL with `?`
 * placeholders on the SQLite file (foreign keys on) or on the Postgres database.
 */
export async function anotherProcess(t: TestApp): Promise<{
  run(sql: string, ...params: unknown[]): Promise<void>
  close(): Promise<void>
}> {
  if (t.postgresUrl) {
    const client = new pg.Client({ connectionString: t.postgresUrl })
    await client.connect()
    return {
      run: async (sql, ...params) => {
        await client.query(postgresPlaceholders(sql), params)
      },
      close: () => client.end(),
    }
  }
  const connection = new Database3(t.databaseFile)
  connection.pragma('foreign_keys = ON')
  return {
    run: async (sql, ...params) => {
      connection.prepare(sql).run(...params)
    },
    close: async () => {
      connection.close()
    },
  }
}

/**
 * Polls with short waits until `done` holds or the deadline passes (no wait longer than 50 ms):
 * for what another process (Redis, a replica) makes true on its own time, never for the clock.
 */
export async function waitFor(done: () => boolean | Promise<boolean>, deadlineMs = 10_000): Promise<void> {
  const until = Date.now() + deadlineMs
  while (!(await done())) {
    if (Date.now() > until) throw new Error('condition not met before the deadline')
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

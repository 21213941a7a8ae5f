import { execFileSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { freePort } from './ports.ts'
import { run, ServerStartError, spawnUntilReady } from './process.ts'

/** Debian's postgresql-15 (scripts/ensure-services.sh installs it). */
export const DEFAULT_POSTGRES_BIN_DIR = '/usr/lib/postgresql/15/bin'
export const DEFAULT_START_TIMEOUT_MS = 30_000
/** A port taken between choosing it and binding it is retried on a new one this many times. */
const PORT_ATTEMPTS = 3

export interface PostgresServer {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`: the server's maintenance database. */
  url: string
  port: number
  /** Creates an empty database and returns its URL. */
  createDatabase(name?: string): Promise<string>
  /** Stops the server (fast shutdown) and removes its data directory. Safe to call twice. */
  stop(): Promise<void>
  /** Stops the server but keeps its data: clients see it go away (the Postgres-down tests). */
  pause(): Promise<void>
  /** Starts a paused server again on the same port, with the same data. */
  resume(): Promise<void>
}

export interface StartPostgresOptions {
  binDir?: string
  startTimeoutMs?: number
}

/** The postgres user when the process is root: initdb and postgres refuse to run as root. */
function runAs(): string | null {
  return process.getuid?.() === 0 ? 'postgres' : null
}

function command(binary: string, args: string[], user: string | null): [string, string[]] {
  return user ? ['runuser', ['-u', user, '--', binary, ...args]] : [binary, args]
}

/**
 * Starts a throwaway postgresql-15: `initdb` into a fresh temp dir, then `postgres` on a free port
 * of 127.0.0.1 only, trust authentication (nothing else can reach it), and fsync off (its data is
 * thrown away, so durability buys nothing but slowness).
 */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<PostgresServer> {
  const binDir = options.binDir ?? process.env.POSTGRES_BIN_DIR ?? DEFAULT_POSTGRES_BIN_DIR
  const timeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS
  for (const binary of ['initdb', 'postgres']) {
    if (!fs.existsSync(path.join(binDir, binary))) {
      throw new ServerStartError(
        `${path.join(binDir, binary)} is missing: run scripts/ensure-services.sh (installs postgresql-15) or set POSTGRES_BIN_DIR`,
      )
    }
  }
  const user = runAs()
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-pg-'))
  const dataDir = path.join(root, 'data')
  const socketDir = path.join(root, 'socket')
  fs.mkdirSync(socketDir)
  if (user) {
    // os.userInfo() only describes the current user: ask id(1) for the postgres user's ids.
    const uid = Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim())
    const gid = Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim())
    for (const dir of [root, socketDir]) fs.chownSync(dir, uid, gid)
  }
  const removeRoot = () => fs.rmSync(root, { recursive: true, force: true })
  try {
    await run(
      ...command(
        path.join(binDir, 'initdb'),
        ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C.UTF-8', '--no-sync'],
        user,
      ),
      'initdb',
    )
  } catch (error) {
    removeRoot()
    throw error
  }
  // Only loopback TCP and the private socket, both trusted; nothing from another host.
  fs.writeFileSync(
    path.join(dataDir, 'pg_hba.conf'),
    'local all all trust\nhost all all 127.0.0.1/32 trust\n',
  )

  const launch = (port: number) =>
    spawnUntilReady(
      ...command(
        path.join(binDir, 'postgres'),
        [
          '-D',
          dataDir,
          '-p',
          String(port),
          '-k',
          socketDir,
          '-c',
          'listen_addresses=127.0.0.1',
          '-c',
          'fsync=off',
          '-c',
          'synchronous_commit=off',
          '-c',
          'full_page_writes=off',
          '-c',
          'max_connections=200',
        ],
        user,
      ),
      /database system is ready to accept connections/,
      'postgres',
      timeoutMs,
    )
  let lastError: unknown
  for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
    const port = await freePort()
    try {
      let server = await launch(port)
      const url = `postgres://postgres@127.0.0.1:${port}/postgres`
      // A test run that ends without calling stop() (a crash, a forgotten teardown) must not leave
      // a server behind: on exit, an immediate shutdown (SIGQUIT) and its files removed.
      const onExit = () => {
        const pid = postmasterPid(dataDir)
        if (pid) process.kill(pid, 'SIGQUIT')
        removeRoot()
      }
      process.once('exit', onExit)
      // SIGINT is Postgres' fast shutdown (clients are disconnected). It goes to the postmaster
      // itself: runuser would turn a signal into SIGTERM (smart shutdown, which waits for every
      // client) and then SIGKILL, orphaning the server's backends.
      const shutdown = async () => {
        process.kill(postmasterPid(dataDir) ?? server.child.pid ?? 0, 'SIGINT')
        await server.exited
      }
      let paused = false
      let stopped: Promise<void> | null = null
      return {
        url,
        port,
        createDatabase: (name) => createDatabase(url, name),
        stop: () => {
          stopped ??= (async () => {
            process.off('exit', onExit)
            if (!paused) await shutdown()
            removeRoot()
          })()
          return stopped
        },
        async pause() {
          if (paused || stopped) return
          paused = true
          await shutdown()
        },
        async resume() {
          if (!paused || stopped) return
          server = await launch(port)
          paused = false
        },
      }
    } catch (error) {
      lastError = error
      if (!/could not bind|Address already in use/i.test(String(error))) break
    }
  }
  removeRoot()
  throw lastError
}

/** The first line of postmaster.pid, while the server runs. */
function postmasterPid(dataDir: string): number | null {
  try {
    const pid = Number.parseInt(fs.readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8'), 10)
    return Number.isFinite(pid) ? pid : null
  } catch {
    return null
  }
}

const DATABASE_NAME = /^[a-z_][a-z0-9_]{0,62}$/

/**
 * `CREATE DATABASE` on the server at `serverUrl`; returns the new database's URL. Without a name,
 * a unique one (per vitest worker, then random), so test files running in parallel never share one.
 */
export async function createDatabase(
  serverUrl: string,
  name?: string,
  options: { template?: string } = {},
): Promise<string> {
  const database =
    name ?? `engram_test_${process.env.VITEST_POOL_ID ?? '0'}_${randomBytes(6).toString('hex')}`
  checkDatabaseName(database)
  if (options.template !== undefined) checkDatabaseName(options.template)
  const client = new pg.Client({ connectionString: serverUrl })
  await client.connect()
  try {
    // Names are checked above: identifiers cannot be bound as parameters. A template (a migrated
    // database nobody is connected to) is copied file by file: faster than migrating again.
    await client.query(
      `CREATE DATABASE "${database}"${options.template === undefined ? '' : ` TEMPLATE "${options.template}"`}`,
    )
  } finally {
    await client.end()
  }
  const url = new URL(serverUrl)
  url.pathname = `/${database}`
  return url.toString()
}

/** Drops a database made by createDatabase, closing whatever is still connected to it. */
export async function dropDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl)
  const database = decodeURIComponent(url.pathname.slice(1))
  checkDatabaseName(database)
  url.pathname = '/postgres'
  const client = new pg.Client({ connectionString: url.toString() })
  await client.connect()
  try {
    await client.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`)
  } finally {
    await client.end()
  }
}

function checkDatabaseName(database: string): void {
  if (!DATABASE_NAME.test(database)) {
    throw new RangeError(
      `database name "${database}": lowercase letters, digits and _ only, at most 63 characters`,
    )
  }
}

// The API of the Postgres e2e run (E2E_BACKEND=postgres; playwright.config.ts starts this as a
// webServer): a throwaway postgresql-15 and redis-server from @engram/test-servers, then the API's
// own start command with DATABASE_URL and REDIS_URL pointing at them. Everything else the API gets
// (port, admin key, debounce) comes from the webServer's environment, as on SQLite.
//
// Nothing is skipped: when a server cannot start, this exits non-zero and Playwright fails the
// run ("Process from config.webServer was not able to start"). When the API exits, or Playwright
// sends its shutdown signal, both servers are stopped and their temp dirs removed.
import { type ChildProcess, spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  createDatabase,
  type PostgresServer,
  type RedisServer,
  startPostgres,
  startRedis,
} from '@engram/test-servers/servers'

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
/** How long the API gets to close its connections before the servers stop under it anyway. */
const API_EXIT_WAIT_MS = 5_000

let postgres: PostgresServer | undefined
let redis: RedisServer | undefined
let api: ChildProcess | undefined
let stopping: Promise<void> | undefined

function stopAll(exitCode: number): Promise<void> {
  stopping ??= (async () => {
    if (api && api.exitCode === null && api.signalCode === null) {
      const exited = new Promise((resolve) => api?.once('exit', resolve))
      api.kill('SIGTERM')
      const timer = setTimeout(() => api?.kill('SIGKILL'), API_EXIT_WAIT_MS)
      await exited
      clearTimeout(timer)
    }
    // Each server is stopped even when the other's stop fails: neither may outlive the run.
    const results = await Promise.allSettled([redis?.stop(), postgres?.stop()])
    for (const result of results) {
      if (result.status === 'rejected')
        console.error('[e2e:postgres] stopping a server failed:', result.reason)
    }
    process.exit(exitCode)
  })()
  return stopping
}

// Playwright ends a webServer by signalling its whole process group (gracefulShutdown in the
// config): the API, Redis and Postgres (a smart shutdown) get it at once, so the API's last lines
// may log Redis and Postgres going away. Stopping them here makes it a fast shutdown and removes
// their temp dirs; SIGKILL after the config's timeout is the last resort.
process.once('SIGTERM', () => void stopAll(0))
process.once('SIGINT', () => void stopAll(0))

try {
  postgres = await startPostgres()
  redis = await startRedis()
  const databaseUrl = await createDatabase(postgres.url, 'engram_e2e')
  console.info(`[e2e:postgres] postgresql-15 at ${databaseUrl}, redis-server at ${redis.url}`)
  // The same command as the SQLite run's webServer; the API migrates the empty database at start.
  api = spawn('pnpm', ['--filter', '@engram/api', 'start'], {
    cwd: REPO_ROOT,
    stdio: 'inherit',
    env: { ...process.env, DATABASE_URL: databaseUrl, REDIS_URL: redis.url },
  })
  api.once('exit', (code, signal) => {
    if (stopping) return
    console.error(`[e2e:postgres] the API exited (${signal ?? `code ${code}`}): stopping Postgres and Redis`)
    void stopAll(code === 0 ? 1 : (code ?? 1))
  })
} catch (error) {
  console.error('[e2e:postgres] could not start the API on Postgres + Redis:', error)
  await stopAll(1)
}

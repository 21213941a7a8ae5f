import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { defineConfig } from '@playwright/test'

// Every run gets a fresh database: the API migrates the empty file at start-up. Test workers load
// this file again; they inherit the directory through the environment instead of making another.
process.env.ENGRAM_E2E_DATA ??= fs.mkdtempSync(path.join(os.tmpdir(), 'engram-e2e-'))
const dataDir = process.env.ENGRAM_E2E_DATA

/**
 * The database behind the API (issue 14: every feature works on both). `sqlite` (default): a file
 * in the run's directory. `postgres`: a throwaway postgresql-15 and redis-server (postgres-api.ts).
 * The e2e package's test script runs the suite once per backend (test-backends.sh).
 */
const BACKENDS = ['sqlite', 'postgres'] as const
const backend = process.env.E2E_BACKEND ?? 'sqlite'
if (!(BACKENDS as readonly string[]).includes(backend)) {
  throw new Error(`E2E_BACKEND: "${backend}" is not one of ${BACKENDS.join(', ')}`)
}
const onPostgres = backend === 'postgres'
/**
 * What the Postgres run covers by default: the dashboard's pages and their features (health and
 * the API over HTTP, every page of the operator's journey, memories with search, import, export
 * and re-embedding; the graph explorer of issue 15; the runs and domain pages of issue 16; the pools pages of issue 17). Every spec passes on Postgres; the others (formation, profile, first-visit)
 * are the SQLite run's alone to keep CI's time: the whole suite on Postgres took ~5.3 min here,
 * these three ~2.5 (docs/postgres-redis.md). `E2E_POSTGRES_SPECS=all` runs every spec on Postgres.
 */
const POSTGRES_SPECS =
  process.env.E2E_POSTGRES_SPECS === 'all'
    ? undefined
    : ['smoke', 'dashboard', 'memories', 'graph', 'runs', 'pools', 'working-context', 'maintenance'].map(
        (spec) => `${spec}.spec.ts`,
      )

// Ports of their own per backend, so the two runs never meet one another's servers.
export const API_PORT = Number(process.env.E2E_API_PORT ?? (onPostgres ? 4110 : 4100))
export const DASHBOARD_PORT = Number(process.env.E2E_DASHBOARD_PORT ?? (onPostgres ? 3110 : 3100))
export const ADMIN_KEY = 'e2e-admin-key-0123456789abcdef'
/** Where specs put their screenshots for a person to look at; the Postgres run's beside its results. */
export const SCREENS_DIR = onPostgres ? 'test-results/postgres/screens' : 'test-results/screens'
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const e2eDir = path.join(root, 'e2e')

/** The API's environment on either backend (the Postgres launcher adds DATABASE_URL and REDIS_URL). */
const apiEnv = {
  API_PORT: String(API_PORT),
  API_HOST: '127.0.0.1',
  ENGRAM_ADMIN_KEY: ADMIN_KEY,
  // Extraction waits its longest debounce: the tests form memories with Sync now / syncMemory,
  // so a busy CI machine's job worker never forms them first.
  ENGRAM_EXTRACTION_DEBOUNCE_MS: '60000',
  // The Metrics page's samples every second (the server's default is 10 s): its spec sees new ones at once.
  ENGRAM_METRICS_SAMPLE_MS: '1000',
  NODE_ENV: 'development',
}

export default defineConfig({
  testDir: './tests',
  testMatch: onPostgres ? POSTGRES_SPECS : undefined,
  // Each run cleans its own output directory at start: the Postgres run, which comes second, must
  // not delete the SQLite run's traces and screenshots.
  outputDir: onPostgres ? 'test-results/postgres' : 'test-results',
  globalTeardown: './global-teardown.ts',
  workers: 1,
  fullyParallel: false,
  forbidOnly: !!process.env.CI,
  retries: 0,
  timeout: 60_000,
  // CI runs this suite beside the API's on two CPUs: under that load a page can take longer than
  // Playwright's 5 s default to show what it will show. Waiting longer costs nothing when it passes.
  expect: { timeout: 15_000 },
  reporter: [['list']],
  use: {
    baseURL: `http://127.0.0.1:${DASHBOARD_PORT}`,
    trace: 'retain-on-failure',
    launchOptions: {
      // Debian's Chromium: Playwright's own browser download is not reachable here.
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    },
  },
  webServer: [
    onPostgres
      ? {
          // Starts postgresql-15 and redis-server, then the API on them; stops them when it ends.
          command: 'node --import tsx postgres-api.ts',
          cwd: e2eDir,
          url: `http://127.0.0.1:${API_PORT}/health`,
          reuseExistingServer: false,
          timeout: 120_000,
          stdout: 'pipe',
          // A signal (not Playwright's default SIGKILL) so the launcher can stop both servers.
          gracefulShutdown: { signal: 'SIGTERM', timeout: 15_000 },
          env: {
            ...apiEnv,
            // Logical exports (backups) have no database file to sit beside.
            ENGRAM_BACKUP_DIR: path.join(dataDir, 'backups'),
          },
        }
      : {
          command: 'pnpm --filter @engram/api start',
          cwd: root,
          url: `http://127.0.0.1:${API_PORT}/health`,
          reuseExistingServer: false,
          timeout: 120_000,
          stdout: 'pipe',
          env: { ...apiEnv, DATABASE_URL: `file:${path.join(dataDir, 'e2e.db')}` },
        },
    {
      command: 'pnpm --filter @engram/dashboard start',
      cwd: root,
      url: `http://127.0.0.1:${DASHBOARD_PORT}`,
      reuseExistingServer: false,
      timeout: 120_000,
      env: {
        DASHBOARD_PORT: String(DASHBOARD_PORT),
        DASHBOARD_HOST: '127.0.0.1',
        ENGRAM_API_URL: `http://127.0.0.1:${API_PORT}`,
      },
    },
  ],
})

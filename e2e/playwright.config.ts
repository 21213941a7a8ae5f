import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { defineConfig } from '@playwright/test'

// Every run gets a fresh database: the API migrates the empty file at start-up. Test workers load
// this file again; they inherit the directory through the environment instead of making another.
process.env.ENGRAM_E2E_DATA ??= fs.mkdtempSync(path.join(os.tmpdir(), 'engram-e2e-'))
const dataDir = process.env.ENGRAM_E2E_DATA
export const API_PORT = Number(process.env.E2E_API_PORT ?? 4100)
export const DASHBOARD_PORT = Number(process.env.E2E_DASHBOARD_PORT ?? 3100)
export const ADMIN_KEY = 'e2e-admin-key-0123456789abcdef'
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

export default defineConfig({
  testDir: './tests',
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
    {
      command: 'pnpm --filter @engram/api start',
      cwd: root,
      url: `http://127.0.0.1:${API_PORT}/health`,
      reuseExistingServer: false,
      timeout: 120_000,
      stdout: 'pipe',
      env: {
        API_PORT: String(API_PORT),
        API_HOST: '127.0.0.1',
        DATABASE_URL: `file:${path.join(dataDir, 'e2e.db')}`,
        ENGRAM_ADMIN_KEY: ADMIN_KEY,
        // Extraction waits its longest debounce: the tests form memories with Sync now / syncMemory,
        // so a busy CI machine's job worker never forms them first.
        ENGRAM_EXTRACTION_DEBOUNCE_MS: '60000',
        NODE_ENV: 'development',
      },
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

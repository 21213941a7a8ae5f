import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // One postgresql-15 for the run (packages/test-servers); the Postgres specs take a database.
    globalSetup: ['@engram/test-servers/vitest-global-setup'],
    // The SQLite initializer migrates a fresh file per spec.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
})

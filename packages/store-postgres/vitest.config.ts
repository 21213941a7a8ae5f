import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // One postgresql-15 for the run (packages/test-servers); each test file takes its own database.
    globalSetup: ['@engram/test-servers/vitest-global-setup'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})

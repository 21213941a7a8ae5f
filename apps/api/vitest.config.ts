import { defineConfig } from 'vitest/config'

export default defineConfig({
  // Node loads graphql's CommonJS build for the libraries (it has no "exports" map); make the
  // test files use the same one, or schema objects fail graphql's cross-realm check.
  resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
  test: {
    // Each test file opens its own SQLite file; the Prisma CLI checks spawn processes.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // One postgresql-15 and one Redis for the run (packages/test-servers).
    globalSetup: ['@engram/test-servers/vitest-global-setup'],
    // The API suite runs on both backends (issue 14): the same files, once on SQLite files and
    // once on Postgres databases (ENGRAM_TEST_BACKEND, read by test/helpers.ts).
    projects: [
      {
        extends: true,
        test: {
          name: 'sqlite',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'bench/**/*.test.ts'],
          // Tests of Postgres itself (its server going down, replicas sharing it) run once, below.
          exclude: ['test/postgres/**'],
        },
      },
      {
        extends: true,
        test: {
          name: 'postgres',
          include: ['test/**/*.test.ts'],
          env: { ENGRAM_TEST_BACKEND: 'postgres' },
        },
      },
    ],
  },
})

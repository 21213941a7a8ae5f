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
          // Known failures on Postgres, issue 14 still open (docs/postgres-redis.md, "State"):
          // SQLite-file assertions without their Postgres counterpart yet (lifecycle's on-disk
          // scans, speakers' and tenant-ranking's FTS5/EXPLAIN checks), NUL characters the fuzzer
          // sends (Postgres text cannot hold U+0000: a typed refusal is still to be written), two
          // hot paths (a write burst, a raw insert seen by the vector index), transfer's
          // SQLite backup names. Every other API test file runs on Postgres in pnpm test.
          exclude: ['test/speakers.test.ts', 'test/tenant-ranking.test.ts', 'test/transfer.test.ts'],
          env: { ENGRAM_TEST_BACKEND: 'postgres' },
        },
      },
    ],
  },
})

import { defineConfig } from 'vitest/config'

export default defineConfig({
  // Node loads graphql's CommonJS build for the libraries (it has no "exports" map); make the
  // test files use the same one, or schema objects fail graphql's cross-realm check.
  resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'bench/**/*.test.ts'],
    // Each test file opens its own SQLite file; the Prisma CLI checks spawn processes.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
})

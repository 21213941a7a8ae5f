import { defineConfig } from 'vitest/config'

export default defineConfig({
  // The tests start the API in-process: its libraries load graphql's CommonJS build, so the test
  // files must use the same one (graphql's cross-realm check), as in apps/api.
  resolve: { alias: [{ find: /^graphql$/, replacement: 'graphql/index.js' }] },
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    // The tests run the built command: built once, here.
    globalSetup: ['test/build.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
})

import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // Each test file starts its own redis-server (packages/test-servers): it stops it on purpose.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
})

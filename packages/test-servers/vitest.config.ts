import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // initdb and a server start take a few seconds on a loaded 2-core machine.
    testTimeout: 60_000,
    hookTimeout: 60_000,
  },
})

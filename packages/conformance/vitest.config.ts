import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // The SQLite initializer migrates a fresh file per spec.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
})

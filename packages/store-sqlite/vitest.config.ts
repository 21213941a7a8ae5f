import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    // Each test opens its own SQLite file; the Prisma CLI checks spawn processes.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
})

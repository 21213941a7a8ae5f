import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    // Seeded property tests and the BPE tokenizer's first load take a few seconds on a busy
    // 2-core machine (5 s, vitest's default, timed out while other builds ran). The timeout only
    // guards against a hang: speed is measured by `pnpm bench`, never here.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
})

import fs from 'node:fs'

// The run's database directory (made in playwright.config.ts) goes when the run ends.
export default function globalTeardown() {
  const dir = process.env.ENGRAM_E2E_DATA
  if (dir?.includes('engram-e2e-')) fs.rmSync(dir, { recursive: true, force: true })
}

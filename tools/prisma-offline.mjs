#!/usr/bin/env node
// Runs the Prisma CLI offline. Every Prisma command tries to download the native schema engine;
// PRISMA_SCHEMA_ENGINE_BINARY defaults to the stand-in in tools/schema-engine (Prisma's WASM engine
// over better-sqlite3), so migrate dev/deploy/status/diff/reset and db push work here too.
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const env = { ...process.env }
env.PRISMA_SCHEMA_ENGINE_BINARY ??= path.join(root, 'tools', 'schema-engine', 'schema-engine')
env.PRISMA_HIDE_UPDATE_MESSAGE = '1'
const result = spawnSync(
  'pnpm',
  ['exec', 'prisma', ...process.argv.slice(2), '--config', path.join(root, 'prisma.config.ts')],
  {
    cwd: root,
    env,
    stdio: 'inherit',
  },
)
process.exit(result.status ?? 1)

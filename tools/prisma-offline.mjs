#!/usr/bin/env node
// Runs the Prisma CLI offline. Every Prisma command tries to download the native schema engine;
// generate/validate/format only need PRISMA_SCHEMA_ENGINE_BINARY to name an existing file.
import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const env = { ...process.env }
env.PRISMA_SCHEMA_ENGINE_BINARY ??= process.execPath
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

import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { REPO_ROOT } from '../env.ts'

describe('prisma/migrations', () => {
  it('capture everything in prisma/schema.prisma (else run `pnpm db:migrate <name>`)', () => {
    const result = spawnSync(process.execPath, [path.join(REPO_ROOT, 'tools', 'schema-diff.mjs'), 'check'], {
      encoding: 'utf8',
      timeout: 60_000,
    })
    expect(result.stderr).toBe('')
    expect(result.status).toBe(0)
  })
})

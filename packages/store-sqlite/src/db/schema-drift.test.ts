import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { describe, expect, it } from 'vitest'
import { REPO_ROOT } from '../repo-root.ts'

describe('prisma/migrations', () => {
  it('capture everything in prisma/schema.prisma', () => {
    // `migrate diff` replays the migrations into an in-memory shadow database through the
    // offline schema engine stand-in; --exit-code makes it exit 2 when the schema has more.
    const result = spawnSync(
      process.execPath,
      [
        path.join(REPO_ROOT, 'tools', 'prisma-offline.mjs'),
        'migrate',
        'diff',
        '--from-migrations',
        path.join(REPO_ROOT, 'prisma', 'migrations'),
        '--to-schema',
        path.join(REPO_ROOT, 'prisma', 'schema.prisma'),
        '--exit-code',
      ],
      { encoding: 'utf8', timeout: 60_000 },
    )
    if (result.status === 2) {
      expect.fail(
        `prisma/schema.prisma has changes no migration captures: run pnpm db:migrate\n${result.stdout}`,
      )
    }
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0)
  })
})

import { spawnSync } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, inject, it } from 'vitest'

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')

describe('prisma/postgres/migrations', () => {
  it('capture everything in prisma/postgres/schema.prisma', () => {
    // `pnpm db:check` for the Postgres schema: the migrations are replayed into a shadow database
    // on this run's postgresql-15; exit 2 when the schema has more than they create.
    const result = spawnSync(process.execPath, [path.join(repoRoot, 'tools', 'schema-diff.mjs'), 'check'], {
      encoding: 'utf8',
      timeout: 60_000,
      env: {
        ...process.env,
        ENGRAM_SCHEMA_TARGETS: 'postgres',
        ENGRAM_SHADOW_POSTGRES_URL: inject('postgresUrl'),
      },
    })
    if (result.status === 2) {
      expect.fail(
        `prisma/postgres/schema.prisma has changes no migration captures: run pnpm db:migrate\n${result.stderr}`,
      )
    }
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0)
    expect(result.stdout).toMatch(/migrations match prisma\/postgres\/schema\.prisma/)
  })
})

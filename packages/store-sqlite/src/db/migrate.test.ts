import { spawn, spawnSync } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import Database from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { Prisma } from '../generated/prisma/client.ts'
import { REPO_ROOT } from '../repo-root.ts'
import { applyMigrations, MigrationError, migrationsDirectory } from './migrate.ts'

const dirs: string[] = []
function tempDir() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-migrate-'))
  dirs.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

const tables = (file: string) => {
  const db = new Database(file, { readonly: true })
  const names = (
    db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).all() as {
      name: string
    }[]
  ).map((r) => r.name)
  const journal = db.pragma('journal_mode', { simple: true })
  const rows = db.prepare('SELECT * FROM _prisma_migrations').all() as Record<string, unknown>[]
  db.close()
  return { names, journal, rows }
}

describe('applyMigrations', () => {
  it('migrates an empty database file, recording the migration as Prisma does', () => {
    const file = path.join(tempDir(), 'nested', 'empty.db')
    const { applied } = applyMigrations(file, migrationsDirectory())
    expect(applied).toEqual(
      fs
        .readdirSync(migrationsDirectory())
        .filter((n) => !n.endsWith('.toml'))
        .sort(),
    )
    const { names, journal, rows } = tables(file)
    // Every model of the schema is a table.
    for (const table of Object.values(Prisma.ModelName)) expect(names).toContain(table)
    expect(journal).toBe('wal')
    expect(rows[0]).toMatchObject({ applied_steps_count: 1, logs: null, rolled_back_at: null })
    expect(rows[0]?.checksum).toMatch(/^[0-9a-f]{64}$/)
    expect(rows[0]?.finished_at).toBeTruthy()
  })

  it('is idempotent', () => {
    const file = path.join(tempDir(), 'twice.db')
    applyMigrations(file, migrationsDirectory())
    expect(applyMigrations(file, migrationsDirectory()).applied).toEqual([])
  })

  it('applies only the newer migration to an older database', () => {
    const dir = tempDir()
    const migrations = path.join(dir, 'migrations')
    fs.cpSync(migrationsDirectory(), migrations, { recursive: true })
    const file = path.join(dir, 'older.db')
    applyMigrations(file, migrations)
    fs.mkdirSync(path.join(migrations, '29990101000000_add_note'))
    fs.writeFileSync(
      path.join(migrations, '29990101000000_add_note', 'migration.sql'),
      'ALTER TABLE "Agent" ADD COLUMN "note" TEXT;\n',
    )
    expect(applyMigrations(file, migrations).applied).toEqual(['29990101000000_add_note'])
    const db = new Database(file, { readonly: true })
    expect(
      (db.prepare(`PRAGMA table_info("Agent")`).all() as { name: string }[]).map((c) => c.name),
    ).toContain('note')
    db.close()
  })

  it('rolls back a failing migration and records nothing for it', () => {
    const dir = tempDir()
    const migrations = path.join(dir, 'migrations')
    fs.cpSync(migrationsDirectory(), migrations, { recursive: true })
    fs.mkdirSync(path.join(migrations, '29990101000000_broken'))
    fs.writeFileSync(
      path.join(migrations, '29990101000000_broken', 'migration.sql'),
      'CREATE TABLE "Half" ("id" TEXT);\nTHIS IS NOT SQL;\n',
    )
    const file = path.join(dir, 'broken.db')
    expect(() => applyMigrations(file, migrations)).toThrow()
    const { names, rows } = tables(file)
    expect(names).not.toContain('Half')
    expect(rows.map((r) => r.migration_name)).not.toContain('29990101000000_broken')
  })

  it('rebuilds a referenced table without cascading deletes into its dependants', () => {
    const dir = tempDir()
    const migrations = path.join(dir, 'migrations')
    fs.cpSync(migrationsDirectory(), migrations, { recursive: true })
    const file = path.join(dir, 'rebuild.db')
    applyMigrations(file, migrations)
    const db = new Database(file)
    db.prepare(`INSERT INTO "Agent" ("id", "name") VALUES ('a', 'a')`).run()
    db.prepare(
      `INSERT INTO "Session" ("id", "agentId", "conversationId", "updatedAt") VALUES ('s', 'a', 'c', '2026-01-01')`,
    ).run()
    db.close()
    // The shape Prisma generates for a table redefinition on SQLite.
    fs.mkdirSync(path.join(migrations, '29990101000000_rebuild_agent'))
    fs.writeFileSync(
      path.join(migrations, '29990101000000_rebuild_agent', 'migration.sql'),
      `PRAGMA foreign_keys=OFF;
CREATE TABLE "new_Agent" ("id" TEXT NOT NULL PRIMARY KEY, "name" TEXT NOT NULL, "createdAt" DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP, "privacyMode" TEXT NOT NULL DEFAULT 'redact', "privacyPatterns" TEXT NOT NULL DEFAULT '[]', "note" TEXT);
INSERT INTO "new_Agent" ("id", "name", "createdAt") SELECT "id", "name", "createdAt" FROM "Agent";
DROP TABLE "Agent";
ALTER TABLE "new_Agent" RENAME TO "Agent";
PRAGMA foreign_keys=ON;
`,
    )
    expect(applyMigrations(file, migrations).applied).toEqual(['29990101000000_rebuild_agent'])
    const check = new Database(file, { readonly: true })
    expect(check.prepare('SELECT COUNT(*) AS n FROM "Session"').get()).toEqual({ n: 1 })
    check.close()
  })

  it('refuses a migration edited after it was applied', () => {
    const dir = tempDir()
    const migrations = path.join(dir, 'migrations')
    fs.cpSync(migrationsDirectory(), migrations, { recursive: true })
    const file = path.join(dir, 'tampered.db')
    applyMigrations(file, migrations)
    const [first] = fs
      .readdirSync(migrations)
      .filter((n) => !n.endsWith('.toml'))
      .sort()
    fs.appendFileSync(path.join(migrations, first as string, 'migration.sql'), '\n-- edited\n')
    expect(() => applyMigrations(file, migrations)).toThrow(MigrationError)
  })

  it('refuses to go on after a migration recorded as failed', () => {
    const file = path.join(tempDir(), 'failed.db')
    applyMigrations(file, migrationsDirectory())
    const db = new Database(file)
    db.prepare(
      `INSERT INTO _prisma_migrations (id, checksum, migration_name, started_at, applied_steps_count)
       VALUES ('f', 'x', '29990101000000_failed', '2026-01-01T00:00:00.000Z', 0)`,
    ).run()
    db.close()
    expect(() => applyMigrations(file, migrationsDirectory())).toThrow(/29990101000000_failed failed/)
  })

  it('applies each migration once when several processes start on one new file together (replicas)', async () => {
    const file = path.join(tempDir(), 'replicas.db')
    // Each process loads this TypeScript module through tsx (a dependency of the API, which
    // starts such processes); they race from the first migration on.
    const tsx = pathToFileURL(
      createRequire(path.join(REPO_ROOT, 'apps/api/package.json')).resolve('tsx'),
    ).href
    const script = `import { applyMigrations, migrationsDirectory } from ${JSON.stringify(pathToFileURL(path.join(import.meta.dirname, 'migrate.ts')).href)}
const { applied } = applyMigrations(${JSON.stringify(file)}, migrationsDirectory())
console.log(JSON.stringify(applied))`
    const results = await Promise.all(
      Array.from(
        { length: 3 },
        () =>
          new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
            const child = spawn(process.execPath, ['--import', tsx, '--input-type=module', '-e', script])
            let out = ''
            let err = ''
            child.stdout.on('data', (chunk) => {
              out += chunk
            })
            child.stderr.on('data', (chunk) => {
              err += chunk
            })
            child.on('exit', (code) => resolve({ code, out, err }))
          }),
      ),
    )
    expect(results.map((r) => [r.code, r.err])).toEqual(results.map(() => [0, '']))
    const appliedByAll = results.flatMap((r) => JSON.parse(r.out) as string[]).sort()
    const names = fs.readdirSync(migrationsDirectory()).filter((name) => /^\d{14}_/.test(name))
    expect(appliedByAll).toEqual(names.sort())
    const db = new Database(file, { readonly: true })
    const recorded = db.prepare('SELECT migration_name FROM _prisma_migrations').all()
    db.close()
    expect(recorded).toHaveLength(names.length)
  }, 60_000)

  it('leaves a database the Prisma CLI sees as up to date', () => {
    const file = path.join(tempDir(), 'status.db')
    applyMigrations(file, migrationsDirectory())
    // Through the offline schema engine stand-in (tools/schema-engine).
    const result = spawnSync(
      process.execPath,
      [path.join(REPO_ROOT, 'tools', 'prisma-offline.mjs'), 'migrate', 'status'],
      {
        encoding: 'utf8',
        env: { ...process.env, DATABASE_URL: `file:${file}` },
        timeout: 60_000,
      },
    )
    expect(result.stdout).toContain('Database schema is up to date!')
    expect(result.status).toBe(0)
  })
})

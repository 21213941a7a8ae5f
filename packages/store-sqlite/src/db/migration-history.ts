import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'

/** Why the migrations could not be applied: the history failed earlier, changed, or a migration failed. */
export class MigrationError extends Error {
  override name = 'MigrationError'
}

/** A committed migration: its folder's name, its SQL, and Prisma's checksum of it (sha256 of the file). */
export interface CommittedMigration {
  name: string
  sql: string
  checksum: string
}

/** A row of Prisma's `_prisma_migrations`, as far as deciding what to apply needs it. */
export interface RecordedMigration {
  migration_name: string
  checksum: string
  finished_at: unknown
  rolled_back_at: unknown
}

/** Throws when `migration` was applied with another checksum: an applied migration is never edited. */
export function checkUnchanged(migration: CommittedMigration, recordedChecksum: string): void {
  if (recordedChecksum !== migration.checksum)
    throw new MigrationError(
      `Migration ${migration.name} was modified after it was applied (checksum mismatch).`,
    )
}

/**
 * The committed migrations (one folder each holding `migration.sql`, in name order) a database
 * whose history is `recorded` has not applied yet, with Prisma's rules: a migration that failed
 * and was not resolved stops everything, and an applied one must be unchanged. Both adapters' runners
 * apply what this returns, each in its own transaction.
 */
export function pendingMigrations(
  migrationsDir: string,
  recorded: readonly RecordedMigration[],
): CommittedMigration[] {
  const byName = new Map(recorded.filter((r) => r.rolled_back_at == null).map((r) => [r.migration_name, r]))
  const failed = recorded.find((r) => r.finished_at == null && r.rolled_back_at == null)
  if (failed) {
    throw new MigrationError(
      `Migration ${failed.migration_name} failed earlier and is not resolved; fix the database, then run prisma migrate resolve.`,
    )
  }
  const pending: CommittedMigration[] = []
  const names = fs
    .readdirSync(migrationsDir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && fs.existsSync(path.join(migrationsDir, d.name, 'migration.sql')))
    .map((d) => d.name)
    .sort()
  for (const name of names) {
    const sql = fs.readFileSync(path.join(migrationsDir, name, 'migration.sql'), 'utf8')
    const migration = { name, sql, checksum: createHash('sha256').update(sql).digest('hex') }
    const existing = byName.get(name)
    if (existing) checkUnchanged(migration, existing.checksum)
    else pending.push(migration)
  }
  return pending
}

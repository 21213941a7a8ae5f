import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import {
  checkUnchanged,
  MigrationError,
  pendingMigrations,
  type RecordedMigration,
} from './migration-history.ts'

export { MigrationError }

/** `<repo>/prisma/migrations`, the committed migrations the server applies at start. */
export function migrationsDirectory(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../prisma/migrations')
}

// Prisma's own bookkeeping table, so `prisma migrate status/deploy` agree with what we applied.
const PRISMA_MIGRATIONS_DDL = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    TEXT PRIMARY KEY NOT NULL,
    "checksum"              TEXT NOT NULL,
    "finished_at"           DATETIME,
    "migration_name"        TEXT NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        DATETIME,
    "started_at"            DATETIME NOT NULL DEFAULT current_timestamp,
    "applied_steps_count"   INTEGER UNSIGNED NOT NULL DEFAULT 0
)`

/**
 * Applies every committed migration the database has not recorded yet, each in its own
 * transaction, so an empty or older database file is brought up to date at start-up.
 */
export function applyMigrations(
  databaseFile: string,
  migrationsDir: string,
  log: (message: string) => void = () => {},
): { applied: string[] } {
  fs.mkdirSync(path.dirname(databaseFile), { recursive: true })
  const db = new Database(databaseFile)
  try {
    // Only a file without tables takes it here (an older file keeps its mode until maintenance
    // converts it): free pages can then be returned without a full VACUUM (docs/maintenance.md).
    db.pragma('auto_vacuum = INCREMENTAL')
    db.pragma('journal_mode = WAL')
    db.pragma('foreign_keys = ON')
    db.pragma('busy_timeout = 5000')
    db.exec(PRISMA_MIGRATIONS_DDL)
    const recorded = db
      .prepare('SELECT migration_name, checksum, finished_at, rolled_back_at FROM _prisma_migrations')
      .all() as RecordedMigration[]
    const applied: string[] = []
    const recordedChecksum = db.prepare(
      'SELECT checksum FROM _prisma_migrations WHERE migration_name = ? AND rolled_back_at IS NULL',
    )
    for (const migration of pendingMigrations(migrationsDir, recorded)) {
      const { name, sql, checksum } = migration
      const startedAt = new Date().toISOString()
      // Foreign keys are off while a migration runs (PRAGMA foreign_keys is ignored inside a
      // transaction): a table rebuild must not cascade. They are checked before it commits.
      db.pragma('foreign_keys = OFF')
      const ran = db
        .transaction(() => {
          // Replicas starting together on one file: another may have applied this migration since
          // the list above was read. Looked up again under the write lock this transaction takes
          // first (BEGIN IMMEDIATE), so exactly one process applies each migration.
          const since = recordedChecksum.get(name) as { checksum: string } | undefined
          if (since) {
            checkUnchanged(migration, since.checksum)
            return false
          }
          db.exec(sql)
          const broken = db.pragma('foreign_key_check') as unknown[]
          if (broken.length > 0)
            throw new MigrationError(`Migration ${name} leaves ${broken.length} broken foreign key(s)`)
          db.prepare(
            `INSERT INTO _prisma_migrations (id, checksum, finished_at, migration_name, logs, rolled_back_at, started_at, applied_steps_count)
           VALUES (?, ?, ?, ?, NULL, NULL, ?, 1)`,
          ).run(randomUUID(), checksum, new Date().toISOString(), name, startedAt)
          return true
        })
        .immediate()
      db.pragma('foreign_keys = ON')
      if (!ran) continue
      log(`applied migration ${name}`)
      applied.push(name)
    }
    return { applied }
  } finally {
    db.close()
  }
}

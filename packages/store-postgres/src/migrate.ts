import { randomUUID } from 'node:crypto'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { MigrationError, pendingMigrations, type RecordedMigration } from '@engram/store-sqlite'
import pg from 'pg'

export { MigrationError }

/** `<repo>/prisma/postgres/migrations`: the Postgres schema's own committed migration history. */
export function postgresMigrationsDirectory(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../prisma/postgres/migrations')
}

// Prisma's own bookkeeping table, as its Postgres engine creates it, so `prisma migrate status`
// agrees with what this runner applied.
const PRISMA_MIGRATIONS_DDL = `CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                    VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"              VARCHAR(64) NOT NULL,
    "finished_at"           TIMESTAMPTZ,
    "migration_name"        VARCHAR(255) NOT NULL,
    "logs"                  TEXT,
    "rolled_back_at"        TIMESTAMPTZ,
    "started_at"            TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count"   INTEGER NOT NULL DEFAULT 0
)`

/**
 * The advisory lock Prisma's migrate takes (72707369): replicas starting together on one database
 * apply the history once, one after the other, and a `prisma migrate deploy` waits for them too.
 */
const MIGRATION_LOCK = 72707369

/**
 * Applies every committed migration the database has not recorded yet, each in its own
 * transaction (Postgres runs DDL transactionally: a failing migration leaves nothing behind), so an
 * empty or older database is brought up to date at start-up, as the SQLite adapter does.
 */
export async function applyPostgresMigrations(
  databaseUrl: string,
  migrationsDir: string = postgresMigrationsDirectory(),
  log: (message: string) => void = () => {},
): Promise<{ applied: string[] }> {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK])
    await client.query(PRISMA_MIGRATIONS_DDL)
    const recorded = await client.query<RecordedMigration>(
      'SELECT migration_name, checksum, finished_at, rolled_back_at FROM "_prisma_migrations"',
    )
    const applied: string[] = []
    for (const { name, sql, checksum } of pendingMigrations(migrationsDir, recorded.rows)) {
      const startedAt = new Date()
      await client.query('BEGIN')
      try {
        // No parameters: the simple query protocol, which runs a file of several statements.
        await client.query(sql)
        await client.query(
          `INSERT INTO "_prisma_migrations" (id, checksum, finished_at, migration_name, logs, rolled_back_at, started_at, applied_steps_count)
           VALUES ($1, $2, now(), $3, NULL, NULL, $4, 1)`,
          [randomUUID(), checksum, name, startedAt],
        )
        await client.query('COMMIT')
      } catch (error) {
        await client.query('ROLLBACK')
        throw new MigrationError(`Migration ${name} failed: ${(error as Error).message}`)
      }
      log(`applied migration ${name}`)
      applied.push(name)
    }
    return { applied }
  } finally {
    // Ending the session releases the advisory lock too.
    await client.end()
  }
}

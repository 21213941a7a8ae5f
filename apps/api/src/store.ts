import type { createPostgresEngine, PostgresDatabase, PostgresEngineOptions } from '@engram/store-postgres'
import {
  type AppendInserts,
  applyMigrations,
  createDatabase,
  type Database,
  type GroupCommitSavepoints,
  migrationsDirectory,
  type NewRowJobs,
} from '@engram/store-sqlite'
import { databaseBackend, databaseFileFromUrl } from './env.ts'

/** The engine on Postgres, handed to the services when DATABASE_URL names a Postgres server. */
export interface PostgresBackend {
  db: PostgresDatabase
  /** The engine on this database; backups (logical exports) go to `backupDirectory` when one is given. */
  createEngine: (
    options: Omit<PostgresEngineOptions, 'db' | 'backups'> & { backupDirectory?: string | null },
  ) => ReturnType<typeof createPostgresEngine>
  /** The connection pool's figures now (spec 002's memory.postgres.pool.active). */
  poolActivity?: () => { open: number; active: number; waiting: number } | null
}

/** The database the server runs on, opened and migrated. */
export interface OpenedStore {
  backend: 'sqlite' | 'postgres'
  /**
   * The client the shared Prisma code is written against: SQLite's own, or Postgres's through
   * store-postgres's sharedView (same models, placeholders translated). Health checks and the
   * admin key use it.
   */
  db: Database
  /** Set on Postgres: the engine runs there. */
  postgres: PostgresBackend | null
  /** The SQLite file (backups and vector graphs live beside it); null on Postgres. */
  databaseFile: string | null
  /** Where the data is, without credentials, for the start-up log. */
  location: string
  close(): Promise<void>
}

export interface OpenStoreOptions {
  /** Connections to Postgres at most (ENGRAM_DB_POOL_SIZE). */
  poolSize?: number
  /** Messages one batched append transaction writes at most on Postgres (ENGRAM_DB_APPEND_BATCH). */
  appendBatchMessages?: number
  /** SQLite: a group commit's wait for another process's write lock on the event loop (ENGRAM_SQLITE_LOCK_WAIT_MS). */
  sqliteLockWaitMs?: number
  /** SQLite: when a group commit puts each write in a savepoint (ENGRAM_SQLITE_SAVEPOINTS). */
  sqliteSavepoints?: GroupCommitSavepoints
  /** SQLite: how a group commit's appends insert their messages (ENGRAM_SQLITE_APPEND_INSERTS). */
  sqliteAppendInserts?: AppendInserts
  /** SQLite: appends one group commit writes together at most (ENGRAM_SQLITE_APPENDS_PER_GROUP). */
  sqliteAppendsPerGroup?: number
  /** SQLite: how a new message's embed job is inserted (ENGRAM_SQLITE_NEW_ROW_JOBS). */
  sqliteNewRowJobs?: NewRowJobs
  log?: (message: string) => void
}

/**
 * Opens DATABASE_URL's database and brings its schema up to date: `file:` → SQLite (its
 * migrations), `postgres://` → Postgres (prisma/postgres's migrations, under Prisma's advisory
 * lock so replicas starting together apply them once). The Postgres adapter is loaded only
 * when used: the embedded default never loads `pg`.
 */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<OpenedStore> {
  const log = options.log ?? (() => {})
  if (databaseBackend(url) === 'sqlite') {
    const databaseFile = databaseFileFromUrl(url)
    const { applied } = applyMigrations(databaseFile, migrationsDirectory(), log)
    if (applied.length > 0) log(`applied ${applied.length} migration(s) to ${databaseFile}`)
    const db = createDatabase(databaseFile, {
      groupCommitLockWaitMs: options.sqliteLockWaitMs,
      ...(options.sqliteSavepoints ? { groupCommitSavepoints: options.sqliteSavepoints } : {}),
      ...(options.sqliteAppendInserts ? { appendInserts: options.sqliteAppendInserts } : {}),
      ...(options.sqliteAppendsPerGroup ? { appendsPerGroup: options.sqliteAppendsPerGroup } : {}),
      ...(options.sqliteNewRowJobs ? { newRowJobs: options.sqliteNewRowJobs } : {}),
    })
    return {
      backend: 'sqlite',
      db,
      postgres: null,
      databaseFile,
      location: databaseFile,
      close: () => db.$disconnect(),
    }
  }
  const postgres = await import('@engram/store-postgres')
  const { applied } = await postgres.applyPostgresMigrations(url, undefined, log)
  if (applied.length > 0) log(`applied ${applied.length} migration(s) to Postgres`)
  const db = postgres.createPostgresDatabase(url, { poolSize: options.poolSize })
  const parsed = new URL(url)
  return {
    backend: 'postgres',
    db: postgres.sharedView(db),
    postgres: {
      db,
      poolActivity: () => postgres.poolActivity(db),
      // Each replica listens for vector changes on its own connection to the same database.
      createEngine: ({ backupDirectory, ...engineOptions }) =>
        postgres.createPostgresEngine({
          vectors: { listenUrl: url },
          ...(options.appendBatchMessages
            ? { appendBatch: { maxMessages: options.appendBatchMessages } }
            : {}),
          ...engineOptions,
          db,
          backups: backupDirectory ? { url, directory: backupDirectory } : null,
        }),
    },
    databaseFile: null,
    location: `postgres://${parsed.host}${parsed.pathname}`,
    close: () => db.$disconnect(),
  }
}

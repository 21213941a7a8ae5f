import { type Clock, ValidationError } from '@engram/core'
import type { BackupInfo, BackupStore, RestoreResult } from '@engram/engine'
import Database3 from 'better-sqlite3'
import type { Database } from '../db/client.ts'
import { BackupFolder } from './backup-folder.ts'

/** Where backups of one database file go. */
export interface SqliteBackupOptions {
  databaseFile: string
  directory: string
}

/** Tables a restore leaves as they are: access control and migration history are not memory. */
const RESTORE_KEEPS = new Set(['ApiKey', '_prisma_migrations'])

/**
 * Backups as files in one folder: `VACUUM INTO` while the server serves, and restore by copying
 * every table's rows back on a second connection. Names are checked against the folder's own
 * pattern, so a name never reaches outside it.
 */
export class SqliteBackupStore implements BackupStore {
  private readonly folder: BackupFolder

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly options: SqliteBackupOptions,
  ) {
    this.folder = new BackupFolder(options.directory, '.db')
  }

  /** A consistent copy of the whole database while it serves (SQLite VACUUM INTO). */
  async create(): Promise<BackupInfo> {
    const now = this.clock.now()
    const { name, file } = this.folder.allocate(now)
    await this.db.$executeRawUnsafe(`VACUUM INTO '${file.replaceAll("'", "''")}'`)
    return this.folder.info(name, now)
  }

  async list(): Promise<BackupInfo[]> {
    return this.folder.list()
  }

  /**
   * Replaces every table's rows with the backup's, in one transaction on a second connection to
   * the same file (WAL lets the server keep reading until it commits). API keys stay as they are,
   * so the operator restoring keeps access. The backup must have the same migrations.
   */
  async restore(name: string): Promise<RestoreResult> {
    const backup = this.folder.existing(name)
    const connection = new Database3(this.options.databaseFile)
    let tables: string[]
    try {
      connection.pragma('foreign_keys = OFF')
      // The rows a restore replaces are deleted data like any other (see CONNECTION_PRAGMAS).
      connection.pragma('secure_delete = ON')
      connection.prepare('ATTACH DATABASE ? AS backup').run(backup)
      const migrations = (schema: string) =>
        connection
          .prepare(
            `SELECT migration_name FROM ${schema}._prisma_migrations WHERE finished_at IS NOT NULL ORDER BY migration_name`,
          )
          .all()
          .map((r) => (r as { migration_name: string }).migration_name)
          .join(',')
      if (migrations('main') !== migrations('backup'))
        throw new ValidationError([
          { field: 'name', message: 'the backup was made with other migrations than this server has' },
        ])
      tables = (
        connection
          .prepare(
            `SELECT name FROM main.sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%Search_%'`,
          )
          .all() as { name: string }[]
      )
        .map((r) => r.name)
        .filter((t) => !RESTORE_KEEPS.has(t))
      connection.transaction(() => {
        for (const table of tables) connection.prepare(`DELETE FROM main."${table}"`).run()
        for (const table of tables)
          connection.prepare(`INSERT INTO main."${table}" SELECT * FROM backup."${table}"`).run()
        // Keys of agents the backup does not have would dangle: they go.
        connection
          .prepare(
            `DELETE FROM main."ApiKey" WHERE "agentId" IS NOT NULL AND "agentId" NOT IN (SELECT "id" FROM main."Agent")`,
          )
          .run()
        const broken = connection.prepare('PRAGMA main.foreign_key_check').all()
        if (broken.length) throw new Error(`restore would break ${broken.length} references`)
      })()
    } finally {
      try {
        connection.prepare('DETACH DATABASE backup').run()
      } catch {}
      connection.close()
    }
    return { name, tables: tables.length }
  }
}

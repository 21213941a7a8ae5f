import fs from 'node:fs'
import readline from 'node:readline'
import zlib from 'node:zlib'
import { type Clock, ValidationError } from '@engram/core'
import type { BackupInfo, BackupStore, RestoreResult } from '@engram/engine'
import { BackupFolder } from '@engram/store-sqlite'
import pg from 'pg'

/** Where logical backups of one Postgres database go (files on this replica's disk). */
export interface PostgresBackupOptions {
  /** The database's URL: backups read and restore on their own connection. */
  url: string
  directory: string
}

const FORMAT = 'engram-postgres-logical/1'
/** Tables a restore leaves as they are: access control and migration history are not memory. */
const RESTORE_KEEPS = new Set(['ApiKey', '_prisma_migrations'])
/** Rows per line of the backup file (one SELECT … json_agg each). */
const ROWS_PER_CHUNK = 1_000

interface Header {
  format: string
  migrations: string[]
  tables: string[]
}

/**
 * Backups of a Postgres database as a logical export, not pg_dump: a gzip of JSON lines, every
 * table's rows read in one REPEATABLE READ snapshot (consistent while the server serves) and
 * encoded by Postgres itself (`json_agg`: bytea as hex, times as ISO, tsvector as text), restored
 * with `json_populate_recordset`, which decodes each column with its own type. No server binary
 * is needed on the replica, and a restore is one transaction. The file is Engram's format, read
 * by Engram's restore; for the server as a whole, use the server's own tools (pg_dump, base
 * backups): docs/postgres-redis.md.
 */
export class PostgresBackupStore implements BackupStore {
  private readonly folder: BackupFolder

  constructor(
    private readonly clock: Clock,
    private readonly options: PostgresBackupOptions,
  ) {
    this.folder = new BackupFolder(options.directory, '.pg.jsonl.gz')
  }

  async create(): Promise<BackupInfo> {
    const now = this.clock.now()
    const { name, file: target } = this.folder.allocate(now)
    const partial = `${target}.partial`
    const client = await this.connect()
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
      const tables = (await dataTables(client)).filter((t) => t !== '_prisma_migrations')
      const header: Header = { format: FORMAT, migrations: await migrations(client), tables }
      const gzip = zlib.createGzip()
      const file = fs.createWriteStream(partial)
      gzip.pipe(file)
      const write = (line: unknown) =>
        new Promise<void>((resolve) => {
          if (gzip.write(`${JSON.stringify(line)}\n`)) resolve()
          else gzip.once('drain', () => resolve())
        })
      await write(header)
      for (const table of tables) {
        for (let offset = 0; ; offset += ROWS_PER_CHUNK) {
          // ctid order is the heap's: stable within the snapshot, no index needed.
          const { rows } = await client.query<{ rows: unknown[] | null }>(
            `SELECT json_agg(t) AS rows FROM (SELECT * FROM "${table}" ORDER BY ctid LIMIT ${ROWS_PER_CHUNK} OFFSET ${offset}) t`,
          )
          const chunk = rows[0]?.rows ?? []
          if (chunk.length > 0) await write({ table, rows: chunk })
          if (chunk.length < ROWS_PER_CHUNK) break
        }
      }
      await client.query('COMMIT')
      await new Promise<void>((resolve, reject) => {
        file.once('finish', () => resolve())
        file.once('error', reject)
        gzip.end()
      })
      // Only a complete file gets a backup's name: a failed export leaves no half backup listed.
      fs.renameSync(partial, target)
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {})
      fs.rmSync(partial, { force: true })
      throw error
    } finally {
      await client.end()
    }
    return this.folder.info(name, now)
  }

  async list(): Promise<BackupInfo[]> {
    return this.folder.list()
  }

  /**
   * Replaces every table's rows with the backup's in one transaction: API keys are kept (the
   * operator restoring keeps access; keys of agents the backup lacks go), parents are written
   * before children, and the id sequences continue after the restored ids.
   */
  async restore(name: string): Promise<RestoreResult> {
    const file = this.folder.existing(name)
    const lines = readline.createInterface({
      input: fs.createReadStream(file).pipe(zlib.createGunzip()),
      crlfDelay: Number.POSITIVE_INFINITY,
    })
    const iterator = lines[Symbol.asyncIterator]()
    const first = await iterator.next()
    const header = (first.done ? null : JSON.parse(first.value)) as Header | null
    if (!header || header.format !== FORMAT)
      throw new ValidationError([{ field: 'name', message: `${name} is not an Engram Postgres backup` }])
    const client = await this.connect()
    let restored: string[] = []
    try {
      await client.query('BEGIN')
      if ((await migrations(client)).join(',') !== header.migrations.join(','))
        throw new ValidationError([
          { field: 'name', message: 'the backup was made with other migrations than this server has' },
        ])
      const tables = (await dataTables(client)).filter((t) => !RESTORE_KEEPS.has(t))
      restored = tables.filter((t) => header.tables.includes(t))
      // Keys outlive the restore: read them before deleting the agents they cascade from.
      const { rows: keys } = await client.query<{ rows: unknown[] | null }>(
        'SELECT json_agg(k) AS rows FROM "ApiKey" k',
      )
      const order = await parentsFirst(client, tables)
      for (const table of [...order].reverse()) await client.query(`DELETE FROM "${table}"`)
      // Lines are grouped by table in the header's order; children may come before parents in
      // the file, so rows wait until their table's turn.
      const pending = new Map<string, unknown[][]>()
      for (let line = await iterator.next(); !line.done; line = await iterator.next()) {
        if (!line.value) continue
        const { table, rows } = JSON.parse(line.value) as { table: string; rows: unknown[] }
        if (!restored.includes(table)) continue
        const list = pending.get(table) ?? []
        list.push(rows)
        pending.set(table, list)
      }
      for (const table of order) {
        for (const rows of pending.get(table) ?? []) {
          await client.query(
            `INSERT INTO "${table}" SELECT * FROM json_populate_recordset(NULL::"${table}", $1::json)`,
            [JSON.stringify(rows)],
          )
        }
      }
      await client.query('DELETE FROM "ApiKey"')
      await client.query(
        `INSERT INTO "ApiKey" SELECT k.* FROM json_populate_recordset(NULL::"ApiKey", $1::json) k
          WHERE k."agentId" IS NULL OR k."agentId" IN (SELECT "id" FROM "Agent")`,
        [JSON.stringify(keys[0]?.rows ?? [])],
      )
      await resetSequences(client, restored)
      // A COMMIT of a transaction a failed statement aborted answers ROLLBACK, not an error.
      const committed = await client.query('COMMIT')
      if (committed.command !== 'COMMIT') throw new Error(`the restore of ${name} was rolled back`)
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {})
      throw error
    } finally {
      lines.close()
      await client.end()
    }
    return { name, tables: restored.length }
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: this.options.url })
    await client.connect()
    return client
  }
}

/** The schema's tables (the migration history included). */
async function dataTables(client: pg.Client): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`,
  )
  return rows.map((r) => r.name)
}

async function migrations(client: pg.Client): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `SELECT migration_name AS name FROM "_prisma_migrations" WHERE finished_at IS NOT NULL AND rolled_back_at IS NULL ORDER BY migration_name`,
  )
  return rows.map((r) => r.name)
}

/** The tables ordered so each comes after every table it references (self-references aside). */
async function parentsFirst(client: pg.Client, tables: string[]): Promise<string[]> {
  const { rows } = await client.query<{ child: string; parent: string }>(
    `SELECT c.conrelid::regclass::text AS child, c.confrelid::regclass::text AS parent
       FROM pg_constraint c WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace`,
  )
  const unquote = (name: string) => name.replace(/^"|"$/g, '')
  const parents = new Map<string, Set<string>>(tables.map((t) => [t, new Set<string>()]))
  for (const { child, parent } of rows) {
    const c = unquote(child)
    const p = unquote(parent)
    if (c !== p && parents.has(c) && parents.has(p)) parents.get(c)?.add(p)
  }
  const out: string[] = []
  const placed = new Set<string>()
  const visit = (table: string, path: Set<string>) => {
    if (placed.has(table) || path.has(table)) return
    path.add(table)
    for (const parent of parents.get(table) ?? []) visit(parent, path)
    path.delete(table)
    placed.add(table)
    out.push(table)
  }
  for (const table of tables) visit(table, new Set())
  return out
}

/**
 * Each serial column continues after the largest restored value, so new rows never collide. The
 * serial columns are read from the catalog: a failing statement would abort the transaction.
 */
async function resetSequences(client: pg.Client, tables: string[]): Promise<void> {
  const { rows } = await client.query<{ table: string; column: string; sequence: string }>(
    `SELECT c.table_name AS "table", c.column_name AS "column",
            pg_get_serial_sequence(quote_ident(c.table_name), c.column_name) AS "sequence"
       FROM information_schema.columns c
      WHERE c.table_schema = current_schema() AND c.column_default LIKE 'nextval(%'`,
  )
  for (const { table, column, sequence } of rows) {
    if (!tables.includes(table) || !sequence) continue
    await client.query(
      `SELECT setval($1, COALESCE((SELECT max("${column}") FROM "${table}"), 0) + 1, false)`,
      [sequence],
    )
  }
}

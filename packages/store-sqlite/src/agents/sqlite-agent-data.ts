import type { AgentDataStore, Logger, StoreRemainder } from '@engram/engine'
import { type Database, directSqlite } from '../db/client.ts'
import { FULL_TEXT_TABLES } from '../full-text/term-statistics.ts'

/** Attempts at truncating the WAL after a deletion, TRUNCATE_RETRY_MS apart (about 5 s in all). */
const TRUNCATE_ATTEMPTS = 100
const TRUNCATE_RETRY_MS = 50

/**
 * The physical end of deleted agents' data in the SQLite file, and the count of what remains in
 * every table and full-text index. The connection runs with secure_delete (see CONNECTION_PRAGMAS),
 * so what a delete frees is zeroed; the purge takes care of what secure_delete does not reach.
 */
export class SqliteAgentData implements AgentDataStore {
  constructor(
    private readonly db: Database,
    private readonly log: Logger = console,
  ) {}

  /**
   * Merges the full-text indexes so no segment keeps a deleted term (FTS5 keeps them, marked
   * deleted, until segments merge), rebuilds the indexes, and checkpoints the WAL, truncating it,
   * so no older page image holds deleted text. The whole file is treated whichever agent is named:
   * segments and pages are shared between agents.
   */
  async purge(_agentId?: string): Promise<void> {
    const { db, log } = this
    for (const table of Object.keys(FULL_TEXT_TABLES))
      await db.$executeRawUnsafe(`INSERT INTO "${table}" ("${table}") VALUES ('optimize')`)
    // secure_delete zeroes what a delete frees, but a b-tree page split earlier leaves stale copies
    // of moved cells in the old page's unused space (found: a deleted agent's id and a content hash
    // in an EmbeddingCache index page). Rebuilding the indexes frees those pages, zeroed.
    await db.$executeRawUnsafe('REINDEX')
    // The checkpoint thread's own (passive) checkpoint, or a reader still on an older snapshot,
    // makes it busy for a moment: tried again, then left to later checkpoints with a warning.
    for (let attempt = 1; ; attempt++) {
      // SQLITE_LOCKED: a statement of this very connection is still reading (a job's read on the
      // shared connection); like busy, it passes in a moment.
      const checkpoint = await db
        .$queryRawUnsafe<{ busy: number | bigint }[]>('PRAGMA wal_checkpoint(TRUNCATE)')
        .then(
          ([row]) => row,
          (error: unknown) => {
            if (!/SQLITE_LOCKED|database table is locked/.test(String((error as Error)?.message ?? error)))
              throw error
            return { busy: 1 }
          },
        )
      if (Number(checkpoint?.busy ?? 0) === 0) return
      if (attempt >= TRUNCATE_ATTEMPTS) {
        log.warn(`[lifecycle] the WAL could not be truncated after ${attempt} attempts (busy)`)
        return
      }
      await new Promise((resolve) => setTimeout(resolve, TRUNCATE_RETRY_MS))
    }
  }

  async remains(agentId: string): Promise<StoreRemainder[]> {
    return [...(await this.tableRows(agentId)), ...(await this.fullTextRows(agentId))]
  }

  async agentIds(): Promise<string[]> {
    const agents = await this.db.agent.findMany({ select: { id: true } })
    return agents.map((a) => a.id)
  }

  /**
   * Rows per table: every table with an "agentId" column (so a table added later is counted without
   * changing this), and the agent's own row.
   */
  private async tableRows(agentId: string): Promise<StoreRemainder[]> {
    const { db } = this
    const tables = await db.$queryRawUnsafe<{ name: string }[]>(
      `SELECT m."name" AS name FROM sqlite_master m
        WHERE m."type" = 'table' AND EXISTS (SELECT 1 FROM pragma_table_info(m."name") c WHERE c."name" = 'agentId')
        ORDER BY m."name"`,
    )
    const rows: StoreRemainder[] = []
    for (const { name } of [{ name: 'Agent' }, ...tables]) {
      const column = name === 'Agent' ? 'id' : 'agentId'
      const [row] = await db.$queryRawUnsafe<{ n: number | bigint }[]>(
        `SELECT count(*) AS n FROM "${name}" WHERE "${column}" = ?`,
        agentId,
      )
      // Jobs are rows too, but what they hold is work still to run for the agent.
      rows.push({ store: name, kind: name === 'Job' ? 'QUEUE' : 'TABLE', count: Number(row?.n ?? 0) })
    }
    return rows
  }

  /**
   * Documents in each full-text index, read from the index itself (fts5vocab), not from the table
   * it indexes: the agent's, and those whose row is gone (a deleted row the index still holds,
   * whichever agent it was).
   */
  private async fullTextRows(agentId: string): Promise<StoreRemainder[]> {
    const direct = directSqlite(this.db)
    if (!direct) return []
    const out: StoreRemainder[] = []
    for (const [index, table] of Object.entries(FULL_TEXT_TABLES)) {
      const vocabulary = `${index}_documents`
      await this.db.$executeRawUnsafe(
        `CREATE VIRTUAL TABLE IF NOT EXISTS temp."${vocabulary}" USING fts5vocab(main, '${index}', 'instance')`,
      )
      const [row] = await direct.all<{ own: number; orphaned: number }>(
        `SELECT count(DISTINCT CASE WHEN t."agentId" = ? THEN v."doc" END) AS own,
                count(DISTINCT CASE WHEN t."id" IS NULL THEN v."doc" END) AS orphaned
           FROM temp."${vocabulary}" v LEFT JOIN "${table}" t ON t."id" = v."doc"`,
        agentId,
      )
      out.push({ store: index, kind: 'FULL_TEXT', count: Number(row?.own ?? 0) })
      out.push({ store: `${index} (rows deleted)`, kind: 'FULL_TEXT', count: Number(row?.orphaned ?? 0) })
    }
    return out
  }
}

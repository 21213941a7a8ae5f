import type { AgentDataStore, Logger, StoreRemainder } from '@engram/engine'
import type { PostgresDatabase } from '../db/client.ts'

/**
 * The physical end of deleted agents' data on Postgres, and the count of what remains. A delete
 * leaves dead row versions (and their index entries) in the table's pages until VACUUM reclaims
 * them; the full-text index is the row (its tsvector column), so nothing else keeps a document.
 * WAL segments and base backups outside the database keep older pages until they are recycled:
 * the documented exception (docs/postgres-redis.md), as the server's files are not this process's.
 */
export class PostgresAgentData implements AgentDataStore {
  constructor(
    private readonly db: PostgresDatabase,
    private readonly log: Logger = console,
  ) {}

  /**
   * VACUUM of every table holding agent rows: dead versions of the deleted rows are removed from
   * the heap and the indexes (VACUUM cannot run inside a transaction; each table on its own).
   */
  async purge(_agentId?: string): Promise<void> {
    for (const table of await this.agentTables()) {
      try {
        await this.db.$executeRawUnsafe(`VACUUM "${table}"`)
      } catch (error) {
        // Another VACUUM of the table (another replica's purge) is enough; logged, not fatal.
        this.log.warn(`[lifecycle] VACUUM "${table}" failed: ${(error as Error).message}`)
      }
    }
  }

  async remains(agentId: string): Promise<StoreRemainder[]> {
    const rows: StoreRemainder[] = []
    for (const name of ['Agent', ...(await this.agentTables())]) {
      const column = name === 'Agent' ? 'id' : 'agentId'
      const [row] = await this.db.$queryRawUnsafe<{ n: bigint }[]>(
        `SELECT count(*) AS n FROM "${name}" WHERE "${column}" = $1`,
        agentId,
      )
      rows.push({ store: name, kind: name === 'Job' ? 'QUEUE' : 'TABLE', count: Number(row?.n ?? 0) })
    }
    // The full-text index lives in the rows' tsvector columns: its documents are the table's.
    for (const table of ['Message', 'MemoryItem', 'Knowledge']) {
      const [row] = await this.db.$queryRawUnsafe<{ n: bigint }[]>(
        `SELECT count(*) AS n FROM "${table}" WHERE "agentId" = $1 AND "searchVector" IS NOT NULL`,
        agentId,
      )
      rows.push({ store: `${table}.searchVector`, kind: 'FULL_TEXT', count: Number(row?.n ?? 0) })
    }
    return rows
  }

  async agentIds(): Promise<string[]> {
    const agents = await this.db.agent.findMany({ select: { id: true } })
    return agents.map((a) => a.id)
  }

  /** Every table with an "agentId" column, so a table added later is counted without changing this. */
  private async agentTables(): Promise<string[]> {
    const tables = await this.db.$queryRawUnsafe<{ name: string }[]>(
      `SELECT c.table_name AS name FROM information_schema.columns c
        WHERE c.table_schema = current_schema() AND c.column_name = 'agentId' ORDER BY c.table_name`,
    )
    return tables.map((t) => t.name)
  }
}

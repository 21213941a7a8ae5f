import type { CompactionReport, Logger, MaintenanceStep, StoreCompaction } from '@engram/engine'
import type { PostgresDatabase } from './db/client.ts'

/**
 * Postgres's compaction: VACUUM (ANALYZE) of the tables retention deletes from (dead row versions
 * and index entries reclaimed for reuse, planner statistics refreshed). Plain VACUUM does not
 * give space back to the operating system (VACUUM FULL would, under an exclusive lock: not for a
 * serving database), so the size before and after is the database's, and what was freed shows as
 * the dead tuples removed. pgvector's HNSW indexes are vacuumed with their tables.
 */
export class PostgresCompaction implements StoreCompaction {
  constructor(
    private readonly db: PostgresDatabase,
    private readonly log: Logger = console,
  ) {}

  /** The tables a run deletes from (conversations and what cascades from them, summaries). */
  static readonly TABLES = [
    'Message',
    'MemoryEntry',
    'Session',
    'Embedding',
    'Summary',
    'GraphEvidence',
    'Job',
  ]

  async size(): Promise<number | null> {
    const [row] = await this.db.$queryRawUnsafe<{ n: bigint }[]>(
      'SELECT pg_database_size(current_database()) AS n',
    )
    return row ? Number(row.n) : null
  }

  async compact(options: { dryRun: boolean }): Promise<CompactionReport> {
    const bytesBefore = await this.size()
    const dead = await this.deadTuples()
    if (options.dryRun)
      return {
        steps: [
          { name: 'vacuum', detail: `dry run: ${dead} dead row versions could be reclaimed`, durationMs: 0 },
        ],
        bytesBefore,
        bytesAfter: bytesBefore,
      }
    const started = performance.now()
    let vacuumed = 0
    for (const table of PostgresCompaction.TABLES) {
      try {
        // VACUUM cannot run inside a transaction: each table on its own statement.
        await this.db.$executeRawUnsafe(`VACUUM (ANALYZE) "${table}"`)
        vacuumed++
      } catch (error) {
        // Another replica's VACUUM of the table is enough; logged, not fatal.
        this.log.warn(`[maintenance] VACUUM "${table}" failed: ${(error as Error).message}`)
      }
    }
    const steps: MaintenanceStep[] = [
      {
        name: 'vacuum',
        detail: `VACUUM (ANALYZE) of ${vacuumed} tables; ${dead} dead row versions before`,
        durationMs: Math.round(performance.now() - started),
      },
    ]
    return { steps, bytesBefore, bytesAfter: await this.size() }
  }

  private async deadTuples(): Promise<number> {
    const [row] = await this.db.$queryRawUnsafe<{ n: bigint | null }[]>(
      `SELECT sum(n_dead_tup) AS n FROM pg_stat_user_tables WHERE relname = ANY($1::text[])`,
      PostgresCompaction.TABLES,
    )
    return Number(row?.n ?? 0)
  }
}

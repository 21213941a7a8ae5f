import fs from 'node:fs'
import type {
  CompactionReport,
  Logger,
  MaintenanceRemoved,
  MaintenanceRepository,
  MaintenanceRun,
  MaintenanceStep,
  StoreCompaction,
} from '@engram/engine'
import type { Database } from '../db/client.ts'
import { FULL_TEXT_TABLES } from '../full-text/term-statistics.ts'
import type { MaintenanceRun as RunRow } from '../generated/prisma/client.ts'

/**
 * Maintenance's runs and retention reads on Prisma's model API, so the same code serves SQLite
 * and Postgres (through store-postgres's sharedView). `createdAt` of a message is when the store
 * wrote it (the server's clock), never the caller's `timestamp`: an imported history is as young
 * as its import.
 */
export function sqliteMaintenance(db: Database): MaintenanceRepository {
  return {
    start: async (run) => {
      try {
        const row = await db.maintenanceRun.create({
          data: { ...run, status: 'RUNNING', removed: '{}', steps: '[]' },
        })
        return toRun(row)
      } catch (error) {
        // The slot's unique key: another process recorded this occurrence first.
        if (run.slot && (error as { code?: string })?.code === 'P2002') return null
        throw error
      }
    },
    finish: async (id, outcome) =>
      toRun(
        await db.maintenanceRun.update({
          where: { id },
          data: {
            status: outcome.status,
            finishedAt: outcome.finishedAt,
            removed: JSON.stringify(outcome.removed),
            bytesReclaimed: outcome.bytesReclaimed,
            steps: JSON.stringify(outcome.steps),
            error: outcome.error,
          },
        }),
      ),
    list: async (offset, limit) => {
      const [totalCount, rows] = await Promise.all([
        db.maintenanceRun.count(),
        db.maintenanceRun.findMany({
          orderBy: [{ startedAt: 'desc' }, { id: 'desc' }],
          skip: offset,
          take: limit,
        }),
      ])
      return { totalCount, runs: rows.map(toRun) }
    },
    lastScheduledSlot: async () => {
      const row = await db.maintenanceRun.findFirst({
        where: { slot: { not: null } },
        orderBy: { slot: 'desc' },
        select: { slot: true },
      })
      return row?.slot ?? null
    },
    expiredConversations: async (agentId, storedBefore, limit) => {
      // A pinned memory citing a conversation keeps it (the user asked to keep what it came from).
      // Left out in the query, not after it: kept conversations must not fill a run's `limit`.
      const pinned = await db.memoryItem.findMany({
        where: { agentId, pinned: true, sourceConversationId: { not: null } },
        select: { sourceConversationId: true },
        distinct: ['sourceConversationId'],
      })
      const kept = pinned.flatMap((item) => (item.sourceConversationId ? [item.sourceConversationId] : []))
      const sessions = await db.session.findMany({
        where: {
          agentId,
          createdAt: { lt: storedBefore },
          ...(kept.length > 0 ? { conversationId: { notIn: kept } } : {}),
          // Nothing stored since the cutoff, and nothing promoted to long-term memory.
          messages: { none: { createdAt: { gte: storedBefore } } },
          entries: { none: { type: 'long_term' } },
        },
        orderBy: [{ updatedAt: 'asc' }, { id: 'asc' }],
        take: limit,
        select: { conversationId: true, _count: { select: { messages: true } } },
      })
      return sessions.map((session) => ({
        conversationId: session.conversationId,
        messages: session._count.messages,
      }))
    },
    countSummariesBefore: (agentId, storedBefore) =>
      db.summary.count({ where: { agentId, createdAt: { lt: storedBefore } } }),
  }
}

function toRun(row: RunRow): MaintenanceRun {
  return {
    id: row.id,
    trigger: row.trigger as MaintenanceRun['trigger'],
    dryRun: row.dryRun,
    status: row.status as MaintenanceRun['status'],
    slot: row.slot,
    agentId: row.agentId,
    holder: row.holder,
    startedAt: row.startedAt,
    finishedAt: row.finishedAt,
    removed: {
      conversations: 0,
      messages: 0,
      summaries: 0,
      ...parse<Partial<MaintenanceRemoved>>(row.removed, {}),
    },
    bytesReclaimed: row.bytesReclaimed,
    steps: parse<MaintenanceStep[]>(row.steps, []),
    error: row.error,
  }
}

function parse<T>(json: string, fallback: T): T {
  try {
    return JSON.parse(json) as T
  } catch {
    return fallback
  }
}

/** What compaction asks of the vector store: drop indexes that are mostly deleted entries. */
export interface SparseIndexes {
  dropSparseIndexes(share: number, dryRun: boolean): { held: number; rebuilt: number }
}

/**
 * SQLite's compaction: the full-text indexes merged (FTS5 'optimize'), free pages returned to the
 * file system (incremental vacuum; a file created before auto_vacuum was INCREMENTAL is converted
 * once by a full VACUUM), the WAL checkpointed and truncated, and vector indexes that are mostly
 * deleted entries rebuilt. Sizes are the database file and its WAL, before and after.
 */
export class SqliteCompaction implements StoreCompaction {
  constructor(
    private readonly db: Database,
    private readonly vectors: SparseIndexes | null,
    private readonly log: Logger = console,
  ) {}

  async size(): Promise<number | null> {
    const file = await this.file()
    if (!file) return null
    return fileSize(file) + fileSize(`${file}-wal`)
  }

  async compact(options: { dryRun: boolean; vectorRebuildDeletedShare: number }): Promise<CompactionReport> {
    const { db } = this
    const steps: MaintenanceStep[] = []
    const bytesBefore = await this.size()
    const step = async (name: string, work: () => Promise<string>) => {
      const started = performance.now()
      const detail = await work()
      steps.push({ name, detail, durationMs: Math.round(performance.now() - started) })
    }
    const [freelist] = await db.$queryRawUnsafe<{ n: number | bigint }[]>('PRAGMA freelist_count')
    const [pageSize] = await db.$queryRawUnsafe<{ n: number | bigint }[]>('PRAGMA page_size')
    const freeBytes =
      Number(Object.values(freelist ?? {})[0] ?? 0) * Number(Object.values(pageSize ?? {})[0] ?? 0)
    if (options.dryRun) {
      steps.push({
        name: 'vacuum',
        detail: `dry run: ${freeBytes} bytes of free pages could be returned`,
        durationMs: 0,
      })
      const vectors = this.vectors?.dropSparseIndexes(options.vectorRebuildDeletedShare, true)
      if (vectors)
        steps.push({
          name: 'vector indexes',
          detail: `dry run: ${vectors.rebuilt} would be rebuilt`,
          durationMs: 0,
        })
      return { steps, bytesBefore, bytesAfter: bytesBefore }
    }
    await step('full-text merge', async () => {
      for (const table of Object.keys(FULL_TEXT_TABLES))
        await db.$executeRawUnsafe(`INSERT INTO "${table}" ("${table}") VALUES ('optimize')`)
      return `${Object.keys(FULL_TEXT_TABLES).length} full-text indexes optimized`
    })
    await step('vacuum', async () => {
      const [mode] = await db.$queryRawUnsafe<{ auto_vacuum: number | bigint }[]>('PRAGMA auto_vacuum')
      if (Number(mode?.auto_vacuum ?? 0) !== 2) {
        // auto_vacuum changes only through a full VACUUM on an existing file: once, then incremental.
        await db.$executeRawUnsafe('PRAGMA auto_vacuum = INCREMENTAL')
        await db.$executeRawUnsafe('VACUUM')
        return `converted to incremental auto-vacuum (full VACUUM), ${freeBytes} bytes of free pages`
      }
      await db.$queryRawUnsafe('PRAGMA incremental_vacuum')
      return `incremental vacuum of ${freeBytes} bytes of free pages`
    })
    await step('WAL checkpoint', async () => {
      const [row] = await db.$queryRawUnsafe<{ busy: number | bigint }[]>('PRAGMA wal_checkpoint(TRUNCATE)')
      const busy = Number(row?.busy ?? 0) !== 0
      if (busy) this.log.warn('[maintenance] the WAL checkpoint was busy; later checkpoints truncate it')
      return busy ? 'busy: left to the next checkpoint' : 'checkpointed and truncated'
    })
    if (this.vectors)
      await step('vector indexes', async () => {
        const result = this.vectors?.dropSparseIndexes(options.vectorRebuildDeletedShare, false)
        return `${result?.rebuilt ?? 0} of ${(result?.held ?? 0) + (result?.rebuilt ?? 0)} held indexes rebuilt (deleted share ≥ ${options.vectorRebuildDeletedShare})`
      })
    return { steps, bytesBefore, bytesAfter: await this.size() }
  }

  private async file(): Promise<string | null> {
    const rows = await this.db.$queryRawUnsafe<{ name: string; file: string }[]>('PRAGMA database_list')
    const main = rows.find((row) => row.name === 'main')
    return main?.file ? main.file : null
  }
}

function fileSize(file: string): number {
  try {
    return fs.statSync(file).size
  } catch {
    return 0
  }
}

import type { DecayCandidate, MemoryEntry, OptimizationSnapshot, OptimizerExplanation } from '@engram/core'
import type {
  EntryStamp,
  OptimizerRepository,
  OptimizerRunChanges,
  Repositories,
  SnapshotEvent,
  StampedEntry,
} from '@engram/engine'
import { type Database, directSqlite, sqliteDate } from '../db/client.ts'
import { type SqlDialect, sqliteDialect } from '../db/dialect.ts'
import type { OptimizationSnapshot as OptimizationSnapshotRow } from '../generated/prisma/client.ts'
import { toEntry } from '../mappers.ts'
import { prismaRepositories } from '../repositories/prisma-repositories.ts'

interface RawEntryRow {
  id: number | bigint
  type: string
  role: string
  content: string
  tokenCount: number | bigint
  relevance: number
  isCompressed: number | boolean
  timestamp: string | Date
  sessionId: string | null
}

/** Raw rows as either database returns them: Postgres gives Dates and booleans, SQLite text and 0/1. */
interface RawStampRow {
  id: number | bigint
  version: string | number | Date
  contentLength: number | bigint
  type: string
  relevance: number
  isCompressed: number | boolean
  tokenCount: number | bigint
}

type RawStampedRow = RawEntryRow & { version: string | number | Date; contentLength: number | bigint }

const CHUNK = 500

/** Compressions per statement: three bound values each, well under SQLite's limit. */
const COMPRESS_CHUNK = 200

/** The optimizer's reads and its run's writes on SQLite: the entries read lean, the writes batched. */
export class SqliteOptimizerRepository implements OptimizerRepository {
  constructor(
    private readonly db: Database,
    private readonly dialect: SqlDialect = sqliteDialect,
  ) {}

  async agentsWithEntries(): Promise<string[]> {
    const agents = await this.db.memoryEntry.findMany({ distinct: ['agentId'], select: { agentId: true } })
    return agents.map((row) => row.agentId)
  }

  /**
   * At 100K entries Prisma's row mapping costs more than the query: a prepared statement on the
   * direct connection when there is one, selecting only the columns the optimizer reads.
   */
  async entries(agentId: string, sessionId: string | null): Promise<MemoryEntry[]> {
    const direct = directSqlite(this.db)
    if (!direct) {
      const rows = await this.db.memoryEntry.findMany({
        where: { agentId, ...(sessionId ? { sessionId } : {}) },
        orderBy: [{ timestamp: 'asc' }, { id: 'asc' }],
      })
      return rows.map(toEntry)
    }
    const columns = ENTRY_COLUMNS
    const rows = sessionId
      ? await direct.all<RawEntryRow>(
          `SELECT ${columns} FROM "MemoryEntry" WHERE "agentId" = ? AND "sessionId" = ? ORDER BY "timestamp", "id"`,
          agentId,
          sessionId,
        )
      : await direct.all<RawEntryRow>(
          `SELECT ${columns} FROM "MemoryEntry" WHERE "agentId" = ? ORDER BY "timestamp", "id"`,
          agentId,
        )
    return rows.map(fromRawRow)
  }

  /**
   * Every row's stamp without its text: the optimizer keeps the entries between runs and reads
   * the text of new or changed rows only (entriesByIds). The version is updatedAt as stored, which
   * every write path sets (Prisma's @updatedAt, the raw inserts and the compression UPDATE). The
   * length is the text's bytes (octet_length, from the row's header: length() counts characters,
   * which reads every text), in every read alike. On the direct connection the rows come as arrays.
   */
  async entryStamps(agentId: string, sessionId: string | null): Promise<EntryStamp[]> {
    const sql = `SELECT "id", "updatedAt" AS "version", octet_length("content") AS "contentLength", "type", "relevance", "isCompressed", "tokenCount"
                   FROM "MemoryEntry" WHERE "agentId" = ? ${sessionId ? 'AND "sessionId" = ?' : ''}
                  ORDER BY "timestamp", "id"`
    const params = sessionId ? [agentId, sessionId] : [agentId]
    const direct = directSqlite(this.db)
    if (direct)
      return (await direct.allArrays(sql, ...params)).map((row) => ({
        id: String(row[0]),
        version: versionOf(row[1] as RawStampRow['version']),
        contentLength: Number(row[2]),
        type: row[3] as MemoryEntry['type'],
        relevance: Number(row[4]),
        isCompressed: row[5] === 1 || row[5] === true,
        tokenCount: Number(row[6]),
      }))
    return (await this.db.$queryRawUnsafe<RawStampRow[]>(sql, ...params)).map(toStamp)
  }

  async stampedEntries(agentId: string, sessionId: string | null): Promise<StampedEntry[]> {
    const sql = `SELECT ${ENTRY_COLUMNS}, "updatedAt" AS "version", octet_length("content") AS "contentLength"
                   FROM "MemoryEntry" WHERE "agentId" = ? ${sessionId ? 'AND "sessionId" = ?' : ''}
                  ORDER BY "timestamp", "id"`
    const params = sessionId ? [agentId, sessionId] : [agentId]
    const direct = directSqlite(this.db)
    const rows = direct
      ? await direct.all<RawStampedRow>(sql, ...params)
      : await this.db.$queryRawUnsafe<RawStampedRow[]>(sql, ...params)
    return rows.map((row) => ({
      entry: fromRawRow(row),
      version: versionOf(row.version),
      contentLength: Number(row.contentLength),
    }))
  }

  async entriesByIds(agentId: string, ids: readonly string[]): Promise<StampedEntry[]> {
    const found: StampedEntry[] = []
    const direct = directSqlite(this.db)
    for (const chunk of chunks(ids.map(Number))) {
      const sql = `SELECT ${ENTRY_COLUMNS}, "updatedAt" AS "version", octet_length("content") AS "contentLength"
                     FROM "MemoryEntry" WHERE "agentId" = ? AND "id" IN (${this.dialect.integersOf('?')})`
      const params = [agentId, JSON.stringify(chunk)]
      const rows = direct
        ? await direct.all<RawStampedRow>(sql, ...params)
        : await this.db.$queryRawUnsafe<RawStampedRow[]>(sql, ...params)
      for (const row of rows)
        found.push({
          entry: fromRawRow(row),
          version: versionOf(row.version),
          contentLength: Number(row.contentLength),
        })
    }
    return found
  }

  async decayCandidates(agentId: string): Promise<DecayCandidate[]> {
    const knowledge = await this.db.knowledge.findMany({
      where: { agentId },
      select: { id: true, confidence: true, lastUsedAt: true, lastDecayAt: true, createdAt: true },
    })
    return knowledge.map((item) => ({ ...item, id: String(item.id) }))
  }

  applyRun(
    agentId: string,
    changes: OptimizerRunChanges,
    alongside: (repositories: Repositories) => Promise<void>,
  ): Promise<SnapshotEvent> {
    return this.db.$transaction(async (tx) => {
      // Drops and promotions as one statement per chunk of ids; compressions carry their own text.
      for (const chunk of chunks(changes.drops.map(Number))) {
        await tx.memoryEntry.deleteMany({ where: { agentId, id: { in: chunk } } })
      }
      for (const chunk of chunks(changes.promotions.map(Number))) {
        await tx.memoryEntry.updateMany({
          where: { agentId, id: { in: chunk } },
          data: { type: 'long_term', relevance: 1 },
        })
      }
      // Compressions carry their own text: one UPDATE ... FROM (VALUES ...) per chunk of them.
      const updatedAt = sqliteDate(new Date()) // as Prisma's @updatedAt: the wall clock
      for (const chunk of chunks(changes.compressions, COMPRESS_CHUNK)) {
        await tx.$executeRawUnsafe(
          // The casts type the VALUES for Postgres (SQLite ignores them: the values are integers).
          `UPDATE "MemoryEntry" SET "content" = v.column2, "tokenCount" = v.column3, "isCompressed" = TRUE, "updatedAt" = ?
             FROM (VALUES ${chunk.map(() => '(CAST(? AS INTEGER), ?, CAST(? AS INTEGER))').join(', ')}) AS v
            WHERE "MemoryEntry"."id" = v.column1 AND "MemoryEntry"."agentId" = ?`,
          updatedAt,
          ...chunk.flatMap((c) => [Number(c.entryId), c.content, c.tokenCount]),
          agentId,
        )
      }
      for (const item of changes.decayed) {
        await tx.knowledge.updateMany({
          where: { id: Number(item.id), agentId },
          data: { confidence: item.confidence, lastDecayAt: changes.decayedAt },
        })
      }
      if (changes.pruned.length > 0) {
        await tx.knowledge.deleteMany({ where: { agentId, id: { in: changes.pruned.map(Number) } } })
      }
      await alongside(prismaRepositories(tx, this.dialect))
      const { snapshot } = changes
      const row = await tx.optimizationSnapshot.create({
        data: {
          agentId,
          ...snapshot,
          explanation: snapshot.explanation ? JSON.stringify(snapshot.explanation) : null,
        },
      })
      const older = await tx.optimizationSnapshot.findMany({
        where: { agentId },
        orderBy: [{ timestamp: 'desc' }, { id: 'desc' }],
        skip: changes.snapshotHistoryLimit,
        select: { id: true },
      })
      if (older.length > 0) {
        await tx.optimizationSnapshot.deleteMany({ where: { id: { in: older.map((r) => r.id) } } })
      }
      return toSnapshotEvent(row)
    })
  }

  async lastRunAt(agentId: string): Promise<Date | null> {
    const last = await this.db.optimizationSnapshot.findFirst({
      where: { agentId },
      orderBy: [{ timestamp: 'desc' }, { id: 'desc' }],
      select: { timestamp: true },
    })
    return last?.timestamp ?? null
  }

  async snapshots(agentId: string | null, last: number): Promise<SnapshotEvent[]> {
    const rows = await this.db.optimizationSnapshot.findMany({
      where: agentId ? { agentId } : {},
      orderBy: [{ timestamp: 'desc' }, { id: 'desc' }],
      take: last,
    })
    return rows.reverse().map(toSnapshotEvent)
  }
}

const ENTRY_COLUMNS = `"id", "type", "role", "content", "tokenCount", "relevance", "isCompressed", "timestamp", "sessionId"`

function fromRawRow(row: RawEntryRow): MemoryEntry {
  return {
    id: String(row.id),
    type: row.type as MemoryEntry['type'],
    role: row.role as MemoryEntry['role'],
    content: row.content,
    tokenCount: Number(row.tokenCount),
    relevance: Number(row.relevance),
    isCompressed: row.isCompressed === 1 || row.isCompressed === true,
    timestamp: new Date(row.timestamp),
    sessionId: row.sessionId,
  }
}

/** A row's updatedAt as a version string: compared, never parsed, so as stored on SQLite. */
const versionOf = (value: string | number | Date) =>
  value instanceof Date ? String(value.getTime()) : String(value)

function toStamp(row: RawStampRow): EntryStamp {
  return {
    id: String(row.id),
    version: versionOf(row.version),
    contentLength: Number(row.contentLength),
    type: row.type as MemoryEntry['type'],
    relevance: Number(row.relevance),
    isCompressed: row.isCompressed === 1 || row.isCompressed === true,
    tokenCount: Number(row.tokenCount),
  }
}

function chunks<T>(items: readonly T[], size = CHUNK): T[][] {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

function toSnapshotEvent(row: OptimizationSnapshotRow): SnapshotEvent {
  const { id, agentId, explanation, ...rest } = row
  const snapshot: OptimizationSnapshot = { ...rest, explanation: parseExplanation(explanation) }
  return { id: String(id), agentId, snapshot }
}

/** The stored explanation; a row written before explanations (or unreadable) has none. */
function parseExplanation(json: string | null): OptimizerExplanation | null {
  if (!json) return null
  try {
    return JSON.parse(json) as OptimizerExplanation
  } catch {
    return null
  }
}

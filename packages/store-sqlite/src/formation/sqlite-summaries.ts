import { NotFoundError, type SummaryStrategy } from '@engram/core'
import type {
  NewSummary,
  RecordedTurn,
  StoredSummary,
  StoredSummaryTrigger,
  SummaryCursor,
  SummaryListQuery,
  SummaryRepository,
  SummaryWriter,
} from '@engram/engine'
import {
  type Database,
  directSqlite,
  type SyncStatements,
  sqliteDate,
  type Transaction,
} from '../db/client.ts'
import type { SummaryCursor as SummaryCursorRow, Summary as SummaryRow } from '../generated/prisma/client.ts'
import type { SqliteJobQueue } from '../jobs/sqlite-job-queue.ts'
import { parseRowId } from '../mappers.ts'

function toSummary(row: SummaryRow): StoredSummary {
  return {
    id: String(row.id),
    agentId: row.agentId,
    conversationId: row.conversationId,
    content: row.content,
    strategy: row.strategy as SummaryStrategy,
    writer: row.writer as SummaryWriter,
    trigger: row.trigger as StoredSummaryTrigger,
    firstMessageId: row.firstMessageId,
    lastMessageId: row.lastMessageId,
    messageCount: row.messageCount,
    tokenCount: row.tokenCount,
    createdAt: row.createdAt,
  }
}

/** A cursor row as the prepared statements return it: dates as Prisma's strings. */
interface CursorRecord {
  agentId: string
  conversationId: string
  lastTurnAt: string
  summarisedThroughId: string | null
  lastSummaryAt: string | null
  pendingTokens: number | bigint
}

function fromRecord(row: CursorRecord): SummaryCursor {
  return {
    agentId: row.agentId,
    conversationId: row.conversationId,
    lastTurnAt: new Date(row.lastTurnAt),
    summarisedThroughId: row.summarisedThroughId,
    lastSummaryAt: row.lastSummaryAt === null ? null : new Date(row.lastSummaryAt),
    pendingTokens: Number(row.pendingTokens),
  }
}

function toCursor(row: SummaryCursorRow): SummaryCursor {
  return {
    agentId: row.agentId,
    conversationId: row.conversationId,
    lastTurnAt: row.lastTurnAt,
    summarisedThroughId: row.summarisedThroughId,
    lastSummaryAt: row.lastSummaryAt,
    pendingTokens: row.pendingTokens,
  }
}

/**
 * Moves a conversation's cursor to a turn stored at `at` inside a synchronous write (the one that
 * stores the turn's messages, or the cursor's own), and reads the agent's previous conversation
 * first: a switch is a turn whose agent wrote to another conversation last.
 */
export function recordTurnIn(
  sql: SyncStatements,
  agentId: string,
  conversationId: string,
  at: Date,
  tokens: number,
): RecordedTurn {
  const previous = sql.get<CursorRecord>(
    `SELECT * FROM "SummaryCursor" WHERE "agentId" = ? ORDER BY "lastTurnAt" DESC, "conversationId" LIMIT 1`,
    agentId,
  )
  const cursor = sql.get<CursorRecord>(
    `INSERT INTO "SummaryCursor" ("agentId", "conversationId", "lastTurnAt", "pendingTokens") VALUES (?, ?, ?, ?)
     ON CONFLICT ("agentId", "conversationId") DO UPDATE SET "lastTurnAt" = excluded."lastTurnAt",
       "pendingTokens" = "SummaryCursor"."pendingTokens" + excluded."pendingTokens"
     RETURNING *`,
    agentId,
    conversationId,
    sqliteDate(at),
    tokens,
  ) as CursorRecord
  return {
    cursor: fromRecord(cursor),
    previous: previous && previous.conversationId !== conversationId ? fromRecord(previous) : null,
  }
}

/** recordTurnIn through Prisma, in an interactive transaction (Postgres, or SQLite without a direct connection). */
export async function recordTurnInTransaction(
  tx: Transaction,
  agentId: string,
  conversationId: string,
  at: Date,
  tokens: number,
): Promise<RecordedTurn> {
  const previous = await tx.summaryCursor.findFirst({
    where: { agentId },
    orderBy: [{ lastTurnAt: 'desc' }, { conversationId: 'asc' }],
  })
  const cursor = await tx.summaryCursor.upsert({
    where: { agentId_conversationId: { agentId, conversationId } },
    create: { agentId, conversationId, lastTurnAt: at, pendingTokens: tokens },
    update: { lastTurnAt: at, pendingTokens: { increment: tokens } },
  })
  return {
    cursor: toCursor(cursor),
    previous: previous && previous.conversationId !== conversationId ? toCursor(previous) : null,
  }
}

/**
 * Automatic summaries and their cursors in SQLite. A summary row hangs on its session (deleted
 * with the conversation by the foreign key) and every row on its agent.
 */
export function sqliteSummaries(db: Database, jobs: SqliteJobQueue): SummaryRepository {
  return {
    insert: (summary: NewSummary) =>
      db.$transaction(async (tx) => {
        const session = await tx.session.findUnique({
          where: {
            agentId_conversationId: { agentId: summary.agentId, conversationId: summary.conversationId },
          },
          select: { id: true },
        })
        if (!session) throw new NotFoundError('Session', summary.conversationId)
        const row = await tx.summary.create({ data: { ...summary, sessionId: session.id } })
        const cursor = {
          summarisedThroughId: summary.lastMessageId,
          lastSummaryAt: summary.createdAt,
          pendingTokens: 0,
        }
        await tx.summaryCursor.upsert({
          where: {
            agentId_conversationId: { agentId: summary.agentId, conversationId: summary.conversationId },
          },
          create: {
            agentId: summary.agentId,
            conversationId: summary.conversationId,
            lastTurnAt: summary.createdAt,
            ...cursor,
          },
          update: cursor,
        })
        return toSummary(row)
      }),

    list: async (agentId: string, query: SummaryListQuery) =>
      (
        await db.summary.findMany({
          where: {
            agentId,
            ...(query.conversationId != null ? { conversationId: query.conversationId } : {}),
            ...(query.since != null ? { createdAt: { gte: query.since } } : {}),
          },
          orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
          take: query.limit,
        })
      ).map(toSummary),

    find: async (agentId, id) => {
      const rowId = parseRowId(id)
      if (rowId === null) return null
      const row = await db.summary.findFirst({ where: { id: rowId, agentId } })
      return row ? toSummary(row) : null
    },

    // A turn the messages' transaction did not record (a store or caller without the turn
    // recorder; `summarize` on a conversation without a cursor): its own group-committed write on
    // the cached prepared statements when the connection allows (Prisma's upsert and an
    // interactive transaction cost ~2 ms a turn).
    recordTurn: async (agentId, conversationId, at, tokens, jobsFor) => {
      const direct = directSqlite(db)
      if (direct)
        return direct.write((sql) => {
          const recorded = recordTurnIn(sql, agentId, conversationId, at, tokens)
          if (jobsFor) jobs.enqueueIn(sql, jobsFor(recorded))
          return recorded
        })
      return db.$transaction(async (tx) => {
        const recorded = await recordTurnInTransaction(tx, agentId, conversationId, at, tokens)
        if (jobsFor) await jobs.enqueue(jobsFor(recorded), tx)
        return recorded
      })
    },

    cursor: async (agentId, conversationId) => {
      const row = await db.summaryCursor.findUnique({
        where: { agentId_conversationId: { agentId, conversationId } },
      })
      return row ? toCursor(row) : null
    },

    // The removed rows' ids and texts are read in the deleting transaction: their vectors (gone by
    // trigger), cache entries and embed jobs are the engine's to remove next.
    deleteStoredBefore: (agentId, cutoff) =>
      db.$transaction(async (tx) => {
        const where = { agentId, createdAt: { lt: cutoff } }
        const removed = await tx.summary.findMany({ where, select: { id: true, content: true } })
        await tx.summary.deleteMany({ where })
        return removed.map((row) => ({ id: String(row.id), content: row.content }))
      }),

    oldestStoredAt: async (agentId) =>
      (await db.summary.aggregate({ where: { agentId }, _min: { createdAt: true } }))._min.createdAt ?? null,

    conversationsWithPendingTurns: async (agentId) => {
      const rows = await db.summaryCursor.findMany({ where: { agentId }, orderBy: { conversationId: 'asc' } })
      return rows
        .filter(
          (c) =>
            c.pendingTokens > 0 ||
            c.lastSummaryAt === null ||
            c.lastSummaryAt.getTime() < c.lastTurnAt.getTime(),
        )
        .map((c) => c.conversationId)
    },

    agentsWithSummaries: async () =>
      (
        await db.summary.findMany({
          distinct: ['agentId'],
          select: { agentId: true },
          orderBy: { agentId: 'asc' },
        })
      ).map((row) => row.agentId),

    deleteConversation: (agentId, conversationId) =>
      db.$transaction(async (tx) => {
        await tx.summaryCursor.deleteMany({ where: { agentId, conversationId } })
        const removed = await tx.summary.findMany({
          where: { agentId, conversationId },
          select: { id: true, content: true },
        })
        await tx.summary.deleteMany({ where: { agentId, conversationId } })
        return removed.map((row) => ({ id: String(row.id), content: row.content }))
      }),

    count: (agentId) => db.summary.count({ where: { agentId } }),
  }
}

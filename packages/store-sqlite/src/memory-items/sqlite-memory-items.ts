import { type MemoryCategory, NotFoundError, POOL_STORAGE_PREFIX } from '@engram/core'
import {
  type MemoryItemOrder,
  type MemoryItemQuery,
  type MemoryItemRepository,
  type MemoryItemView,
  parseTags,
  safeJson,
} from '@engram/engine'
import { type Database, directSqlite, readRows, sqliteDate, type Transaction } from '../db/client.ts'
import { type SqlDialect, sqliteDialect } from '../db/dialect.ts'
import { storedDate } from '../db/stored-time.ts'
import type { MemoryItem as MemoryItemRow, Prisma } from '../generated/prisma/client.ts'
import { parseMetadata, parseRowId } from '../mappers.ts'

export function toMemoryItem(row: MemoryItemRow): MemoryItemView {
  return {
    id: String(row.id),
    agentId: row.agentId,
    userId: row.userId,
    content: row.content,
    category: row.category as MemoryCategory,
    tags: parseTags(row.tags),
    importance: row.importance,
    confidence: row.confidence,
    pinned: row.pinned,
    sourceConversationId: row.sourceConversationId,
    sourceMessageId: row.sourceMessageId,
    accessCount: row.accessCount,
    lastAccessedAt: row.lastAccessedAt,
    validFrom: row.validFrom,
    validUntil: row.validUntil,
    supersededById: row.supersededById == null ? null : String(row.supersededById),
    metadata: parseMetadata(row.metadata),
    tokenCount: row.tokenCount,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  }
}

/** A MemoryItem row as a prepared statement returns it: booleans as 0/1, dates as the stored text. */
export type RawMemoryItemRow = Omit<
  MemoryItemRow,
  | 'id'
  | 'pinned'
  | 'lastAccessedAt'
  | 'validFrom'
  | 'validUntil'
  | 'supersededById'
  | 'createdAt'
  | 'updatedAt'
> & {
  id: number | bigint
  pinned: number | bigint
  lastAccessedAt: string | null
  validFrom: string
  validUntil: string | null
  supersededById: number | bigint | null
  createdAt: string
  updatedAt: string
}

/**
 * A raw row as toMemoryItem maps Prisma's, field by field: a spread copy of the driver's row
 * object (`{ ...row }`) was most of the mapping's cost for a search's ~100 candidate rows.
 */
export function fromRawRow(row: RawMemoryItemRow): MemoryItemView {
  const date = (value: string | null) => (value == null ? null : storedDate(value))
  return {
    id: String(Number(row.id)),
    agentId: row.agentId,
    userId: row.userId,
    content: row.content,
    category: row.category as MemoryCategory,
    tags: parseTags(row.tags),
    importance: row.importance,
    confidence: row.confidence,
    pinned: Number(row.pinned) !== 0,
    sourceConversationId: row.sourceConversationId,
    sourceMessageId: row.sourceMessageId,
    accessCount: row.accessCount,
    lastAccessedAt: date(row.lastAccessedAt),
    validFrom: storedDate(row.validFrom),
    validUntil: date(row.validUntil),
    supersededById: row.supersededById == null ? null : String(Number(row.supersededById)),
    metadata: parseMetadata(row.metadata),
    tokenCount: row.tokenCount,
    createdAt: storedDate(row.createdAt),
    updatedAt: storedDate(row.updatedAt),
  }
}

/** Valid at `at`: begun, and not yet ended. */
function validAt(at: Date): Prisma.MemoryItemWhereInput[] {
  return [{ validFrom: { lte: at } }, { OR: [{ validUntil: null }, { validUntil: { gt: at } }] }]
}

/**
 * A memory query as Prisma's where (every agent's items for a null agent). Exported because the
 * search and context services, still in apps/api, narrow their own Prisma reads with it.
 */
export function memoryItemWhere(
  agentId: string | null,
  query: MemoryItemQuery,
  dialect: SqlDialect = sqliteDialect,
): Prisma.MemoryItemWhereInput {
  return {
    // Every agent's: pools' storage agents (issue 17) hold shared memories, no agent's own.
    ...(agentId ? { agentId } : { NOT: { agentId: { startsWith: POOL_STORAGE_PREFIX } } }),
    ...(query.userId ? { userId: query.userId } : {}),
    ...(query.categories?.length ? { category: { in: [...query.categories] } } : {}),
    ...(query.minImportance != null ? { importance: { gte: query.minImportance } } : {}),
    ...(query.pinned != null ? { pinned: query.pinned } : {}),
    ...(query.search ? { content: dialect.ignoringCase({ contains: query.search }) } : {}),
    createdAt: {
      ...(query.createdAfter ? { gte: query.createdAfter } : {}),
      ...(query.createdBefore ? { lte: query.createdBefore } : {}),
    },
    AND: [
      // Tags are a JSON array: a tag is present when its quoted form is (in any ASCII case, as LIKE has it).
      ...(query.tags ?? []).map((tag) => ({ tags: dialect.ignoringCase({ contains: JSON.stringify(tag) }) })),
      ...(query.validAt ? validAt(query.validAt) : []),
    ],
  }
}

function orderBy(order: MemoryItemOrder): Prisma.MemoryItemOrderByWithRelationInput[] {
  return [
    order === 'lastAccessedAt' ? { lastAccessedAt: { sort: 'desc', nulls: 'last' } } : { [order]: 'desc' },
    { id: 'desc' },
  ]
}

/** The memory-item repository on SQLite: Prisma, and FTS5's bm25() for the words a write shares. */
export function sqliteMemoryItems(db: Database, dialect: SqlDialect = sqliteDialect): MemoryItemRepository {
  return memoryItemsIn(
    db,
    db,
    (fn) => db.$transaction((tx) => fn(memoryItemsIn(tx, db, null, dialect))),
    dialect,
  )
}

/**
 * `base` is the client the connection was opened with: on SQLite verification's reads run on its
 * prepared statements (readRows), which inside a transaction see its writes, as the connection is
 * one. A pooled client (Postgres) has no such connection: its reads and writes go through `db`,
 * the transaction's own connection, or they would neither see its writes nor roll back with it.
 */
function memoryItemsIn(
  db: Database | Transaction,
  base: Database,
  transaction: MemoryItemRepository['transaction'] | null,
  dialect: SqlDialect,
): MemoryItemRepository {
  const direct = directSqlite(base) !== null
  const reader = direct ? base : (db as Database)
  const rowIds = (ids: readonly string[]) => ids.flatMap((id) => parseRowId(id) ?? [])
  // One statement per write, scoped by agent: an item of another agent is not found.
  const owned = (agentId: string, id: string) => {
    const rowId = parseRowId(id)
    if (rowId == null) throw new NotFoundError('MemoryItem', id)
    return { id: rowId, agentId }
  }
  const orNotFound = async <T>(id: string, write: Promise<T>): Promise<T> => {
    try {
      return await write
    } catch (error) {
      if ((error as { code?: string }).code === 'P2025') throw new NotFoundError('MemoryItem', id)
      throw error
    }
  }
  const repository: MemoryItemRepository = {
    // Inside a transaction already: the work joins it.
    transaction: transaction ?? ((fn) => fn(repository)),
    settings: async (agentId) => {
      // Read on every search and memoryContext: a cached statement, not a Prisma query compiled each time.
      const [agent] = await readRows<{ memorySettings: string }[]>(
        reader,
        `SELECT "memorySettings" AS "memorySettings" FROM "Agent" WHERE "id" = ?`,
        agentId,
      )
      return safeJson(agent?.memorySettings ?? '{}')
    },
    saveSettings: async (agentId, stored) => {
      await db.agent.update({ where: { id: agentId }, data: { memorySettings: JSON.stringify(stored) } })
    },
    find: async (agentId, id) => {
      const rowId = parseRowId(id)
      const row = rowId == null ? null : await db.memoryItem.findFirst({ where: { id: rowId, agentId } })
      return row ? toMemoryItem(row) : null
    },
    recordAccess: async (agentId, ids, at) => {
      const numeric = rowIds(ids)
      const connection = directSqlite(base)
      if (connection) {
        // Search's access flush (once a second under load, every hit since the last): one
        // statement by primary key, the agent checked on the rows. Through Prisma's updateMany and
        // findMany SQLite's planner, without statistics for rows written since the connection
        // opened, walked the agent's whole index twice: ~160 ms for 300 ids at 100K memories, on
        // the event loop every search shares (issue 18, memsearch18). Outside a transaction it
        // joins the connection's group commit; inside one (transaction === null) it is part of it.
        const sql = `UPDATE "MemoryItem" SET "accessCount" = "accessCount" + 1, "lastAccessedAt" = ?
            WHERE "id" IN (${dialect.integersOf('?')}) AND ${dialect.checkedOnRows('"agentId"')} = ?
            RETURNING *`
        const params = [sqliteDate(at), JSON.stringify(numeric), agentId] as const
        const rows =
          transaction === null
            ? await readRows<RawMemoryItemRow[]>(base, sql, ...params)
            : await connection.write((statements) => statements.all<RawMemoryItemRow>(sql, ...params))
        const byId = new Map(rows.map((row) => [String(row.id), fromRawRow(row)]))
        return ids.flatMap((id) => byId.get(id) ?? [])
      }
      await db.memoryItem.updateMany({
        where: { agentId, id: { in: numeric } },
        data: { accessCount: { increment: 1 }, lastAccessedAt: at },
      })
      const rows = await db.memoryItem.findMany({ where: { agentId, id: { in: numeric } } })
      const byId = new Map(rows.map((r) => [String(r.id), toMemoryItem(r)]))
      return ids.flatMap((id) => byId.get(id) ?? [])
    },
    count: (agentId, query) => db.memoryItem.count({ where: memoryItemWhere(agentId, query, dialect) }),
    page: async (agentId, query, order, offset, limit) =>
      (
        await db.memoryItem.findMany({
          where: memoryItemWhere(agentId, query, dialect),
          orderBy: orderBy(order),
          skip: offset,
          take: limit,
        })
      ).map(toMemoryItem),
    figures: async (agentId, at, embeddingModel) => {
      const current = memoryItemWhere(agentId, { validAt: at }, dialect)
      const [byCategory, total, valid, pinned, storage] = await Promise.all([
        db.memoryItem.groupBy({ by: ['category'], where: current, _count: { _all: true } }),
        db.memoryItem.count({ where: { agentId } }),
        db.memoryItem.count({ where: current }),
        db.memoryItem.count({ where: { ...current, pinned: true } }),
        db.$queryRawUnsafe<{ contentBytes: number | null; vectorBytes: number | null }[]>(
          `SELECT (SELECT SUM(${dialect.byteLength('"content"')} + LENGTH("tags") + LENGTH("metadata")) FROM "MemoryItem" WHERE "agentId" = ?) AS "contentBytes",
                  (SELECT SUM(LENGTH("vector")) FROM "Embedding" WHERE "agentId" = ? AND "kind" = 'memory' AND "model" = ?) AS "vectorBytes"`,
          agentId,
          agentId,
          embeddingModel,
        ),
      ])
      return {
        total,
        current: valid,
        pinned,
        byCategory: new Map(byCategory.map((g) => [g.category, g._count._all])),
        contentBytes: Number(storage[0]?.contentBytes ?? 0),
        vectorBytes: Number(storage[0]?.vectorBytes ?? 0),
      }
    },
    sharingWords: async (agentId, text, limit) => {
      const statement = dialect.memoriesSharingWords(agentId, text, limit)
      if (!statement) return []
      // Every formed memory runs this and currentAmong: prepared statements, not Prisma's per-query
      // compilation (the create pipeline's largest cost in the formation bench's CPU profile).
      const rows = await readRows<{ id: number | bigint }[]>(reader, statement.sql, ...statement.params)
      return rows.map((row) => String(Number(row.id)))
    },
    currentAmong: async (agentId, userId, at, ids) => {
      const numeric = rowIds(ids)
      if (numeric.length === 0) return []
      const when = sqliteDate(at)
      // One statement for any number of ids (json_each), so it is prepared once; by primary key,
      // the agent checked on the rows (checkedOnRows, as recordAccess).
      const rows = await readRows<
        { id: number | bigint; content: string; category: string; createdAt: string | Date }[]
      >(
        reader,
        `SELECT "id" AS id, "content" AS content, "category" AS category, "createdAt" AS "createdAt"
           FROM "MemoryItem"
          WHERE "id" IN (${dialect.integersOf('?')}) AND ${dialect.checkedOnRows('"agentId"')} = ?
            AND "userId" IS NOT DISTINCT FROM ?
            AND "validFrom" <= ? AND ("validUntil" IS NULL OR "validUntil" > ?)
          ORDER BY "id"`,
        JSON.stringify(numeric),
        agentId,
        userId,
        when,
        when,
      )
      return rows.map((r) => ({
        id: String(Number(r.id)),
        content: r.content,
        category: r.category as MemoryCategory,
        createdAt: new Date(r.createdAt),
      }))
    },
    create: async (agentId, item) => {
      // Inside a transaction (every verified write), the row goes in on a prepared statement: the
      // transaction holds the one connection, so the statement is part of it. Outside one, and on a
      // pooled client (whose create must also carry its search tokens), Prisma's create.
      if (transaction === null && direct) {
        const [row] = await readRows<RawMemoryItemRow[]>(
          base,
          `INSERT INTO "MemoryItem" ("agentId", "userId", "content", "category", "tags", "importance",
             "confidence", "pinned", "sourceConversationId", "sourceMessageId", "validFrom", "validUntil",
             "metadata", "contentHash", "tokenCount", "createdAt", "updatedAt")
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
          agentId,
          item.userId,
          item.content,
          item.category,
          JSON.stringify(item.tags),
          item.importance,
          item.confidence,
          item.pinned ? 1 : 0,
          item.sourceConversationId,
          item.sourceMessageId,
          sqliteDate(item.validFrom),
          item.validUntil ? sqliteDate(item.validUntil) : null,
          JSON.stringify(item.metadata),
          item.contentHash,
          item.tokenCount,
          sqliteDate(item.createdAt),
          sqliteDate(item.createdAt),
        )
        if (!row) throw new Error('the memory row was not returned by its insert')
        return fromRawRow(row)
      }
      return toMemoryItem(
        await db.memoryItem.create({
          data: {
            agentId,
            userId: item.userId,
            content: item.content,
            category: item.category,
            tags: JSON.stringify(item.tags),
            importance: item.importance,
            confidence: item.confidence,
            pinned: item.pinned,
            sourceConversationId: item.sourceConversationId,
            sourceMessageId: item.sourceMessageId,
            validFrom: item.validFrom,
            validUntil: item.validUntil,
            metadata: JSON.stringify(item.metadata),
            contentHash: item.contentHash,
            tokenCount: item.tokenCount,
            createdAt: item.createdAt,
            updatedAt: item.createdAt,
          },
        }),
      )
    },
    supersede: async (agentId, id, byId, at) => {
      const row = await orNotFound(
        id,
        db.memoryItem.update({
          where: owned(agentId, id),
          data: { validUntil: at, supersededById: parseRowId(byId), updatedAt: at },
        }),
      )
      return toMemoryItem(row)
    },
    countCurrent: async (agentId, at) => {
      // Every verified write asks it (maxEntriesPerAgent): a prepared statement.
      const when = sqliteDate(at)
      const [row] = await readRows<{ n: number | bigint }[]>(
        reader,
        `SELECT COUNT(*) AS n FROM "MemoryItem"
          WHERE "agentId" = ? AND "validFrom" <= ? AND ("validUntil" IS NULL OR "validUntil" > ?)`,
        agentId,
        when,
        when,
      )
      return Number(row?.n ?? 0)
    },
    expireLeastValued: async (agentId, at, keepId, limit) => {
      const victims = await db.memoryItem.findMany({
        where: {
          agentId,
          validFrom: { lte: at },
          OR: [{ validUntil: null }, { validUntil: { gt: at } }],
          pinned: false,
          id: { not: parseRowId(keepId) ?? -1 },
        },
        orderBy: [
          { importance: 'asc' },
          { lastAccessedAt: { sort: 'asc', nulls: 'first' } },
          { createdAt: 'asc' },
        ],
        take: limit,
        select: { id: true },
      })
      await db.memoryItem.updateMany({
        where: { id: { in: victims.map((v) => v.id) } },
        data: { validUntil: at, updatedAt: at },
      })
      const rows = await db.memoryItem.findMany({ where: { id: { in: victims.map((v) => v.id) } } })
      return rows.map(toMemoryItem)
    },
    update: async (agentId, id, changes) => {
      const row = await orNotFound(
        id,
        db.memoryItem.update({
          where: owned(agentId, id),
          data: {
            content: changes.content,
            category: changes.category,
            tags: JSON.stringify(changes.tags),
            importance: changes.importance,
            confidence: changes.confidence,
            pinned: changes.pinned,
            userId: changes.userId,
            validFrom: changes.validFrom,
            validUntil: changes.validUntil,
            metadata: JSON.stringify(changes.metadata),
            contentHash: changes.contentHash,
            tokenCount: changes.tokenCount,
            updatedAt: changes.updatedAt,
          },
        }),
      )
      return toMemoryItem(row)
    },
    delete: async (agentId, id) => {
      await orNotFound(id, db.memoryItem.delete({ where: owned(agentId, id) }))
    },
    discardVectors: async (_agentId, id) => {
      const rowId = parseRowId(id)
      if (rowId != null) await db.embedding.deleteMany({ where: { kind: 'memory', ownerId: rowId } })
    },
  }
  return repository
}

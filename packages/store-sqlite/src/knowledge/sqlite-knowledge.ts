import { type KnowledgeCategory, NotFoundError } from '@engram/core'
import type { KnowledgeOrder, KnowledgeQuery, KnowledgeRecord, KnowledgeRepository } from '@engram/engine'
import type { Database, Transaction } from '../db/client.ts'
import { type SqlDialect, sqliteDialect } from '../db/dialect.ts'
import type { Knowledge as KnowledgeRow, Prisma } from '../generated/prisma/client.ts'
import { parseRowId } from '../mappers.ts'

export function toKnowledge(row: KnowledgeRow): KnowledgeRecord {
  return {
    id: String(row.id),
    agentId: row.agentId,
    category: row.category as KnowledgeCategory,
    key: row.key,
    value: row.value,
    confidence: row.confidence,
    storeCount: row.storeCount,
    useCount: row.useCount,
    lastUsedAt: row.lastUsedAt,
    lastDecayAt: row.lastDecayAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  }
}

/** A knowledge query as Prisma's where (every agent's facts for a null agent). */
export function knowledgeWhere(
  agentId: string | null,
  query: KnowledgeQuery,
  dialect: SqlDialect = sqliteDialect,
): Prisma.KnowledgeWhereInput {
  return {
    ...(agentId ? { agentId } : {}),
    ...(query.category ? { category: query.category } : {}),
    ...(query.minConfidence != null ? { confidence: { gte: query.minConfidence } } : {}),
    ...(query.search
      ? {
          OR: [
            { key: dialect.ignoringCase({ contains: query.search }) },
            { value: dialect.ignoringCase({ contains: query.search }) },
          ],
        }
      : {}),
  }
}

function orderBy(order: KnowledgeOrder): Prisma.KnowledgeOrderByWithRelationInput[] {
  return [
    order === 'lastUsedAt' ? { lastUsedAt: { sort: 'desc', nulls: 'last' } } : { [order]: 'desc' },
    { id: 'asc' },
  ]
}

/** The knowledge repository on SQLite (Prisma; the FTS5 index follows the rows by trigger). */
export function sqliteKnowledge(db: Database, dialect: SqlDialect = sqliteDialect): KnowledgeRepository {
  return knowledgeIn(db, (fn) => db.$transaction((tx) => fn(knowledgeIn(tx, null, dialect))), dialect)
}

function knowledgeIn(
  db: Database | Transaction,
  transaction: KnowledgeRepository['transaction'] | null,
  dialect: SqlDialect,
): KnowledgeRepository {
  const rowIds = (ids: readonly string[]) => ids.flatMap((id) => parseRowId(id) ?? [])
  // One statement per write, scoped by agent: a fact of another agent is not found.
  const owned = (agentId: string, id: string) => {
    const rowId = parseRowId(id)
    if (rowId == null) throw new NotFoundError('Knowledge', id)
    return { id: rowId, agentId }
  }
  const write = async (id: string, work: Promise<KnowledgeRow>): Promise<KnowledgeRecord> => {
    try {
      return toKnowledge(await work)
    } catch (error) {
      if ((error as { code?: string }).code === 'P2025') throw new NotFoundError('Knowledge', id)
      throw error
    }
  }
  const scoped = (agentId: string | null, ids: readonly string[]) => ({
    id: { in: rowIds(ids) },
    ...(agentId ? { agentId } : {}),
  })
  const repository: KnowledgeRepository = {
    // Inside a transaction already: the work joins it.
    transaction: transaction ?? ((fn) => fn(repository)),
    find: async (agentId, id) => {
      const rowId = parseRowId(id)
      const row = rowId == null ? null : await db.knowledge.findFirst({ where: { id: rowId, agentId } })
      return row ? toKnowledge(row) : null
    },
    findByKey: async (agentId, category, key) => {
      const row = await db.knowledge.findUnique({
        where: { agentId_category_key: { agentId, category, key } },
      })
      return row ? toKnowledge(row) : null
    },
    create: async (agentId, fact) => toKnowledge(await db.knowledge.create({ data: { agentId, ...fact } })),
    restore: (agentId, id, value, confidence) =>
      write(
        id,
        db.knowledge.update({
          where: owned(agentId, id),
          data: { value, confidence, storeCount: { increment: 1 } },
        }),
      ),
    recordUse: (agentId, id, confidence, at) =>
      write(
        id,
        db.knowledge.update({
          where: owned(agentId, id),
          data: { confidence, useCount: { increment: 1 }, lastUsedAt: at },
        }),
      ),
    update: (agentId, id, changes) =>
      write(id, db.knowledge.update({ where: owned(agentId, id), data: changes })),
    delete: async (agentId, id) => {
      await write(id, db.knowledge.delete({ where: owned(agentId, id) }))
    },
    existing: async (agentId, ids) =>
      (await db.knowledge.findMany({ where: scoped(agentId, ids), select: { id: true } })).map((f) =>
        String(f.id),
      ),
    deleteMany: async (agentId, ids) =>
      (await db.knowledge.deleteMany({ where: scoped(agentId, ids) })).count,
    confident: async (agentId, minConfidence) =>
      (await db.knowledge.findMany({ where: { agentId, confidence: { gte: minConfidence } } })).map(
        toKnowledge,
      ),
    count: (agentId, query) => db.knowledge.count({ where: knowledgeWhere(agentId, query, dialect) }),
    page: async (agentId, query, order, offset, limit) =>
      (
        await db.knowledge.findMany({
          where: knowledgeWhere(agentId, query, dialect),
          orderBy: orderBy(order),
          skip: offset,
          take: limit,
        })
      ).map(toKnowledge),
  }
  return repository
}

import { bytesToVector, NotFoundError, vectorNorm, vectorToBytes } from '@engram/core'
import type {
  AgentRepository,
  EntryChanges,
  MemoryEntryRepository,
  ParameterRepository,
  Repositories,
} from '@engram/engine'
import type { Database, Transaction } from '../db/client.ts'
import { type SqlDialect, sqliteDialect } from '../db/dialect.ts'
import { parseRowId, toEntry } from '../mappers.ts'
import { agentArchiveIn } from '../transfer/prisma-agent-archive.ts'
import { timeIdWhere } from './time-id-where.ts'

/** The client a repository runs on: the database (each call commits alone) or one transaction. */
export type Executor = Database | Transaction

/**
 * The engine's repositories on Prisma. Every query is scoped by agent, so an id guessed from
 * another tenant finds nothing; ids that are not row ids find nothing rather than throwing.
 */
export function prismaRepositories(db: Executor, dialect: SqlDialect = sqliteDialect): Repositories {
  return {
    agents: agentsIn(db),
    memoryEntries: memoryEntriesIn(db, dialect),
    parameters: parametersIn(db),
    archive: agentArchiveIn(db),
  }
}

export function agentsIn(db: Executor): AgentRepository {
  const view = (row: { id: string; name: string; createdAt: Date }) => ({
    id: row.id,
    name: row.name,
    createdAt: row.createdAt,
  })
  return {
    find: async (id) => {
      const row = await db.agent.findFirst({ where: { id } })
      return row ? view(row) : null
    },
    upsert: async (id, name) =>
      view(
        await db.agent.upsert({
          where: { id },
          create: { id, name: name ?? id },
          update: name ? { name } : {},
        }),
      ),
    delete: async (id) => (await db.agent.deleteMany({ where: { id } })).count > 0,
    list: async () => (await db.agent.findMany({ orderBy: { id: 'asc' } })).map(view),
  }
}

export function parametersIn(db: Executor): ParameterRepository {
  return {
    values: async (agentId, keys) => {
      const rows = await db.adaptiveParameter.findMany({
        where: { agentId, ...(keys ? { key: { in: [...keys] } } : {}) },
      })
      return new Map(rows.map((row) => [row.key, row.value]))
    },
    put: async (agentId, key, value) => {
      await db.adaptiveParameter.upsert({
        where: { agentId_key: { agentId, key } },
        create: { agentId, key, value },
        update: { value },
      })
    },
  }
}

export function memoryEntriesIn(db: Executor, dialect: SqlDialect = sqliteDialect): MemoryEntryRepository {
  const rowIds = (ids: readonly string[]) => ids.flatMap((id) => parseRowId(id) ?? [])
  const requireRow = async (agentId: string, id: string) => {
    const rowId = parseRowId(id)
    const row = rowId == null ? null : await db.memoryEntry.findFirst({ where: { id: rowId, agentId } })
    if (!row) throw new NotFoundError('MemoryEntry', id)
    return row
  }
  return {
    create: async (agentId, entry) => {
      const messageId = entry.messageId == null ? null : parseRowId(entry.messageId)
      const row = await db.memoryEntry.create({
        data: {
          agentId,
          sessionId: entry.sessionId ?? null,
          messageId,
          type: entry.type,
          role: entry.role,
          content: entry.content,
          tokenCount: entry.tokenCount,
          relevance: entry.relevance,
          isCompressed: entry.isCompressed ?? false,
          metadata: JSON.stringify(entry.metadata ?? {}),
          timestamp: entry.timestamp,
        },
      })
      return toEntry(row)
    },
    find: async (agentId, id) => {
      const rowId = parseRowId(id)
      const row = rowId == null ? null : await db.memoryEntry.findFirst({ where: { id: rowId, agentId } })
      return row ? toEntry(row) : null
    },
    list: async (agentId, sessionId) =>
      (
        await db.memoryEntry.findMany({
          where: { agentId, ...(sessionId ? { sessionId } : {}) },
          orderBy: [{ timestamp: 'asc' }, { id: 'asc' }],
        })
      ).map(toEntry),
    findMany: async (agentId, ids) =>
      (await db.memoryEntry.findMany({ where: { agentId, id: { in: rowIds(ids) } } })).map(toEntry),
    page: async (agentId, filter, query) =>
      (
        await db.memoryEntry.findMany({
          where: {
            agentId,
            ...(filter.sessionId !== undefined ? { sessionId: filter.sessionId } : {}),
            ...(filter.type !== undefined ? { type: filter.type } : {}),
            ...(filter.isCompressed !== undefined ? { isCompressed: filter.isCompressed } : {}),
            ...(filter.minRelevance !== undefined ? { relevance: { gte: filter.minRelevance } } : {}),
            ...(filter.contentContains !== undefined
              ? { content: dialect.ignoringCase({ contains: filter.contentContains }) }
              : {}),
            ...timeIdWhere(query.range),
          },
          orderBy: [{ timestamp: query.direction }, { id: query.direction }],
          take: query.take,
        })
      ).map(toEntry),
    update: async (agentId, id, changes: EntryChanges) => {
      const row = await requireRow(agentId, id)
      return toEntry(await db.memoryEntry.update({ where: { id: row.id }, data: changes }))
    },
    delete: async (agentId, id) => {
      const row = await requireRow(agentId, id)
      await db.memoryEntry.delete({ where: { id: row.id } })
    },
    vectors: async (agentId) =>
      (await db.memoryVector.findMany({ where: { agentId }, select: { entryId: true, vector: true } })).map(
        (row) => ({ entryId: String(row.entryId), vector: bytesToVector(row.vector) }),
      ),
    upsertVector: async (agentId, entryId, vector) => {
      const row = await requireRow(agentId, entryId)
      const data = {
        agentId,
        dimensions: vector.length,
        vector: new Uint8Array(vectorToBytes(vector)),
        norm: vectorNorm(vector),
      }
      await db.memoryVector.upsert({
        where: { entryId: row.id },
        create: { entryId: row.id, ...data },
        update: data,
      })
    },
    vectorDimensions: async (agentId, exceptEntryId) => {
      const except = parseRowId(exceptEntryId)
      const other = await db.memoryVector.findFirst({
        where: { agentId, ...(except == null ? {} : { entryId: { not: except } }) },
        select: { dimensions: true },
      })
      return other?.dimensions ?? null
    },
  }
}

import { CONTEXT_SUMMARY_PREFIX, type MemoryCategory } from '@engram/core'
import type { ContextMemoryOrder, ContextMemoryQuery, ContextSources, ContextTurn } from '@engram/engine'
import type { Database } from '../db/client.ts'
import { type SqlDialect, sqliteDialect } from '../db/dialect.ts'

/** Each section's order as Prisma's orderBy. */
const MEMORY_ORDERS = {
  oldest: [{ createdAt: 'asc' }],
  profile: [{ importance: 'desc' }, { confidence: 'desc' }, { updatedAt: 'desc' }, { id: 'asc' }],
  recent: [{ updatedAt: 'desc' }, { importance: 'desc' }],
  important: [{ importance: 'desc' }, { updatedAt: 'desc' }],
} as const satisfies Record<ContextMemoryOrder, object[]>

/** memoryContext's reads on SQLite: memory items per section, summaries and a conversation's turns. */
export class SqliteContextSources implements ContextSources {
  constructor(
    private readonly db: Database,
    private readonly dialect: SqlDialect = sqliteDialect,
  ) {}

  async memories(agentId: string, query: ContextMemoryQuery) {
    const { asOf } = query
    const rows = await this.db.memoryItem.findMany({
      where: {
        agentId,
        ...(query.userId ? { userId: query.userId } : {}),
        ...(query.categories ? { category: { in: [...query.categories] } } : {}),
        pinned: query.pinned,
        // Valid at asOf: begun, and not ended (superseded or expired).
        AND: [{ validFrom: { lte: asOf } }, { OR: [{ validUntil: null }, { validUntil: { gt: asOf } }] }],
      },
      orderBy: [...MEMORY_ORDERS[query.order]],
      skip: query.skip ?? 0,
      take: query.limit,
      select: { id: true, userId: true, content: true, category: true },
    })
    return rows.map((row) => ({ ...row, id: String(row.id), category: row.category as MemoryCategory }))
  }

  async summaries(agentId: string, options: { since?: Date; limit: number }): Promise<ContextTurn[]> {
    const rows = await this.db.message.findMany({
      where: {
        agentId,
        content: this.dialect.ignoringCase({ startsWith: CONTEXT_SUMMARY_PREFIX }),
        ...(options.since ? { timestamp: { gte: options.since } } : {}),
      },
      orderBy: [{ timestamp: 'desc' }, { id: 'desc' }],
      take: options.limit,
      select: { id: true, role: true, content: true },
    })
    return rows.map((row) => ({ ...row, id: String(row.id) }))
  }

  async recentTurns(agentId: string, conversationId: string, limit: number): Promise<ContextTurn[] | null> {
    const session = await this.db.session.findUnique({
      where: { agentId_conversationId: { agentId, conversationId } },
      select: { id: true },
    })
    if (!session) return null
    const rows = await this.db.message.findMany({
      where: { sessionId: session.id, isCompressed: false },
      orderBy: [{ timestamp: 'desc' }, { id: 'desc' }],
      take: limit,
      select: { id: true, role: true, content: true },
    })
    return rows.map((row) => ({ ...row, id: String(row.id) }))
  }
}

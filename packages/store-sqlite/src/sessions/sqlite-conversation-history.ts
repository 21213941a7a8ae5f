import type { ConversationHistory } from '@engram/engine'
import type { Database } from '../db/client.ts'
import { toMessage, toSession } from '../mappers.ts'
import { timeIdWhere } from '../repositories/time-id-where.ts'

/** Paged reads of sessions and messages on Prisma (the lists of the doors). */
export class SqliteConversationHistory implements ConversationHistory {
  constructor(private readonly db: Database) {}

  countSessions(agentId: string | null) {
    return this.db.session.count({ where: agentId === null ? {} : { agentId } })
  }

  async sessions(agentId: string | null, page: { offset: number; limit: number }) {
    const rows = await this.db.session.findMany({
      where: agentId === null ? {} : { agentId },
      orderBy: [{ updatedAt: 'desc' }, { id: 'asc' }],
      skip: page.offset,
      take: page.limit,
    })
    return rows.map(toSession)
  }

  async messages(
    sessionId: string,
    includeCompressed: boolean,
    query: Parameters<ConversationHistory['messages']>[2],
  ) {
    const rows = await this.db.message.findMany({
      where: {
        sessionId,
        ...(includeCompressed ? {} : { isCompressed: false }),
        ...timeIdWhere(query.range),
      },
      orderBy: [{ timestamp: query.direction }, { id: query.direction }],
      take: query.take,
    })
    return rows.map(toMessage)
  }

  async uncompressedMessages(sessionId: string) {
    const rows = await this.db.message.findMany({
      where: { sessionId, isCompressed: false },
      orderBy: [{ timestamp: 'asc' }, { id: 'asc' }],
    })
    return rows.map(toMessage)
  }
}

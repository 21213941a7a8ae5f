import type { InMemorySessionRepository, Session, StoredMessage } from '@engram/core'
import { inTimeIdRange, sortByTimeId, type TimeIdPageQuery } from '../paging/cursor.ts'
import type { ConversationHistory } from '../ports/conversation-history.ts'

/** The read side over core's in-memory session repository (test-only). */
export class InMemoryConversationHistory implements ConversationHistory {
  constructor(private readonly store: InMemorySessionRepository) {}

  private scoped(agentId: string | null): Session[] {
    return [...this.store.sessions.values()].filter((s) => agentId === null || s.scope === agentId)
  }

  async countSessions(agentId: string | null) {
    return this.scoped(agentId).length
  }

  async sessions(agentId: string | null, page: { offset: number; limit: number }) {
    return this.scoped(agentId)
      .sort((a, b) => b.updatedAt.getTime() - a.updatedAt.getTime() || a.id.localeCompare(b.id))
      .slice(page.offset, page.offset + page.limit)
      .map((s) => ({ ...s }))
  }

  async messages(sessionId: string, includeCompressed: boolean, query: TimeIdPageQuery) {
    const rows = this.store.messages
      .filter((m) => m.sessionId === sessionId && (includeCompressed || !m.isCompressed))
      .map((message) => ({ message, timestamp: message.timestamp, id: Number(message.id) }))
      .filter((row) => inTimeIdRange(row, query.range))
    return sortByTimeId(rows, query.direction)
      .slice(0, query.take)
      .map((row) => ({ ...row.message }))
  }

  async uncompressedMessages(sessionId: string): Promise<StoredMessage[]> {
    const rows = this.store.messages
      .filter((m) => m.sessionId === sessionId && !m.isCompressed)
      .map((message) => ({ message, timestamp: message.timestamp, id: Number(message.id) }))
    return sortByTimeId(rows, 'asc').map((row) => ({ ...row.message }))
  }
}

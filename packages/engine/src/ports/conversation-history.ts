import type { Session, StoredMessage } from '@engram/core'
import type { TimeIdPageQuery } from '../paging/cursor.ts'

/**
 * The read side of conversations: the lists a door pages through. Writes go through the
 * SessionRepository (core's PersistentSessionManager); these reads never touch its cache.
 */
export interface ConversationHistory {
  /** Every agent's sessions when agentId is null (an admin listing). */
  countSessions(agentId: string | null): Promise<number>
  /** Most recently active first, ties by id. */
  sessions(agentId: string | null, page: { offset: number; limit: number }): Promise<Session[]>
  /** A session's messages in (timestamp, id) order; `includeCompressed: false` hides summarised ones. */
  messages(sessionId: string, includeCompressed: boolean, query: TimeIdPageQuery): Promise<StoredMessage[]>
  /** The messages not yet replaced by a summary, oldest first: what a context window is planned from. */
  uncompressedMessages(sessionId: string): Promise<StoredMessage[]>
}

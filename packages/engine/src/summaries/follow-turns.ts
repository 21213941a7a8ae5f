import type { MessageToStore, Session, SessionRepository, StoredMessage } from '@engram/core'
import type { Logger } from '../ports/logger.ts'

export interface TurnFollower {
  /**
   * Before the turns are stored: what the follower will write with them is decided now, so the
   * store's turn recorder can write it in the messages' transaction (see TurnRecorder).
   */
  turnsStoring?(session: Session, messages: readonly MessageToStore[]): Promise<void>
  /** After the commit; `appended` is the array given to the store (what turnsStoring saw). */
  turnsStored(
    agentId: string,
    conversationId: string,
    messages: readonly StoredMessage[],
    appended?: readonly MessageToStore[],
  ): Promise<void>
  /** Before the conversation is deleted: what hangs on its rows (a cascade removes them) is still readable. */
  conversationDeleting?(agentId: string, conversationId: string): Promise<void>
  conversationDeleted(agentId: string, conversationId: string): Promise<void>
}

/**
 * The session repository, telling `follower` (the summary service, bound once it exists) what was
 * stored and deleted. The messages are committed first: a follower's failure is logged and never
 * fails the write (a retried addMessage would store the turn twice); a conversation whose
 * scheduling was lost is summarised by the next turn, syncMemory or a request.
 */
export function followTurns(
  repository: SessionRepository,
  follower: () => TurnFollower | null,
  log: Logger,
  /** Told first, synchronously, that the turns committed (the jobs written with them are pending). */
  committed: (messages: readonly StoredMessage[]) => void = () => {},
): SessionRepository {
  const tell = async (what: string, call: (f: TurnFollower) => Promise<void>) => {
    const target = follower()
    if (!target) return
    try {
      await call(target)
    } catch (error) {
      log.error(`[summaries] ${what} not followed:`, error)
    }
  }
  return {
    findSession: (scope, conversationId) => repository.findSession(scope, conversationId),
    createSession: (scope, conversationId, now) => repository.createSession(scope, conversationId, now),
    appendMessages: async (session, messages) => {
      // A failure here only means the cursor is written after the commit, on its own.
      await tell('storing turns', async (f) => f.turnsStoring?.(session, messages))
      const result = await repository.appendMessages(session, messages)
      committed(result.messages)
      await tell('stored turns', (f) =>
        f.turnsStored(session.scope, session.conversationId, result.messages, messages),
      )
      return result
    },
    listMessagesBefore: (session, olderThanId) => repository.listMessagesBefore(session, olderThanId),
    compressMessagesBefore: (session, olderThanId, summary) =>
      repository.compressMessagesBefore(session, olderThanId, summary),
    deleteSession: async (scope, conversationId) => {
      await tell('deleting conversation', async (f) => f.conversationDeleting?.(scope, conversationId))
      const deleted = await repository.deleteSession(scope, conversationId)
      if (deleted) await tell('deleted conversation', (f) => f.conversationDeleted(scope, conversationId))
      return deleted
    },
  }
}

import type { SessionRepository } from '@engram/core'
import type { TimeIdCursor } from '../paging/cursor.ts'
import type { ConversationHistory } from '../ports/conversation-history.ts'

/** Message ids read per page when a conversation's turns are listed before its deletion. */
const MESSAGE_PAGE = 1_000

export interface DeletedTurnsFollower {
  messagesDeleted(agentId: string, messageIds: readonly string[]): Promise<void>
}

/**
 * The session repository, telling the graph which turns a deleted conversation took with it: the
 * turns' ids are read before the delete (the cascade removes them), and their evidence is dropped
 * after it, in the deletion's path, so nothing learnt only from those turns outlives them.
 */
export function forgetDeletedTurns(
  repository: SessionRepository,
  history: Pick<ConversationHistory, 'messages'>,
  follower: () => DeletedTurnsFollower | null,
): SessionRepository {
  return {
    ...bind(repository),
    deleteSession: async (scope, conversationId) => {
      const target = follower()
      const session = target ? await repository.findSession(scope, conversationId) : null
      const ids: string[] = []
      if (session) {
        let after: TimeIdCursor | undefined
        for (;;) {
          const page = await history.messages(session.id, true, {
            range: after ? { after } : {},
            direction: 'asc',
            take: MESSAGE_PAGE,
          })
          ids.push(...page.map((message) => message.id))
          const last = page.at(-1)
          if (!last || page.length < MESSAGE_PAGE) break
          after = { timestamp: last.timestamp, id: Number(last.id) }
        }
      }
      const deleted = await repository.deleteSession(scope, conversationId)
      if (deleted && target && ids.length > 0) await target.messagesDeleted(scope, ids)
      return deleted
    },
  }
}

function bind(repository: SessionRepository): SessionRepository {
  return {
    findSession: (scope, conversationId) => repository.findSession(scope, conversationId),
    createSession: (scope, conversationId, now) => repository.createSession(scope, conversationId, now),
    appendMessages: (session, messages) => repository.appendMessages(session, messages),
    listMessagesBefore: (session, olderThanId) => repository.listMessagesBefore(session, olderThanId),
    compressMessagesBefore: (session, olderThanId, summary) =>
      repository.compressMessagesBefore(session, olderThanId, summary),
    deleteSession: (scope, conversationId) => repository.deleteSession(scope, conversationId),
  }
}

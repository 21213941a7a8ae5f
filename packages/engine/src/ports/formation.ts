import type { NewJob, Session, StoredMessage } from '@engram/core'
import type { TurnRecorder } from './summaries.ts'

/**
 * Jobs to queue for messages just stored, given the session they belong to. Where the adapter has
 * transactions they are queued in the one that stores the messages: a crash right after the
 * write cannot leave turns that nothing will embed or extract.
 */
export type MessageJobProducer = (agentId: string, messageIds: number[], session: Session) => NewJob[]

/** A conversation as automatic memory formation sees it: where its extraction has got to. */
export interface ConversationToExtract {
  sessionId: string
  conversationId: string
  /** The last message extraction has read (null: none yet); later messages are new turns. */
  extractedThroughId: number | null
}

/**
 * What automatic memory formation (issue 13 §2) stores besides memory items: each conversation's
 * extraction watermark, and the hook that queues its jobs with the messages. The watermark lives
 * with the conversation, so deleting the conversation or its agent removes it too.
 */
export interface FormationRepository {
  /** Adds a producer of jobs queued with every batch of stored messages. */
  addMessageJobs(producer: MessageJobProducer): void
  /**
   * Adds the summary cursor's write to every append's transaction (one commit per turn). A store
   * without it leaves the cursor to its own write after the messages' commit.
   */
  addTurnRecorder?(recorder: TurnRecorder): void
  /** The agent's conversation with its watermark, or null when there is none (deleted meanwhile). */
  conversation(agentId: string, conversationId: string): Promise<ConversationToExtract | null>
  /** The agent's conversations holding messages after their watermark, oldest first. */
  pendingConversations(agentId: string): Promise<ConversationToExtract[]>
  /** The session's messages after `afterId` (all when null), in id order (the order they were stored), at most `limit`. */
  messagesAfter(
    agentId: string,
    sessionId: string,
    afterId: number | null,
    limit: number,
  ): Promise<StoredMessage[]>
  /** Moves the session's watermark forward to `messageId` (never back). */
  advance(agentId: string, sessionId: string, messageId: number): Promise<void>
}

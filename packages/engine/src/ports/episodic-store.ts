import type { StoredMessage } from '@engram/core'

/**
 * Spec 002's L2 episodic layer: the newest uncompressed messages of each conversation, kept where
 * every replica reads them (Redis sorted sets, `packages/bus-redis`). The database stays the
 * truth: the engine reads here first and falls back to it whenever this cannot answer exactly.
 *
 * How an implementation keeps "exactly" (the engine's EpisodicLayer drives it in this order):
 * - a write that changes a conversation's messages is announced first (`writing`), and until its
 *   `appended` or `changed` the conversation is not answered from here, so no reader is served
 *   a set that misses a committed message, even when the process dies between the commit and
 *   the update (the conversation then falls back to the database until its keys expire);
 * - a set is filled after a miss only when no write was announced since the `ticket` taken
 *   before the database was read, so a fill cannot bring back what a write or a drop changed.
 *
 * Every method fails soft: an unreachable store reads as a miss and writes as nothing, because the
 * database answers either way (an implementation logs the outage once).
 */
export interface EpisodicStore {
  /**
   * Before a write that changes a conversation's messages (an append, a compression, a deletion).
   * Returns the write's token for `appended` / `changed`, or null when the store is unreachable.
   */
  writing(agentId: string, conversationId: string): Promise<string | null>
  /**
   * After an announced append: the stored uncompressed messages (none when the write failed)
   * join the conversation's set if one is held; the conversation is answered from here again.
   */
  appended(
    agentId: string,
    conversationId: string,
    token: string | null,
    messages: readonly StoredMessage[],
  ): Promise<void>
  /** After an announced change other than an append: the conversation's set is dropped. */
  changed(agentId: string, conversationId: string, token: string | null): Promise<void>
  /**
   * The newest `limit` uncompressed messages, newest first ((timestamp, id) descending), or null
   * when the held set cannot answer exactly (missing, holding fewer, a write under way, down).
   */
  newest(agentId: string, conversationId: string, limit: number): Promise<StoredMessage[] | null>
  /** Every uncompressed message, oldest first, when the set holds the whole conversation; else null. */
  whole(agentId: string, conversationId: string): Promise<StoredMessage[] | null>
  /** Taken before the database is read after a miss; null when the store is unreachable. */
  ticket(agentId: string, conversationId: string): Promise<string | null>
  /**
   * Fills the conversation's set with what the database answered after `ticket`: its newest
   * uncompressed messages, newest first, and whether they are all of them. Ignored when a write
   * or a drop came in between.
   */
  fill(
    agentId: string,
    conversationId: string,
    ticket: string,
    newestFirst: readonly StoredMessage[],
    whole: boolean,
  ): Promise<void>
  /** How many messages a set holds at most: a fill reads one more to know whether it has them all. */
  readonly maxMessages: number
  /** Removes every key of the agent (every agent's episodic sets when null): deleted or replaced. */
  forgetAgent(agentId: string | null): Promise<void>
  /** How many keys naming the agent the store holds (the deletion report), null when unreachable. */
  keysOf(agentId: string): Promise<number | null>
}

import type { StoredMessage } from '@engram/core'
import type { FullTextCollection } from './full-text.ts'
import type { MemoryItemView } from './memory-items.ts'

/**
 * The RecallSources port: what search reads besides the full-text index and the vectors. Search
 * finds candidate ids through those two; this port turns ids into the rows a hit shows, reads the
 * dialogue around a turn and the agent's participants, and records that knowledge was recalled.
 * Every read is scoped to the agent, so one tenant's ids never resolve to another's rows.
 */

/** A memory item as a hit shows it: the items' own view. */
export type RecalledMemoryItem = MemoryItemView

/** A knowledge row as stored (a hit shows it whole). */
export interface RecalledKnowledge {
  id: number
  agentId: string
  category: string
  key: string
  value: string
  confidence: number
  storeCount: number
  useCount: number
  lastUsedAt: Date | null
  lastDecayAt: Date | null
  createdAt: Date
  updatedAt: Date
}

/** A turn with the conversation it belongs to (a hit names the conversation, not the session). */
export interface RecalledMessage {
  message: StoredMessage
  conversationId: string
}

/**
 * Which memory items count: the filters search accepts, already validated, and the time they
 * must be valid at (validFrom ≤ asOf < validUntil) unless superseded ones are included.
 */
export interface MemoryItemFilter {
  userId?: string | null
  categories?: readonly string[] | null
  tags?: readonly string[] | null
  minImportance?: number | null
  createdAfter?: Date | null
  createdBefore?: Date | null
  includeSuperseded?: boolean | null
  pinned?: boolean | null
  /** A substring of the content. */
  search?: string | null
  asOf: Date
}

/** Which of the agent's turns: ordinary turns or context summaries, and an optional span. */
export interface TurnFilter {
  set: 'messages' | 'summaries'
  sessionId?: string | null
  since?: Date | null
  until?: Date | null
}

/** The speakers of an agent's turns added after a known id: each with its newest turn. */
export interface SpeakerActivity {
  /** null for turns nobody was named on (they still move the newest time and top id). */
  speaker: string | null
  newest: Date | null
  topMessageId: number
}

/** The users of an agent's memory items added after a known id. */
export interface MemoryUserActivity {
  userId: string
  topMemoryId: number
}

/** A turn beside another one of the same conversation, on one side of it. */
export interface TurnBeside {
  /** The turn it is beside. */
  origin: string
  id: string
  timestamp: Date | null
  side: 'before' | 'after'
}

/** A conversation's turns between two of its turns (by their times, both included). */
export interface TurnSpan {
  sessionId: string
  fromTurnId: string
  toTurnId: string
}

/** A turn of a span. */
export interface SpanTurn {
  sessionId: string
  id: string
  timestamp: Date
}

export interface RecallSources {
  /**
   * The agent's speakers (and unnamed turns) among messages with ids above `afterMessageId`, one
   * row per speaker: lets search extend what it knows of an agent from the new rows alone.
   */
  speakersSince(agentId: string, afterMessageId: number): Promise<SpeakerActivity[]>
  /** The users of the agent's memory items with ids above `afterMemoryId`, one row per user. */
  memoryUsersSince(agentId: string, afterMemoryId: number): Promise<MemoryUserActivity[]>
  /**
   * The indexed text of documents by id (content; a knowledge row's "key value"), for the words
   * that expand a query. Ids are the index's, so no agent is needed: they came from its postings.
   */
  documentTexts(collection: FullTextCollection, ids: readonly string[]): Promise<Map<string, string>>
  /** Whether the agent (or one of its conversations) has a context summary. */
  hasSummaries(agentId: string, sessionId: string | null): Promise<boolean>
  /** The agent's current memory items' ids, newest first or most important first. */
  memoryItemIdsBy(
    agentId: string,
    order: 'recency' | 'importance',
    limit: number,
    asOf: Date,
  ): Promise<string[]>
  /**
   * The agent's memory items formed from any of these turns (their first source turn), as
   * (memory, turn) pairs in any order: search over memories reaches a memory through its turn's
   * words and dialogue, which the turn keeps in the messages' index (nothing is copied).
   */
  memoryItemIdsFromTurns(
    agentId: string,
    turnIds: readonly string[],
  ): Promise<{ memoryId: string; turnId: string }[]>
  /**
   * Whether any of the agent's memory items was formed from a turn (has a source turn): when none
   * was, search over memories skips reading its turns' context, which could reach no memory.
   */
  hasMemoryItemsFromTurns(agentId: string): Promise<boolean>
  /** The agent's knowledge ids, last updated first or most confident first. */
  knowledgeIdsBy(agentId: string, order: 'recency' | 'importance', limit: number): Promise<string[]>
  /** The agent's newest turns' ids in the set (turns carry no importance of their own). */
  newestMessageIds(agentId: string, set: 'messages' | 'summaries', limit: number): Promise<string[]>
  /** The agent's memory items among `ids` that pass the filter (any order). */
  memoryItems(
    agentId: string,
    ids: readonly string[],
    filter: MemoryItemFilter,
  ): Promise<RecalledMemoryItem[]>
  /** The agent's knowledge rows among `ids` (any order). */
  knowledge(agentId: string, ids: readonly string[]): Promise<RecalledKnowledge[]>
  /** The agent's turns among `ids` that pass the filter (any order). */
  messages(agentId: string, ids: readonly string[], filter: TurnFilter): Promise<RecalledMessage[]>
  /**
   * Up to `reach` turns each side of each given turn in its conversation, in (timestamp, id)
   * order; unordered in the result, the caller sorts and cuts at pauses.
   */
  turnsBeside(turnIds: readonly string[], reach: number): Promise<TurnBeside[]>
  /**
   * Each span's turns, oldest first, at most `limit` a span: a span is a conversation's turns
   * from one of its turns' time to another's, both included (episodes are split on them). All
   * spans in one read: search asks for one per conversation its candidates are in, and a read
   * per conversation was a round trip per hit.
   */
  turnSpans(spans: readonly TurnSpan[], limit: number): Promise<SpanTurn[]>
  /** The session id of the agent's conversation, null when it has none by that id. */
  sessionIdOf(agentId: string, conversationId: string): Promise<string | null>
  /**
   * A search hit on knowledge is a use for decay purposes (it was recalled), not a confirmation:
   * counts the use and its time, leaving confidence alone.
   */
  recordKnowledgeRecall(agentId: string, ids: readonly number[], at: Date): Promise<void>
}

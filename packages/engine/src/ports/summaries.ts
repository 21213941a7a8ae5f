import type { MessageToStore, NewJob, Session, SummaryStrategy } from '@engram/core'

/** What started a summary: a pause, a switch to another conversation, the token threshold, or a request. */
export type StoredSummaryTrigger = 'debounce' | 'switch' | 'threshold' | 'request'

/** Who wrote a summary's text: the language model, or the offline extractive summariser. */
export type SummaryWriter = 'llm' | 'extractive'

/** An automatic conversation summary (issue 13 §3), a row of its own, not a message of the conversation. */
export interface NewSummary {
  agentId: string
  conversationId: string
  content: string
  strategy: SummaryStrategy
  writer: SummaryWriter
  trigger: StoredSummaryTrigger
  /** The range of messages it covers (ids of the conversation's messages, in order). */
  firstMessageId: string
  lastMessageId: string
  messageCount: number
  tokenCount: number
  /** When Engram stored it: retention counts from here, never from a message's own timestamp. */
  createdAt: Date
}

export interface StoredSummary extends NewSummary {
  id: string
}

/** Where a conversation stands for its summaries. */
export interface SummaryCursor {
  agentId: string
  conversationId: string
  /** When Engram stored the conversation's newest turn (the engine's clock, not the caller's timestamp). */
  lastTurnAt: Date
  /** The newest message already summarised, or null. */
  summarisedThroughId: string | null
  lastSummaryAt: Date | null
  /** Tokens of the turns recorded since the last summary (what the token threshold is checked against). */
  pendingTokens: number
}

export interface RecordedTurn {
  cursor: SummaryCursor
  /** The agent's previous conversation, when the turn switched away from it. */
  previous: SummaryCursor | null
}

/**
 * A turn's cursor write, to be made in the transaction that stores its messages: one commit per
 * addMessage instead of the messages' and then the cursor's (issue 18: the cursor's own group
 * commit was ~70 µs of CPU and a second wait per turn).
 */
export interface TurnToRecord {
  /** The engine's clock when the turn was stored (the cursor's lastTurnAt). */
  at: Date
  /** The turn's tokens, added to the cursor's pending ones. */
  tokens: number
  /** The summary jobs the cursor after the write calls for, queued in the same transaction. */
  jobsFor(turn: RecordedTurn): readonly NewJob[]
}

/**
 * Asked inside the messages' transaction, once per append (again if the store retries it): the
 * cursor write to make with those messages, or null for none (the follower records the turn
 * after the commit instead). Synchronous: whatever it needs was resolved before the append.
 */
export type TurnRecorder = (session: Session, messages: readonly MessageToStore[]) => TurnToRecord | null

export interface SummaryListQuery {
  conversationId?: string | null
  /** Only summaries stored at or after this time. */
  since?: Date | null
  limit: number
}

/** A summary that was removed: its id and text, so its vector, cache entry and embed job can go too. */
export interface RemovedSummary {
  id: string
  content: string
}

/**
 * Automatic summaries and the per-conversation cursor that schedules them, one agent at a time.
 * A conversation's summaries and cursor go with the conversation, and everything with the agent.
 */
export interface SummaryRepository {
  /** Stores a summary and moves its conversation's cursor past it (pending tokens back to 0), in one transaction. */
  insert(summary: NewSummary): Promise<StoredSummary>
  /** Newest first (ties by id descending). */
  list(agentId: string, query: SummaryListQuery): Promise<StoredSummary[]>
  find(agentId: string, id: string): Promise<StoredSummary | null>
  /**
   * Records a turn of a conversation at `at` (its tokens added to the pending ones) and queues the
   * jobs `jobsFor` decides from it, in one transaction (a crash cannot keep one without the
   * other); returns the conversation's cursor after it, and the cursor of the conversation the
   * agent wrote to last before it when that was another one (a switch), else null.
   */
  recordTurn(
    agentId: string,
    conversationId: string,
    at: Date,
    tokens: number,
    jobsFor?: (turn: RecordedTurn) => readonly NewJob[],
  ): Promise<RecordedTurn>
  cursor(agentId: string, conversationId: string): Promise<SummaryCursor | null>
  /** Removes the agent's summaries stored before `cutoff`; returns those that went. */
  deleteStoredBefore(agentId: string, cutoff: Date): Promise<RemovedSummary[]>
  /** When the agent's oldest summary was stored, or null (when the retention job runs next). */
  oldestStoredAt(agentId: string): Promise<Date | null>
  /** The agent's conversations with turns recorded since their last summary (what syncMemory summarises). */
  conversationsWithPendingTurns(agentId: string): Promise<string[]>
  /** Agents that have summaries (what the retention cleanup visits). */
  agentsWithSummaries(): Promise<string[]>
  /** A deleted conversation's summaries and cursor; returns the summaries that went. */
  deleteConversation(agentId: string, conversationId: string): Promise<RemovedSummary[]>
  /** How many summaries the agent has (what a deletion report counts). */
  count(agentId: string): Promise<number>
}

import type { MemoryCategory } from '@engram/core'

/**
 * The orders memoryContext's sections read memories in (each section's own priority):
 * `oldest` (user overrides, as they were pinned), `profile` (importance, confidence, then the most
 * recently updated), `recent` (working memory: the most recently updated, then importance) and
 * `important` (relationships: importance, then the most recently updated).
 */
export type ContextMemoryOrder = 'oldest' | 'profile' | 'recent' | 'important'

/** Which of an agent's memories a section is offered. */
export interface ContextMemoryQuery {
  /** Only this user's memories when given. */
  userId?: string | null
  /** Only memories valid at this time: neither superseded nor valid only later. */
  asOf: Date
  pinned: boolean
  /** Any category when absent. */
  categories?: readonly MemoryCategory[]
  order: ContextMemoryOrder
  /** Memories passed over first (a section reading on past those it filtered out). */
  skip?: number
  limit: number
}

/** A memory as a section shows it (with what the profile section decides on). */
export interface ContextMemory {
  id: string
  userId: string | null
  content: string
  category: MemoryCategory
}

/** A message as memoryContext shows it. */
export interface ContextTurn {
  id: string
  role: string
  content: string
}

/**
 * What memoryContext reads besides search: the agent's memories per section, its conversation
 * summaries and the recent turns of one conversation.
 */
export interface ContextSources {
  memories(agentId: string, query: ContextMemoryQuery): Promise<ContextMemory[]>
  /**
   * The agent's summary messages (content starting with core's CONTEXT_SUMMARY_PREFIX, prefix
   * included), newest first, those from `since` on when given.
   */
  summaries(agentId: string, options: { since?: Date; limit: number }): Promise<ContextTurn[]>
  /**
   * The newest uncompressed turns of one conversation, newest first; null when the agent has no
   * such conversation (the caller names it as not found).
   */
  recentTurns(agentId: string, conversationId: string, limit: number): Promise<ContextTurn[] | null>
}

import type { ContextBudgets, MemorySettings } from '@engram/core'

/**
 * What memoryContext calls on services other groups are still moving into the engine. Declared
 * here narrowly (exactly what is called) and satisfied structurally by the apps/api classes, so
 * this code never imports apps/api; the whole services replace them once they move.
 */

/** The memory items' service: the agent's settings, and access counting of what was shown. */
export interface ContextMemoryItems {
  settings(agentId: string): Promise<{ settings: MemorySettings; contextBudgets: ContextBudgets }>
  /** Counts the memories (by row id) as accessed now. */
  recordAccess(agentId: string, ids: readonly number[]): Promise<unknown>
}

/** The search options memoryContext uses: one scope, no access tracking (access is counted once, here). */
export interface ContextSearchOptions {
  scopes: ('MEMORIES' | 'KNOWLEDGE' | 'POOLS')[]
  limit: number
  memoryFilter?: { userId?: string | null }
  track: false
}

/** A search hit as memoryContext reads it: a memory hit carries its memory. */
export interface ContextSearchHit {
  id: string
  text: string
  memory?: unknown
}

export interface ContextSearch {
  search(agentId: string, query: string, options: ContextSearchOptions): Promise<ContextSearchHit[]>
  /** The time of the agent's newest message, which conversation windows count back from. */
  newestMessageTime(agentId: string): Promise<Date | null>
}

/** Automatic memory formation's outputs memoryContext shows (issue 13 §3, §4). */
export interface ContextFormation {
  /** The current generated profile's lines for the user, or null when none was generated yet. */
  profileLines(agentId: string, userId: string | null): Promise<{ id: string; text: string }[] | null>
  /** Automatic summaries, newest first, those stored from `since` on when given. */
  summaries(
    agentId: string,
    options: { since?: Date; limit: number },
  ): Promise<{ id: string; content: string }[]>
}

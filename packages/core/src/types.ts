export const ROLES = ['user', 'assistant', 'system', 'tool'] as const
export type Role = (typeof ROLES)[number]

export const MEMORY_TYPES = ['short_term', 'long_term'] as const
export type MemoryType = (typeof MEMORY_TYPES)[number]

/** Time comes from outside: core never reads the system clock, so every rule is testable. */
export interface Clock {
  now(): Date
}

/**
 * Delays come from outside too (a catch-up after a write, a gather before a job batch, a lease
 * poll, a flush interval): the server's scheduler runs them on real timers, a test's fires them
 * when the test moves its clock, so no test waits for a delay in real time.
 */
export interface Scheduler {
  /** Calls `wake` once `ms` have passed; the returned function cancels it (a no-op once fired). */
  setTimer(ms: number, wake: () => void): () => void
}

/** A clock whose scheduler runs on the same time: a test moves both with one call. */
export interface TimerClock extends Clock, Scheduler {}

export interface MemoryEntry {
  id: string
  type: MemoryType
  role: Role
  content: string
  tokenCount: number
  relevance: number
  isCompressed: boolean
  timestamp: Date
  sessionId: string | null
}

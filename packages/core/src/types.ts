export const ROLES = ['user', 'assistant', 'system', 'tool'] as const
export type Role = (typeof ROLES)[number]

export const MEMORY_TYPES = ['short_term', 'long_term'] as const
export type MemoryType = (typeof MEMORY_TYPES)[number]

/** Time comes from outside: core never reads the system clock, so every rule is testable. */
export interface Clock {
  now(): Date
}

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

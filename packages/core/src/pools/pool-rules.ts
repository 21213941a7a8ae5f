import { z } from 'zod'
import { ValidationError } from '../errors.ts'

// Shared memory pools (spec 002 "Memory Sharing Between Agents", issue 17). A pool's memories are
// memory items stored under an internal storage agent, so they pass the same pipeline as an agent's
// own (verification, full-text, vectors, hybrid search). Agent ids are lowercase slugs without ':',
// so no user agent can ever take a pool's storage id.

export const POOL_ROLES = ['READER', 'CONTRIBUTOR'] as const
/** READER reads the pool; CONTRIBUTOR reads and writes it. */
export type PoolRole = (typeof POOL_ROLES)[number]

/** What every pool's storage agent id starts with (adapters leave them out of every-agent lists). */
export const POOL_STORAGE_PREFIX = 'pool:'

/** The internal agent a pool's memories are stored under. */
export function poolStorageAgentId(poolId: string): string {
  return `${POOL_STORAGE_PREFIX}${poolId}`
}

/** Whether an agent id is a pool's storage agent (kept out of agent lists, stats and formation). */
export function isPoolStorageAgent(agentId: string): boolean {
  return agentId.startsWith(POOL_STORAGE_PREFIX)
}

/** The provenance a memory synced from a pool records (`pool:<id>`), the same string as its storage agent. */
export const poolProvenance = poolStorageAgentId

/** The sizes a pool operation may send; each configurable, each checked with the field and the limit named. */
export const PoolLimitsSchema = z.object({
  maxPoolNameChars: z.number().int().min(1).max(1_000).default(100),
  maxPoolDescriptionChars: z.number().int().min(1).max(100_000).default(2_000),
  /** Members named in one createPool call. */
  maxMembersPerCall: z.number().int().min(1).max(10_000).default(100),
  /** Members a pool may hold. */
  maxPoolMembers: z.number().int().min(1).max(100_000).default(1_000),
  /** Hits of one queryPool. */
  maxPoolQueryLimit: z.number().int().min(1).max(1_000).default(50),
})
export type PoolLimits = z.infer<typeof PoolLimitsSchema>
export const DEFAULT_POOL_LIMITS: PoolLimits = PoolLimitsSchema.parse({})

/** A pool's name as stored: trimmed, non-blank, within the limit (names are unique). */
export function normalizePoolName(name: string, limits: PoolLimits = DEFAULT_POOL_LIMITS): string {
  const trimmed = name.trim()
  if (trimmed.length === 0)
    throw new ValidationError([{ field: 'name', message: 'must not be blank', limit: 1 }])
  if (trimmed.length > limits.maxPoolNameChars)
    throw new ValidationError([
      {
        field: 'name',
        message: `must be at most ${limits.maxPoolNameChars} characters`,
        limit: limits.maxPoolNameChars,
      },
    ])
  return trimmed
}

/** A description as stored: trimmed, null when blank, within the limit. */
export function normalizePoolDescription(
  description: string | null | undefined,
  limits: PoolLimits = DEFAULT_POOL_LIMITS,
): string | null {
  const trimmed = description?.trim() ?? ''
  if (trimmed.length > limits.maxPoolDescriptionChars)
    throw new ValidationError([
      {
        field: 'description',
        message: `must be at most ${limits.maxPoolDescriptionChars} characters`,
        limit: limits.maxPoolDescriptionChars,
      },
    ])
  return trimmed.length === 0 ? null : trimmed
}

/** What a member may do: a reader reads, a contributor reads and writes. */
export function mayContribute(role: PoolRole): boolean {
  return role === 'CONTRIBUTOR'
}

/**
 * The members of a createPool call, one per agent: an agent named twice is a mistake (which role
 * was meant?), so it is refused naming the second entry.
 */
export function distinctMembers<M extends { agentId: string }>(
  members: readonly M[],
  limits: PoolLimits = DEFAULT_POOL_LIMITS,
): M[] {
  if (members.length > limits.maxMembersPerCall)
    throw new ValidationError([
      {
        field: 'members',
        message: `must name at most ${limits.maxMembersPerCall} members`,
        limit: limits.maxMembersPerCall,
      },
    ])
  const seen = new Set<string>()
  members.forEach((member, i) => {
    if (seen.has(member.agentId))
      throw new ValidationError([{ field: `members.${i}.agentId`, message: `names ${member.agentId} twice` }])
    seen.add(member.agentId)
  })
  return [...members]
}

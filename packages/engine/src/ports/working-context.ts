import type { WorkingContextState } from '@engram/core'

/**
 * Where replicas share spec 002's L1 working context (REDIS_URL: `packages/bus-redis`'s
 * `RedisWorkingContextStore`, key `<prefix>:wc:<agentId>`). Without one, the engine's in-process
 * LRU is the only copy. With one, it is the truth and the LRU a copy kept exact by `version`: every
 * write names the version it changed, and is refused when another replica wrote in between (the
 * engine reads again and re-applies its change), so two replicas appending at once lose nothing.
 *
 * Unlike the L2 episodic layer this is not a cache of the database: an unreachable store fails
 * the operation (UNAVAILABLE) rather than answering from one replica's memory.
 */
export interface WorkingContextStore {
  /**
   * The agent's context, or `unchanged` when its version is still `knownVersion` (the caller's
   * copy is current), or null when it holds none (never written, cleared or expired).
   */
  read(agentId: string, knownVersion: string | null): Promise<WorkingContextState | 'unchanged' | null>
  /**
   * Writes `next` (whose `version` is new) if the held version is still `expectedVersion` (null:
   * none held), living `ttlMs` from now; false when another write came first.
   */
  write(
    agentId: string,
    expectedVersion: string | null,
    next: WorkingContextState,
    ttlMs: number,
  ): Promise<boolean>
  /** Removes the agent's context (clearWorkingContext). */
  remove(agentId: string): Promise<void>
  /** Removes the agent's context key (every agent's when null): deleted or replaced. */
  forgetAgent(agentId: string | null): Promise<void>
  /** How many keys of the agent it holds (the deletion report), null when it cannot be asked. */
  keysOf(agentId: string): Promise<number | null>
}

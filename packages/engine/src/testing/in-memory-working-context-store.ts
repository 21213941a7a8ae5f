import type { Clock, WorkingContextState } from '@engram/core'
import type { WorkingContextStore } from '../ports/working-context.ts'

/**
 * The shared store of the working context as Redis holds it (versioned writes, a TTL on the
 * engine's clock), in memory: two engines given one instance act as two replicas on one Redis.
 */
export class InMemoryWorkingContextStore implements WorkingContextStore {
  private readonly held = new Map<string, { json: string; version: string | null; expiresAt: number }>()
  /** Writes refused because another came first (tests check that the race happened). */
  refusedWrites = 0

  constructor(private readonly clock: Clock) {}

  async read(
    agentId: string,
    knownVersion: string | null,
  ): Promise<WorkingContextState | 'unchanged' | null> {
    const entry = this.live(agentId)
    if (!entry) return null
    if (knownVersion !== null && entry.version === knownVersion) return 'unchanged'
    return JSON.parse(entry.json) as WorkingContextState
  }

  async write(
    agentId: string,
    expectedVersion: string | null,
    next: WorkingContextState,
    ttlMs: number,
  ): Promise<boolean> {
    // Yields first, as a network round trip would, so concurrent writers interleave.
    await Promise.resolve()
    const current = this.live(agentId)?.version ?? null
    if (current !== expectedVersion) {
      this.refusedWrites++
      return false
    }
    this.held.set(agentId, {
      json: JSON.stringify(next),
      version: next.version,
      expiresAt: this.clock.now().getTime() + ttlMs,
    })
    return true
  }

  async remove(agentId: string): Promise<void> {
    this.held.delete(agentId)
  }

  async forgetAgent(agentId: string | null): Promise<void> {
    if (agentId === null) this.held.clear()
    else this.held.delete(agentId)
  }

  async keysOf(agentId: string): Promise<number | null> {
    return this.live(agentId) ? 1 : 0
  }

  private live(agentId: string) {
    const entry = this.held.get(agentId)
    if (entry && entry.expiresAt <= this.clock.now().getTime()) {
      this.held.delete(agentId)
      return undefined
    }
    return entry
  }
}

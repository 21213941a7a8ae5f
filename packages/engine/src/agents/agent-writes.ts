import type { CacheChange } from '../ports/event-bus.ts'

/** How much a change takes away: several changes of one agent in a tick are announced as the largest. */
const WEIGHT: Record<CacheChange, number> = { write: 0, settings: 1, reset: 2, ended: 3 }

/**
 * A write counter per agent. Caches of derived data (the assembled memory context) are keyed by
 * it, so any write to an agent invalidates them without each write path knowing the caches.
 * With several replicas on one database the changes are also announced (`onChange`), so the
 * other replicas drop what they hold for the agent (the engine's cache:invalidate).
 */
export class AgentWrites {
  private readonly versions = new Map<string, number>()
  private readonly incarnations = new Map<string, number>()
  private epoch = 0
  private listener: ((agentId: string | null, change: CacheChange) => void) | null = null
  /** Changes of this tick, announced together: one write touches its agent several times. */
  private pending: Map<string | null, CacheChange> | null = null
  private quiet = false
  private readonly observers: ((agentId: string | null, change: CacheChange) => void)[] = []

  /**
   * Changes each time the agent is deleted (or every agent replaced by a restore): whatever was
   * granted for an agent id before (a live token, a subscription) does not carry over to the
   * next agent given that id.
   */
  incarnation(agentId: string): string {
    return `${this.epoch}.${this.incarnations.get(agentId) ?? 0}`
  }

  /** The agent's data is gone: a new write version, and a new incarnation of its id. */
  ended(agentId: string): void {
    this.incarnations.set(agentId, (this.incarnations.get(agentId) ?? 0) + 1)
    this.touch(agentId, 'ended')
  }

  version(agentId: string): string {
    return `${this.epoch}.${this.versions.get(agentId) ?? 0}`
  }

  /**
   * The agent's rows changed: `write` when added or edited, `settings` when its settings record
   * was saved, `reset` when deleted or replaced in bulk.
   */
  touch(agentId: string, change: CacheChange = 'write'): void {
    this.versions.set(agentId, (this.versions.get(agentId) ?? 0) + 1)
    for (const observe of this.observers) observe(agentId, change)
    this.announce(agentId, change)
  }

  /** Every agent at once (restore, clearing all data): every id may name another agent now. */
  touchAll(): void {
    this.epoch++
    for (const observe of this.observers) observe(null, 'ended')
    this.announce(null, 'ended')
  }

  /**
   * Who must hear each change at once, here and applied from other replicas alike (in-process
   * indexes that drop a deleted agent's data immediately, not on their next read).
   */
  observe(observer: (agentId: string | null, change: CacheChange) => void): void {
    this.observers.push(observer)
  }

  /**
   * Who hears of each change (once per agent and tick, after the writing code ran on): the
   * engine publishes them for the other replicas. One listener; a second replaces the first.
   */
  onChange(listener: (agentId: string | null, change: CacheChange) => void): void {
    this.listener = listener
  }

  /** Applies another replica's change here without announcing it back. */
  quietly(apply: () => void): void {
    this.quiet = true
    try {
      apply()
    } finally {
      this.quiet = false
    }
  }

  private announce(agentId: string | null, change: CacheChange): void {
    if (this.quiet || !this.listener) return
    if (!this.pending) {
      const pending = new Map<string | null, CacheChange>()
      this.pending = pending
      queueMicrotask(() => {
        this.pending = null
        for (const [agent, kind] of pending) this.listener?.(agent, kind)
      })
    }
    const known = this.pending.get(agentId)
    if (!known || WEIGHT[change] > WEIGHT[known]) this.pending.set(agentId, change)
  }
}

import { LRUCache } from 'lru-cache'
import type { AgentWrites } from './agent-writes.ts'

/** Agents whose answer one cache holds at most: the least recently asked are read again. */
export const AGENT_VERSION_CACHED_AGENTS = 10_000

/**
 * One answer per agent, read once per agent write version: anything that changes what the read
 * returns moves the version (a write, a `settings` change, a membership change), here and, through
 * the invalidation events, on the other replicas, so an answer kept here is never one from before
 * a change. Search's memory settings (a round trip per search on Postgres) and the pools an agent
 * reads use it.
 */
export class AgentVersionCache<T> {
  private readonly held: LRUCache<string, { version: string; answer: Promise<T> }>

  constructor(
    private readonly read: (agentId: string) => Promise<T>,
    private readonly writes: Pick<AgentWrites, 'version'>,
    options: { max?: number } = {},
  ) {
    this.held = new LRUCache({ max: options.max ?? AGENT_VERSION_CACHED_AGENTS })
  }

  of(agentId: string): Promise<T> {
    // The version from before the read: a change while it runs makes the next call read again.
    const version = this.writes.version(agentId)
    const known = this.held.get(agentId)
    if (known && known.version === version) return known.answer
    const answer = this.read(agentId)
    this.held.set(agentId, { version, answer })
    // A failed read is not kept: the next call asks the store again.
    answer.catch(() => {
      if (this.held.get(agentId)?.answer === answer) this.held.delete(agentId)
    })
    return answer
  }

  /** Whether the agent's answer is held (the deletion report counts it). */
  holds(agentId: string): boolean {
    return this.held.has(agentId)
  }

  forget(agentId: string): void {
    this.held.delete(agentId)
  }

  clear(): void {
    this.held.clear()
  }
}

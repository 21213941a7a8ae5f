/**
 * A write counter per agent. Caches of derived data (the assembled memory context) are keyed by
 * it, so any write to an agent invalidates them without each write path knowing the caches.
 */
export class AgentWrites {
  private readonly versions = new Map<string, number>()
  private readonly incarnations = new Map<string, number>()
  private epoch = 0

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
    this.touch(agentId)
  }

  version(agentId: string): string {
    return `${this.epoch}.${this.versions.get(agentId) ?? 0}`
  }

  touch(agentId: string): void {
    this.versions.set(agentId, (this.versions.get(agentId) ?? 0) + 1)
  }

  /** Every agent at once (restore, clearing all data). */
  touchAll(): void {
    this.epoch++
  }
}

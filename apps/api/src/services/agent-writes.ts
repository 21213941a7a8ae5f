/**
 * A write counter per agent. Caches of derived data (the assembled memory context) are keyed by
 * it, so any write to an agent invalidates them without each write path knowing the caches.
 */
export class AgentWrites {
  private readonly versions = new Map<string, number>()
  private epoch = 0

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

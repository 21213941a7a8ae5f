import type { AgentDataStore, StoreRemainder } from '../ports/agent-data.ts'
import type { InMemoryOptimizerRepository } from './in-memory-optimizer.ts'
import type { InMemoryRepositories } from './in-memory-repositories.ts'

/** What remains of an agent in the in-memory stores; the purge drops what outlived its agent. */
export class InMemoryAgentData implements AgentDataStore {
  constructor(
    private readonly repositories: InMemoryRepositories,
    private readonly optimizer: InMemoryOptimizerRepository,
    /** Further stores that count what they hold of an agent (summaries, profile versions). */
    private readonly others: { store: string; count(agentId: string): Promise<number> }[] = [],
  ) {}

  async purge(_agentId?: string): Promise<void> {
    this.optimizer.forgetDeletedAgents()
  }

  async remains(agentId: string): Promise<StoreRemainder[]> {
    const owned = this.repositories.owned(agentId)
    return [
      { store: 'agents', kind: 'TABLE', count: owned.agents },
      { store: 'memory entries', kind: 'TABLE', count: owned.entries },
      { store: 'entry vectors', kind: 'TABLE', count: owned.vectors },
      { store: 'parameters', kind: 'TABLE', count: owned.parameters },
      { store: 'optimizer snapshots', kind: 'TABLE', count: this.optimizer.count(agentId) },
      ...(await Promise.all(
        this.others.map(async (other) => ({
          store: other.store,
          kind: 'TABLE' as const,
          count: await other.count(agentId),
        })),
      )),
    ]
  }

  async agentIds(): Promise<string[]> {
    return this.repositories.agentIds()
  }
}

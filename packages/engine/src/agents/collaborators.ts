/**
 * What the agent lifecycle calls on services other groups are still moving into the engine.
 * Declared here narrowly (exactly what is called) and satisfied structurally by the apps/api
 * classes, so this code never imports apps/api; the whole services replace them once they move.
 */

/** Agents and their keys: deleting one deletes every row it owns. */
export interface LifecycleAgents<A extends { id: string }> {
  /** Deletes the agent (NotFoundError when there is none) and returns it as it was. */
  deleteAgent(id: string): Promise<A>
}

/** The embeddings: vector indexes held in memory and the vector graph files saved beside the store. */
export interface LifecycleEmbeddings {
  /** Drops the indexes held for an agent (every agent's when none is named). */
  reset(agentId?: string): void
  /** Indexes held in memory for an agent. */
  held(agentId: string): { indexes: number }
  /** The agent's saved vector graph files. */
  files(agentId: string): string[]
  /** Removes an agent's saved graphs (every agent's when none is named). */
  removeFiles(agentId?: string): number
  /** Removes saved graphs of agents not in `agentIds`; returns how many files. */
  removeOrphanFiles(agentIds: readonly string[]): number
}

/** Search keeps per-agent term statistics between queries. */
export interface LifecycleSearch {
  /** Forgets the agent's statistics and facts (every agent's when none is named). */
  forgetStatistics(agentId?: string): void
  /** What search holds of an agent between searches (its participants, newest turn, settings). */
  cachedFacts(agentId: string): number
  /** Drops pending search accesses of an agent (every agent's when none is named). */
  forgetAccesses(agentId?: string): void
}

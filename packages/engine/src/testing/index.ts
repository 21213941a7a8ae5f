import { type Clock, InMemorySessionRepository } from '@engram/core'
import type { Storage } from '../ports/storage.ts'
import { InMemoryConversationHistory } from './in-memory-conversation-history.ts'
import { InMemoryEmbeddingRepository } from './in-memory-embeddings.ts'
import { InMemoryFormation } from './in-memory-formation.ts'
import { InMemoryFullTextIndex } from './in-memory-full-text.ts'
import { InMemoryJobQueue } from './in-memory-job-queue.ts'
import { InMemoryRecallSources } from './in-memory-recall-sources.ts'
import { InMemoryRepositories } from './in-memory-repositories.ts'
import { InMemoryVectorStore } from './in-memory-vector-store.ts'

export { InMemoryConversationHistory } from './in-memory-conversation-history.ts'
export { InMemoryEmbeddingRepository } from './in-memory-embeddings.ts'
export { InMemoryFormation } from './in-memory-formation.ts'
export { InMemoryFullTextIndex } from './in-memory-full-text.ts'
export { InMemoryJobQueue } from './in-memory-job-queue.ts'
export { InMemoryRecallSources } from './in-memory-recall-sources.ts'

import { InMemoryAgentRecords } from './in-memory-agent-records.ts'
import { InMemoryGraph } from './in-memory-graph.ts'
import { InMemoryKnowledge } from './in-memory-knowledge.ts'
import { IN_MEMORY_COMPACTION, InMemoryMaintenance } from './in-memory-maintenance.ts'
import { InMemoryMemoryItems } from './in-memory-memory-items.ts'
import { InMemoryPools } from './in-memory-pools.ts'
import { InMemoryTrajectories } from './in-memory-trajectories.ts'

export { InMemoryAgentRecords } from './in-memory-agent-records.ts'
export { InMemoryGraph } from './in-memory-graph.ts'
export { InMemoryKnowledge } from './in-memory-knowledge.ts'
export { InMemoryMemoryItems } from './in-memory-memory-items.ts'
export { InMemoryPools } from './in-memory-pools.ts'
export { InMemoryTrajectories } from './in-memory-trajectories.ts'

import { InMemoryAgentData } from './in-memory-agent-data.ts'
import { InMemoryContextSources } from './in-memory-context-sources.ts'
import { InMemoryOptimizerRepository } from './in-memory-optimizer.ts'
import { InMemoryProfiles } from './in-memory-profiles.ts'
import { InMemorySummaries } from './in-memory-summaries.ts'

export { InMemoryAgentData } from './in-memory-agent-data.ts'
export { InMemoryContextSources } from './in-memory-context-sources.ts'
export { InMemoryOptimizerRepository } from './in-memory-optimizer.ts'
export { InMemoryProfiles } from './in-memory-profiles.ts'
export { InMemoryRepositories } from './in-memory-repositories.ts'
export { InMemorySummaries } from './in-memory-summaries.ts'
export { InMemoryVectorStore } from './in-memory-vector-store.ts'
export { InMemoryWorkingContextStore } from './in-memory-working-context-store.ts'
export { scriptedLlm } from './scripted-llm.ts'

/** Test-only storage: every port in memory, nothing persisted, one process. */
export interface InMemoryStorage extends Storage {
  fullText: InMemoryFullTextIndex
  recall: InMemoryRecallSources
  vectors: InMemoryVectorStore
  embeddings: InMemoryEmbeddingRepository
}

export function createInMemoryStorage(clock: Clock): InMemoryStorage {
  const repositories = new InMemoryRepositories(() => clock.now())
  const sessions = new InMemorySessionRepository()
  const vectors = new InMemoryVectorStore()
  const jobs = new InMemoryJobQueue(clock)
  const agents = repositories.repositories.agents
  const agentRecords = new InMemoryAgentRecords(agents, () => clock.now())
  const memoryItems = new InMemoryMemoryItems(agents)
  const knowledge = new InMemoryKnowledge(agents, () => clock.now())
  const graph = new InMemoryGraph()
  const trajectories = new InMemoryTrajectories()
  const pools = new InMemoryPools()
  const formation = new InMemoryFormation(sessions, jobs)
  const summaries = new InMemorySummaries(jobs)
  const profiles = new InMemoryProfiles()
  const maintenance = new InMemoryMaintenance(sessions)
  // Retention counts from when Engram stored a conversation's turns (the clock), never their timestamps.
  const appendMessages = sessions.appendMessages.bind(sessions)
  sessions.appendMessages = async (session, messages) => {
    const result = await appendMessages(session, messages)
    maintenance.stored(session.id, clock.now())
    return result
  }
  // What an agent owns in these repositories goes with it, as the SQLite schema's cascades do.
  const deleteAgent = agents.delete
  agents.delete = async (id) => {
    const deleted = await deleteAgent(id)
    if (deleted)
      for (const owner of [
        agentRecords,
        memoryItems,
        knowledge,
        graph,
        trajectories,
        pools,
        formation,
        summaries,
        profiles,
        maintenance,
      ])
        owner.forgetAgent(id)
    return deleted
  }
  const optimizer = new InMemoryOptimizerRepository(repositories)
  const embeddings = new InMemoryEmbeddingRepository(vectors, jobs)
  summaries.embedWith(embeddings)
  return {
    name: 'in-memory',
    capabilities: { backup: false, multiProcess: false },
    unitOfWork: repositories,
    repositories: repositories.repositories,
    sessions,
    history: new InMemoryConversationHistory(sessions),
    fullText: new InMemoryFullTextIndex(),
    recall: new InMemoryRecallSources(),
    vectors,
    jobs,
    formation,
    embeddings,
    memoryItems: memoryItems.repository,
    knowledge: knowledge.repository,
    graph: graph.repository,
    trajectories: trajectories.repository,
    pools: pools.repository,
    privacyPolicies: agentRecords.privacyPolicies,
    apiKeys: agentRecords.apiKeys,
    optimizer,
    summaries,
    profiles,
    contextSources: new InMemoryContextSources(),
    maintenance,
    compaction: IN_MEMORY_COMPACTION,
    agentData: new InMemoryAgentData(repositories, optimizer, [
      { store: 'summaries', count: (agentId) => summaries.count(agentId) },
      { store: 'profile versions', count: (agentId) => profiles.countAll(agentId) },
      { store: 'graph entities', count: async (agentId) => graph.owned(agentId).entities },
      { store: 'graph relationships', count: async (agentId) => graph.owned(agentId).relationships },
      { store: 'graph evidence', count: async (agentId) => graph.owned(agentId).evidence },
      ...(
        ['runs', 'runSessions', 'trajectories', 'facts', 'selectors', 'hints', 'contributions'] as const
      ).map((kind) => ({
        store: `trajectory memory ${kind}`,
        count: async (agentId: string) => trajectories.owned(agentId)[kind],
      })),
      { store: 'pool memberships', count: async (agentId) => pools.owned(agentId).memberships },
      { store: 'pool contributions', count: async (agentId) => pools.owned(agentId).contributions },
    ]),
    close: async () => {},
  }
}
export { type OptimizerReplicaOptions, optimizerOnMemory } from './optimizer-on-memory.ts'

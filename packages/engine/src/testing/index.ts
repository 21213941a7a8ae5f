import { type Clock, InMemorySessionRepository } from '@engram/core'
import type { Storage } from '../ports/storage.ts'
import { InMemoryAgentRecords } from './in-memory-agent-records.ts'
import { InMemoryFullTextIndex } from './in-memory-full-text.ts'
import { InMemoryJobQueue } from './in-memory-job-queue.ts'
import { InMemoryKnowledge } from './in-memory-knowledge.ts'
import { InMemoryMemoryItems } from './in-memory-memory-items.ts'
import { InMemoryRepositories } from './in-memory-repositories.ts'
import { InMemoryVectorStore } from './in-memory-vector-store.ts'

export { InMemoryAgentRecords } from './in-memory-agent-records.ts'
export { InMemoryFullTextIndex } from './in-memory-full-text.ts'
export { InMemoryJobQueue } from './in-memory-job-queue.ts'
export { InMemoryKnowledge } from './in-memory-knowledge.ts'
export { InMemoryMemoryItems } from './in-memory-memory-items.ts'
export { InMemoryRepositories } from './in-memory-repositories.ts'
export { InMemoryVectorStore } from './in-memory-vector-store.ts'

/** Test-only storage: every port in memory, nothing persisted, one process. */
export interface InMemoryStorage extends Storage {
  fullText: InMemoryFullTextIndex
}

export function createInMemoryStorage(clock: Clock): InMemoryStorage {
  const repositories = new InMemoryRepositories(() => clock.now())
  const agents = repositories.repositories.agents
  const agentRecords = new InMemoryAgentRecords(agents, () => clock.now())
  const memoryItems = new InMemoryMemoryItems(agents)
  const knowledge = new InMemoryKnowledge(agents, () => clock.now())
  // What an agent owns in these repositories goes with it, as the SQLite schema's cascades do.
  const deleteAgent = agents.delete
  agents.delete = async (id) => {
    const deleted = await deleteAgent(id)
    if (deleted) for (const owner of [agentRecords, memoryItems, knowledge]) owner.forgetAgent(id)
    return deleted
  }
  return {
    name: 'in-memory',
    capabilities: { backup: false, multiProcess: false },
    unitOfWork: repositories,
    repositories: repositories.repositories,
    sessions: new InMemorySessionRepository(),
    fullText: new InMemoryFullTextIndex(),
    vectors: new InMemoryVectorStore(),
    jobs: new InMemoryJobQueue(clock),
    memoryItems: memoryItems.repository,
    knowledge: knowledge.repository,
    privacyPolicies: agentRecords.privacyPolicies,
    apiKeys: agentRecords.apiKeys,
    close: async () => {},
  }
}

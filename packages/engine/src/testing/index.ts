import { type Clock, InMemorySessionRepository } from '@engram/core'
import type { Storage } from '../ports/storage.ts'
import { InMemoryAgentData } from './in-memory-agent-data.ts'
import { InMemoryContextSources } from './in-memory-context-sources.ts'
import { InMemoryFullTextIndex } from './in-memory-full-text.ts'
import { InMemoryJobQueue } from './in-memory-job-queue.ts'
import { InMemoryOptimizerRepository } from './in-memory-optimizer.ts'
import { InMemoryRepositories } from './in-memory-repositories.ts'
import { InMemoryVectorStore } from './in-memory-vector-store.ts'

export { InMemoryAgentData } from './in-memory-agent-data.ts'
export { InMemoryContextSources } from './in-memory-context-sources.ts'
export { InMemoryFullTextIndex } from './in-memory-full-text.ts'
export { InMemoryJobQueue } from './in-memory-job-queue.ts'
export { InMemoryOptimizerRepository } from './in-memory-optimizer.ts'
export { InMemoryRepositories } from './in-memory-repositories.ts'
export { InMemoryVectorStore } from './in-memory-vector-store.ts'

/** Test-only storage: every port in memory, nothing persisted, one process. */
export interface InMemoryStorage extends Storage {
  fullText: InMemoryFullTextIndex
}

export function createInMemoryStorage(clock: Clock): InMemoryStorage {
  const repositories = new InMemoryRepositories(() => clock.now())
  const optimizer = new InMemoryOptimizerRepository(repositories)
  return {
    name: 'in-memory',
    capabilities: { backup: false, multiProcess: false },
    unitOfWork: repositories,
    repositories: repositories.repositories,
    sessions: new InMemorySessionRepository(),
    fullText: new InMemoryFullTextIndex(),
    vectors: new InMemoryVectorStore(),
    jobs: new InMemoryJobQueue(clock),
    optimizer,
    contextSources: new InMemoryContextSources(),
    agentData: new InMemoryAgentData(repositories, optimizer),
    close: async () => {},
  }
}

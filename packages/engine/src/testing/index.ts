import { type Clock, InMemorySessionRepository } from '@engram/core'
import type { Storage } from '../ports/storage.ts'
import { InMemoryConversationHistory } from './in-memory-conversation-history.ts'
import { InMemoryEmbeddingRepository } from './in-memory-embeddings.ts'
import { InMemoryFullTextIndex } from './in-memory-full-text.ts'
import { InMemoryJobQueue } from './in-memory-job-queue.ts'
import { InMemoryRecallSources } from './in-memory-recall-sources.ts'
import { InMemoryRepositories } from './in-memory-repositories.ts'
import { InMemoryVectorStore } from './in-memory-vector-store.ts'

export { InMemoryConversationHistory } from './in-memory-conversation-history.ts'
export { InMemoryEmbeddingRepository } from './in-memory-embeddings.ts'
export { InMemoryFullTextIndex } from './in-memory-full-text.ts'
export { InMemoryJobQueue } from './in-memory-job-queue.ts'
export { InMemoryRecallSources } from './in-memory-recall-sources.ts'
export { InMemoryRepositories } from './in-memory-repositories.ts'
export { InMemoryVectorStore } from './in-memory-vector-store.ts'

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
    embeddings: new InMemoryEmbeddingRepository(vectors, jobs),
    close: async () => {},
  }
}

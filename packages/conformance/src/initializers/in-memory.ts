import type { EmbeddingKind, FullTextCollection } from '@engram/engine'
import { createInMemoryStorage } from '@engram/engine/testing'
import { ManualClock, type StorageInitializer } from '../types.ts'

const EMBEDDING_KIND_OF: Record<FullTextCollection, EmbeddingKind> = {
  messages: 'message',
  memories: 'memory',
  knowledge: 'knowledge',
}

export const inMemoryInitializer: StorageInitializer = {
  name: 'in-memory',
  capabilities: { backup: false, multiProcess: false },
  async create() {
    const clock = new ManualClock()
    const storage = createInMemoryStorage(clock)
    let nextId = 1
    return {
      storage,
      clock,
      async addDocuments(collection, documents) {
        const withIds = documents.map((d) => ({ ...d, id: String(nextId++) }))
        storage.fullText.index(collection, withIds)
        // The in-memory store has no owner tables: the embedding repository is told of them.
        storage.embeddings.putOwners(
          EMBEDDING_KIND_OF[collection],
          withIds.map((d) => ({ id: Number(d.id), agentId: d.agentId, text: d.text })),
        )
        return withIds.map((d) => d.id)
      },
      openAnother: async () => null,
    }
  },
  async destroy(fixture) {
    await fixture.storage.close()
  },
}

import { createInMemoryStorage } from '@engram/engine/testing'
import { ManualClock, type StorageInitializer } from '../types.ts'

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
        return withIds.map((d) => d.id)
      },
      openAnother: async () => null,
    }
  },
  async destroy(fixture) {
    await fixture.storage.close()
  },
}

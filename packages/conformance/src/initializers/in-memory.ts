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
      async addTurns(agentId, conversationId, turns) {
        const sessionId = `${agentId}-${conversationId}`
        const ids: string[] = []
        for (const turn of turns) {
          const id = String(nextId++)
          storage.recall.addTurn(agentId, conversationId, {
            id,
            sessionId,
            role: 'user',
            speaker: turn.speaker ?? null,
            content: turn.content,
            tokenCount: turn.content.split(/\s+/).length,
            isCompressed: false,
            timestamp: turn.timestamp,
            metadata: {},
          })
          storage.fullText.index('messages', [
            {
              id,
              agentId,
              text: turn.content,
              sessionId,
              time: turn.timestamp.getTime(),
              speaker: turn.speaker ?? null,
            },
          ])
          ids.push(id)
        }
        return { sessionId, ids }
      },
      async addMemoryItems(agentId, items) {
        return items.map((item) => {
          const id = String(nextId++)
          storage.recall.addMemoryItem({
            id,
            agentId,
            userId: item.userId ?? null,
            content: item.content,
            category: 'fact',
            tags: item.tags ?? [],
            importance: item.importance ?? 0.5,
            confidence: 1,
            pinned: false,
            sourceConversationId: null,
            sourceMessageId: item.sourceMessageId ?? null,
            accessCount: 0,
            lastAccessedAt: null,
            validFrom: item.validFrom,
            validUntil: item.validUntil ?? null,
            supersededById: null,
            metadata: {},
            tokenCount: item.content.split(/\s+/).length,
            createdAt: item.createdAt,
            updatedAt: item.createdAt,
          })
          storage.fullText.index('memories', [{ id, agentId, text: item.content }])
          return id
        })
      },
      async addKnowledge(agentId, rows) {
        return rows.map((k) => {
          const id = nextId++
          storage.recall.addKnowledge({
            id,
            agentId,
            category: 'fact',
            key: k.key,
            value: k.value,
            confidence: k.confidence,
            storeCount: 1,
            useCount: 0,
            lastUsedAt: null,
            lastDecayAt: null,
            createdAt: k.updatedAt,
            updatedAt: k.updatedAt,
          })
          storage.fullText.index('knowledge', [{ id: String(id), agentId, text: `${k.key} ${k.value}` }])
          return String(id)
        })
      },
      openAnother: async () => null,
    }
  },
  async destroy(fixture) {
    await fixture.storage.close()
  },
}

import { describe, expect, it } from 'vitest'
import type { StorageInitializer } from '../types.ts'
import { useFixture } from './fixture.ts'

const v = (...values: number[]) => Float32Array.from(values)

/** The model the initializers' vector stores hold (createSqliteStorage's and the in-memory default). */
const MODEL = 'vector-store'
const OTHER_MODEL = 'another-model'

export function describeEmbeddings(initializer: StorageInitializer): void {
  describe(`${initializer.name}: embeddings`, () => {
    const fixture = useFixture(initializer)

    /** Memory items of two agents (a, a, b, a) and a message of agent a; returns their ids. */
    async function owners() {
      const { addDocuments } = fixture()
      const memories = await addDocuments('memories', [
        { agentId: 'agent-a', text: 'likes green tea' },
        { agentId: 'agent-a', text: 'lives in Hamburg' },
        { agentId: 'agent-b', text: 'plays the cello' },
        { agentId: 'agent-a', text: 'owns a kayak' },
      ])
      const messages = await addDocuments('messages', [{ agentId: 'agent-a', text: 'see you on sunday' }])
      return { memories: memories.map(Number), messages: messages.map(Number) }
    }

    it('reads owner texts with the hash of their current vector, and skips owners that do not exist', async () => {
      const { storage } = fixture()
      const { memories } = await owners()
      const [tea, hamburg, cello] = memories as [number, number, number, number]
      await storage.vectors.upsert('agent-a', 'memory', [
        { id: String(tea), vector: v(1, 0), contentHash: 'h-tea' },
      ])
      const texts = await storage.embeddings.ownerTexts('memory', MODEL, [tea, hamburg, cello, 999_999])
      const byId = new Map(texts.map((t) => [t.id, t]))
      expect(byId.size).toBe(3)
      expect(byId.get(tea)).toEqual({
        id: tea,
        agentId: 'agent-a',
        text: 'likes green tea',
        embeddedHash: 'h-tea',
      })
      expect(byId.get(hamburg)?.embeddedHash).toBeNull()
      expect(byId.get(cello)).toMatchObject({ agentId: 'agent-b', text: 'plays the cello' })
      // Another model's vector is not this one's.
      expect((await storage.embeddings.ownerTexts('memory', OTHER_MODEL, [tea]))[0]?.embeddedHash).toBeNull()
    })

    it('lists owners still missing a vector in id order, by agent or all, paged by the last id', async () => {
      const { storage } = fixture()
      const { memories, messages } = await owners()
      const [tea, hamburg, cello, kayak] = memories as [number, number, number, number]
      await storage.vectors.upsert('agent-a', 'memory', [
        { id: String(hamburg), vector: v(1, 0), contentHash: 'h' },
      ])
      const ofA = await storage.embeddings.missing('agent-a', 'memory', MODEL, 10, 0)
      expect(ofA).toEqual([
        { id: tea, agentId: 'agent-a', text: 'likes green tea' },
        { id: kayak, agentId: 'agent-a', text: 'owns a kayak' },
      ])
      expect((await storage.embeddings.missing(null, 'memory', MODEL, 10, 0)).map((o) => o.id)).toEqual([
        tea,
        cello,
        kayak,
      ])
      expect((await storage.embeddings.missing(null, 'memory', MODEL, 1, tea)).map((o) => o.id)).toEqual([
        cello,
      ])
      expect((await storage.embeddings.missing('agent-a', 'message', MODEL, 10, 0)).map((o) => o.id)).toEqual(
        messages,
      )
      expect(await storage.embeddings.missing('agent-b', 'knowledge', MODEL, 10, 0)).toEqual([])
    })

    it('counts owners and those with a vector of the model, per agent and in all', async () => {
      const { storage } = fixture()
      const { memories } = await owners()
      const [tea, , cello] = memories as [number, number, number, number]
      await storage.vectors.upsert('agent-a', 'memory', [{ id: String(tea), vector: v(1, 0) }])
      await storage.vectors.upsert('agent-b', 'memory', [{ id: String(cello), vector: v(1, 0) }])
      expect(await storage.embeddings.coverage('agent-a', 'memory', MODEL)).toEqual({ total: 3, embedded: 1 })
      expect(await storage.embeddings.coverage(null, 'memory', MODEL)).toEqual({ total: 4, embedded: 2 })
      expect(await storage.embeddings.coverage(null, 'memory', OTHER_MODEL)).toEqual({
        total: 4,
        embedded: 0,
      })
      expect(await storage.embeddings.coverage('agent-b', 'message', MODEL)).toEqual({
        total: 0,
        embedded: 0,
      })
    })

    it('queues one job per owner without a vector, once, and counts the jobs by kind of owner', async () => {
      const { storage } = fixture()
      const { memories, messages } = await owners()
      const [tea] = memories as [number, number, number, number]
      await storage.vectors.upsert('agent-a', 'memory', [{ id: String(tea), vector: v(1, 0) }])
      expect(await storage.embeddings.queueMissing('agent-a', MODEL, 'embed')).toBe(3)
      // Already pending: not queued again.
      expect(await storage.embeddings.queueMissing('agent-a', MODEL, 'embed')).toBe(0)
      expect(await storage.embeddings.queueMissing(null, MODEL, 'embed')).toBe(1)
      const counts = await storage.jobs.countByPayload('embed', 'kind', 'agent-a')
      expect(counts.sort((a, b) => a.value.localeCompare(b.value))).toEqual([
        { value: 'memory', state: 'pending', count: 2 },
        { value: 'message', state: 'pending', count: 1 },
      ])
      const claimed = await storage.jobs.claim('embed', 'worker-1', { limit: 10, leaseMs: 60_000 })
      const message = claimed.find((job) => job.key === `message:${messages[0]}`)
      expect(message).toMatchObject({
        agentId: 'agent-a',
        payload: { kind: 'message', ownerId: messages[0] },
      })
      expect(claimed).toHaveLength(4)
    })

    it("keeps each agent's cache to itself and to its model, and ignores a second vector for a hash", async () => {
      const { storage, clock } = fixture()
      for (const id of ['agent-a', 'agent-b']) await storage.repositories.agents.upsert(id, null)
      const at = clock.now()
      await storage.embeddings.cache([
        { agentId: 'agent-a', model: MODEL, contentHash: 'h1', vector: v(1, 0), createdAt: at },
        { agentId: 'agent-b', model: MODEL, contentHash: 'h1', vector: v(0, 1), createdAt: at },
        { agentId: 'agent-a', model: OTHER_MODEL, contentHash: 'h2', vector: v(0, 1), createdAt: at },
      ])
      await storage.embeddings.cache([
        { agentId: 'agent-a', model: MODEL, contentHash: 'h1', vector: v(5, 5), createdAt: at },
      ])
      const cached = await storage.embeddings.cached('agent-a', MODEL, ['h1', 'h2', 'h3'])
      expect(cached).toHaveLength(1)
      expect(cached[0]).toMatchObject({ agentId: 'agent-a', model: MODEL, contentHash: 'h1' })
      expect([...(cached[0]?.vector ?? [])]).toEqual([1, 0])
      expect((await storage.embeddings.cached('agent-b', MODEL, ['h1']))[0]?.vector[1]).toBe(1)
      expect(await storage.embeddings.cached('agent-c', MODEL, ['h1'])).toEqual([])
    })

    it("tells whether other models' vectors are stored, and removes them", async () => {
      const { storage } = fixture()
      const { memories } = await owners()
      expect(await storage.embeddings.hasOtherModels(OTHER_MODEL)).toBe(false)
      await storage.vectors.upsert('agent-a', 'memory', [{ id: String(memories[0]), vector: v(1, 0) }])
      expect(await storage.embeddings.hasOtherModels(MODEL)).toBe(false)
      expect(await storage.embeddings.removeOtherModels(MODEL)).toBe(0)
      // Seen from a provider with another model, the stored vectors are the other ones.
      expect(await storage.embeddings.hasOtherModels(OTHER_MODEL)).toBe(true)
      expect(await storage.embeddings.removeOtherModels(OTHER_MODEL)).toBe(1)
      expect(await storage.vectors.count('agent-a', 'memory')).toBe(0)
    })
  })
}

import { type Clock, createTokenCounter, ValidationError } from '@engram/core'
import { describe, expect, it } from 'vitest'
import { createEngine } from './engine.ts'
import { InProcessEventBus } from './events/in-process-event-bus.ts'
import { createInMemoryStorage } from './testing/index.ts'

const clock: Clock = { now: () => new Date('2026-01-15T10:00:00.000Z') }

function engineOnMemory() {
  const storage = createInMemoryStorage(clock)
  return createEngine({ storage, clock, tokenCounter: createTokenCounter(), log: console })
}

describe('createEngine on the in-memory storage', () => {
  it('keeps learned parameters per agent and falls back to the defaults when a stored one is out of range', async () => {
    const engine = engineOnMemory()
    await engine.storage.repositories.agents.upsert('a', null)
    await engine.storage.repositories.agents.upsert('b', null)
    const defaults = await engine.parameters.load('a')
    await engine.parameters.save('a', { ...defaults, minRelevance: 0.42 })
    expect((await engine.parameters.load('a')).minRelevance).toBe(0.42)
    expect((await engine.parameters.load('b')).minRelevance).toBe(defaults.minRelevance)
    await engine.storage.repositories.parameters.put('b', 'minRelevance', 99)
    expect(await engine.parameters.load('b')).toEqual(defaults)
  })

  it('counts optimizer runs inside the transaction they belong to, and forgets them on rollback', async () => {
    const engine = engineOnMemory()
    await engine.storage.repositories.agents.upsert('a', null)
    await engine.storage.unitOfWork.transaction((tx) => engine.parameters.addRun('a', 120, tx.parameters))
    await expect(
      engine.storage.unitOfWork.transaction(async (tx) => {
        await engine.parameters.addRun('a', 50, tx.parameters)
        throw new Error('the snapshot could not be written')
      }),
    ).rejects.toThrow('snapshot')
    expect(await engine.parameters.totals('a')).toEqual({ totalOptimizations: 1, totalTokensSaved: 120 })
  })

  it("searches an agent's entry vectors and rejects a vector of other dimensions by field and size", async () => {
    const engine = engineOnMemory()
    const { agents, memoryEntries } = engine.storage.repositories
    await agents.upsert('a', null)
    const entry = (content: string) =>
      memoryEntries.create('a', {
        type: 'short_term',
        role: 'user',
        content,
        tokenCount: 3,
        relevance: 1,
        timestamp: clock.now(),
      })
    const north = await entry('north')
    const east = await entry('east')
    await engine.memory.upsertEmbedding('a', north.id, [1, 0, 0])
    await engine.memory.upsertEmbedding('a', east.id, [0, 1, 0])
    const hits = await engine.memory.searchByVector('a', [0.9, 0.1, 0], 2)
    expect(hits.map((hit) => hit.entry.content)).toEqual(['north', 'east'])
    const error = await engine.memory.upsertEmbedding('a', east.id, [1, 0]).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ValidationError)
    expect((error as ValidationError).issues[0]).toMatchObject({ field: 'vector', limit: 3 })
    expect(await engine.memory.searchByVector('b', [1, 0, 0], 2)).toEqual([])
  })
})

describe('InProcessEventBus', () => {
  it('delivers each event to every subscriber in order, and forgets a subscriber that stopped', async () => {
    const bus = new InProcessEventBus()
    const first = bus.subscribe('cache:invalidate')[Symbol.asyncIterator]()
    const second = bus.subscribe('cache:invalidate')[Symbol.asyncIterator]()
    bus.publish('cache:invalidate', { agentId: 'a' })
    bus.publish('cache:invalidate', { agentId: null })
    expect((await first.next()).value).toEqual({ agentId: 'a' })
    expect((await first.next()).value).toEqual({ agentId: null })
    expect((await second.next()).value).toEqual({ agentId: 'a' })
    await first.return?.()
    expect(bus.subscriberCount('cache:invalidate')).toBe(1)
    await second.return?.()
    expect(bus.subscriberCount('cache:invalidate')).toBe(0)
  })
})

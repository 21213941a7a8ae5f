import { NotFoundError } from '@engram/core'
import { describe, expect, it } from 'vitest'
import type { StorageInitializer } from '../types.ts'
import { useFixture } from './fixture.ts'

const entry = (content: string, timestamp: Date, sessionId: string | null = null) => ({
  type: 'short_term' as const,
  role: 'user' as const,
  content,
  tokenCount: 2,
  relevance: 0.5,
  timestamp,
  sessionId,
  metadata: { source: 'conformance' },
})

export function describeRepositories(initializer: StorageInitializer): void {
  describe(`${initializer.name}: repositories`, () => {
    const fixture = useFixture(initializer)

    it('stores, finds, updates and deletes memory entries of one agent, oldest first', async () => {
      const { storage, clock } = fixture()
      const { agents, memoryEntries } = storage.repositories
      await agents.upsert('agent-a', 'Agent A')
      const later = await memoryEntries.create(
        'agent-a',
        entry('later', new Date(clock.now().getTime() + 1_000)),
      )
      const first = await memoryEntries.create('agent-a', entry('first', clock.now()))
      expect((await memoryEntries.list('agent-a', null)).map((e) => e.content)).toEqual(['first', 'later'])
      expect(await memoryEntries.find('agent-a', first.id)).toMatchObject({
        content: 'first',
        agentId: 'agent-a',
        metadata: { source: 'conformance' },
      })
      const promoted = await memoryEntries.update('agent-a', later.id, { type: 'long_term', relevance: 1 })
      expect(promoted).toMatchObject({ type: 'long_term', relevance: 1, content: 'later' })
      await memoryEntries.delete('agent-a', first.id)
      expect(await memoryEntries.find('agent-a', first.id)).toBeNull()
      expect(await memoryEntries.findMany('agent-a', [first.id, later.id, 'not-an-id'])).toHaveLength(1)
    })

    it("never hands one agent another agent's entry, by id or in a list", async () => {
      const { storage, clock } = fixture()
      const { agents, memoryEntries } = storage.repositories
      await agents.upsert('agent-a', null)
      await agents.upsert('agent-b', null)
      const secret = await memoryEntries.create('agent-b', entry('b only', clock.now()))
      expect(await memoryEntries.find('agent-a', secret.id)).toBeNull()
      expect(await memoryEntries.findMany('agent-a', [secret.id])).toEqual([])
      expect(await memoryEntries.list('agent-a', null)).toEqual([])
      await expect(memoryEntries.update('agent-a', secret.id, { relevance: 0 })).rejects.toBeInstanceOf(
        NotFoundError,
      )
      await expect(memoryEntries.delete('agent-a', secret.id)).rejects.toBeInstanceOf(NotFoundError)
      expect((await memoryEntries.find('agent-b', secret.id))?.relevance).toBe(0.5)
    })

    it('keeps parameters per agent and deletes what an agent owns with it', async () => {
      const { storage, clock } = fixture()
      const { agents, memoryEntries, parameters } = storage.repositories
      await agents.upsert('agent-a', null)
      await agents.upsert('agent-b', null)
      await parameters.put('agent-a', 'minRelevance', 0.3)
      await parameters.put('agent-a', 'minRelevance', 0.4)
      await parameters.put('agent-b', 'minRelevance', 0.9)
      expect(await parameters.values('agent-a')).toEqual(new Map([['minRelevance', 0.4]]))
      expect(await parameters.values('agent-a', ['other'])).toEqual(new Map())
      const kept = await memoryEntries.create('agent-a', entry('kept?', clock.now()))
      await memoryEntries.upsertVector('agent-a', kept.id, Float32Array.from([1, 0]))
      expect(await agents.delete('agent-a')).toBe(true)
      expect(await agents.delete('agent-a')).toBe(false)
      expect(await agents.find('agent-a')).toBeNull()
      expect(await memoryEntries.find('agent-a', kept.id)).toBeNull()
      expect(await memoryEntries.vectors('agent-a')).toEqual([])
      expect(await parameters.values('agent-a')).toEqual(new Map())
      expect(await parameters.values('agent-b')).toEqual(new Map([['minRelevance', 0.9]]))
    })

    it('renames an agent only when a name is given', async () => {
      const { agents } = fixture().storage.repositories
      expect((await agents.upsert('agent-a', null)).name).toBe('agent-a')
      expect((await agents.upsert('agent-a', 'Alice')).name).toBe('Alice')
      expect((await agents.upsert('agent-a', null)).name).toBe('Alice')
    })
  })
}

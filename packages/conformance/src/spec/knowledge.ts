import { NotFoundError } from '@engram/core'
import type { NewKnowledge } from '@engram/engine'
import { describe, expect, it } from 'vitest'
import type { StorageInitializer } from '../types.ts'
import { useFixture } from './fixture.ts'

const fact = (key: string, value: string, confidence: number, createdAt: Date): NewKnowledge => ({
  category: 'domain',
  key,
  value,
  confidence,
  createdAt,
})

export function describeKnowledge(initializer: StorageInitializer): void {
  describe(`${initializer.name}: knowledge`, () => {
    const fixture = useFixture(initializer)

    it('stores a fact, finds it by id and by (category, key), counts stores and uses', async () => {
      const { storage, clock } = fixture()
      const { knowledge } = storage
      await storage.repositories.agents.upsert('agent-a', null)
      const created = await knowledge.create(
        'agent-a',
        fact('example.com', 'login at /sso', 0.5, clock.now()),
      )
      expect(created).toMatchObject({
        agentId: 'agent-a',
        category: 'domain',
        key: 'example.com',
        value: 'login at /sso',
        confidence: 0.5,
        storeCount: 1,
        useCount: 0,
        lastUsedAt: null,
        lastDecayAt: null,
      })
      expect(created.createdAt.getTime()).toBe(clock.now().getTime())
      expect(await knowledge.find('agent-a', created.id)).toMatchObject({ key: 'example.com' })
      expect(await knowledge.findByKey('agent-a', 'domain', 'example.com')).toMatchObject({ id: created.id })
      expect(await knowledge.findByKey('agent-a', 'user_preference', 'example.com')).toBeNull()
      const again = await knowledge.restore('agent-a', created.id, 'login at /auth', 0.6)
      expect(again).toMatchObject({ value: 'login at /auth', confidence: 0.6, storeCount: 2 })
      const at = new Date(clock.now().getTime() + 60_000)
      const used = await knowledge.recordUse('agent-a', created.id, 0.65, at)
      expect(used).toMatchObject({ confidence: 0.65, useCount: 1 })
      expect(used.lastUsedAt?.getTime()).toBe(at.getTime())
      const changed = await knowledge.update('agent-a', created.id, {
        category: 'website_knowledge',
        value: 'v2',
      })
      expect(changed).toMatchObject({ category: 'website_knowledge', key: 'example.com', value: 'v2' })
      await knowledge.delete('agent-a', created.id)
      expect(await knowledge.find('agent-a', created.id)).toBeNull()
      await expect(knowledge.delete('agent-a', created.id)).rejects.toBeInstanceOf(NotFoundError)
    })

    it("never reaches another agent's fact, by id, key or list", async () => {
      const { storage, clock } = fixture()
      const { knowledge } = storage
      await storage.repositories.agents.upsert('agent-a', null)
      await storage.repositories.agents.upsert('agent-b', null)
      const secret = await knowledge.create('agent-b', fact('secret', 'b only', 0.9, clock.now()))
      expect(await knowledge.find('agent-a', secret.id)).toBeNull()
      expect(await knowledge.find('agent-a', 'not-an-id')).toBeNull()
      expect(await knowledge.findByKey('agent-a', 'domain', 'secret')).toBeNull()
      expect(await knowledge.existing('agent-a', [secret.id])).toEqual([])
      expect(await knowledge.confident('agent-a', 0)).toEqual([])
      expect(await knowledge.count('agent-a', {})).toBe(0)
      await expect(knowledge.update('agent-a', secret.id, { value: 'x' })).rejects.toBeInstanceOf(
        NotFoundError,
      )
      await expect(knowledge.recordUse('agent-a', secret.id, 1, clock.now())).rejects.toBeInstanceOf(
        NotFoundError,
      )
      expect(await knowledge.deleteMany('agent-a', [secret.id])).toBe(0)
      expect((await knowledge.find('agent-b', secret.id))?.value).toBe('b only')
      // A null agent is an admin's view of every agent.
      expect(await knowledge.existing(null, [secret.id, '999999'])).toEqual([secret.id])
      expect(await knowledge.count(null, {})).toBe(1)
    })

    it('lists by a query in the order asked, and pages', async () => {
      const { storage, clock } = fixture()
      const { knowledge } = storage
      await storage.repositories.agents.upsert('agent-a', null)
      const low = await knowledge.create('agent-a', fact('alpha', 'first value', 0.2, clock.now()))
      const high = await knowledge.create('agent-a', fact('beta', 'second value', 0.9, clock.now()))
      const mid = await knowledge.create('agent-a', {
        ...fact('gamma', 'third', 0.5, clock.now()),
        category: 'user_preference',
      })
      await knowledge.recordUse('agent-a', low.id, 0.2, new Date(clock.now().getTime() + 1_000))
      const ids = (rows: { id: string }[]) => rows.map((r) => r.id)
      expect(ids(await knowledge.page('agent-a', {}, 'confidence', 0, 10))).toEqual([high.id, mid.id, low.id])
      expect(ids(await knowledge.page('agent-a', {}, 'confidence', 1, 1))).toEqual([mid.id])
      // Never used last; ties by id.
      expect(ids(await knowledge.page('agent-a', {}, 'lastUsedAt', 0, 10))).toEqual([low.id, high.id, mid.id])
      expect(ids(await knowledge.page('agent-a', {}, 'useCount', 0, 10))).toEqual([low.id, high.id, mid.id])
      expect(await knowledge.count('agent-a', { category: 'domain' })).toBe(2)
      expect(await knowledge.count('agent-a', { minConfidence: 0.5 })).toBe(2)
      expect(ids(await knowledge.page('agent-a', { search: 'value' }, 'confidence', 0, 10))).toEqual([
        high.id,
        low.id,
      ])
      expect(ids(await knowledge.page('agent-a', { search: 'gam' }, 'confidence', 0, 10))).toEqual([mid.id])
      expect(ids(await knowledge.confident('agent-a', 0.5)).sort()).toEqual([high.id, mid.id].sort())
    })

    it('rolls a transaction back when it throws, and deletes many at once', async () => {
      const { storage, clock } = fixture()
      const { knowledge } = storage
      await storage.repositories.agents.upsert('agent-a', null)
      const kept = await knowledge.create('agent-a', fact('kept', 'v', 0.5, clock.now()))
      await expect(
        knowledge.transaction(async (tx) => {
          await tx.create('agent-a', fact('rolled-back', 'v', 0.5, clock.now()))
          await tx.restore('agent-a', kept.id, 'changed', 0.9)
          throw new Error('abort')
        }),
      ).rejects.toThrow('abort')
      expect(await knowledge.findByKey('agent-a', 'domain', 'rolled-back')).toBeNull()
      expect((await knowledge.find('agent-a', kept.id))?.value).toBe('v')
      const other = await knowledge.create('agent-a', fact('other', 'v', 0.5, clock.now()))
      expect((await knowledge.existing('agent-a', [kept.id, other.id])).sort()).toEqual(
        [kept.id, other.id].sort(),
      )
      expect(await knowledge.deleteMany('agent-a', [kept.id, other.id])).toBe(2)
      expect(await knowledge.count('agent-a', {})).toBe(0)
      await storage.repositories.agents.upsert('agent-b', null)
      await knowledge.create('agent-b', fact('goes', 'with its agent', 0.5, clock.now()))
      await storage.repositories.agents.delete('agent-b')
      expect(await knowledge.count(null, {})).toBe(0)
    })
  })
}

import type { PoolMemberRecord } from '@engram/engine'
import { describe, expect, it } from 'vitest'
import type { StorageInitializer } from '../types.ts'
import { useFixture } from './fixture.ts'

// Shared memory pools (issue 17): the PoolRepository port. Members and contribution records go
// with their pool and with their agent (the schema's cascades; the in-memory adapter's copy).

export function describePools(initializer: StorageInitializer): void {
  describe(`${initializer.name}: shared memory pools`, () => {
    const fixture = useFixture(initializer)

    const seed = async () => {
      const { storage, clock } = fixture()
      for (const id of ['agent-a', 'agent-b', 'pool:p1']) await storage.repositories.agents.upsert(id, null)
      const at = clock.now()
      const member = (agentId: string, role: PoolMemberRecord['role']): PoolMemberRecord => ({
        poolId: 'p1',
        agentId,
        role,
        addedAt: at,
      })
      const created = await storage.pools.create(
        { id: 'p1', name: 'technical-docs', description: null, createdAt: at },
        [member('agent-a', 'CONTRIBUTOR'), member('agent-b', 'READER')],
      )
      expect(created).toMatchObject({ id: 'p1', name: 'technical-docs' })
      return { storage, at, member }
    }

    it('creates a pool with its members; a taken name is null (no pool, no members written)', async () => {
      const { storage, at } = await seed()
      const { pools } = storage
      expect((await pools.find('p1'))?.createdAt.getTime()).toBe(at.getTime())
      expect(await pools.findByName('technical-docs')).toMatchObject({ id: 'p1' })
      expect((await pools.members('p1')).map((m) => [m.agentId, m.role])).toEqual([
        ['agent-a', 'CONTRIBUTOR'],
        ['agent-b', 'READER'],
      ])
      const taken = await pools.create(
        { id: 'p2', name: 'technical-docs', description: 'x', createdAt: at },
        [{ poolId: 'p2', agentId: 'agent-a', role: 'READER', addedAt: at }],
      )
      expect(taken).toBeNull()
      expect(await pools.find('p2')).toBeNull()
      expect((await pools.membershipsOf('agent-a')).map((m) => m.poolId)).toEqual(['p1'])
    })

    it('renames (null for a taken name), lists by name, and changes a role keeping when the agent joined', async () => {
      const { storage, at } = await seed()
      const { pools } = storage
      await pools.create({ id: 'p0', name: 'alpha', description: null, createdAt: at }, [])
      expect((await pools.list()).map((p) => p.name)).toEqual(['alpha', 'technical-docs'])
      expect(await pools.update('p0', { name: 'technical-docs' })).toBeNull()
      expect(await pools.update('p0', { name: 'zeta', description: 'last' })).toMatchObject({
        name: 'zeta',
        description: 'last',
      })
      expect((await pools.listByIds(['p1', 'p0', 'nope'])).map((p) => p.id)).toEqual(['p1', 'p0'])
      const later = new Date(at.getTime() + 60_000)
      const promoted = await pools.putMember({
        poolId: 'p1',
        agentId: 'agent-b',
        role: 'CONTRIBUTOR',
        addedAt: later,
      })
      expect(promoted.role).toBe('CONTRIBUTOR')
      expect(promoted.addedAt.getTime()).toBe(at.getTime())
      expect(await pools.removeMember('p1', 'agent-b')).toBe(true)
      expect(await pools.removeMember('p1', 'agent-b')).toBe(false)
      expect(await pools.membership('p1', 'agent-b')).toBeNull()
    })

    it('records contributions by source agent; a deleted agent takes its memberships and records with it', async () => {
      const { storage, at } = await seed()
      const { pools } = storage
      await pools.recordContribution({
        poolId: 'p1',
        memoryId: '1',
        sourceAgentId: 'agent-a',
        contributedAt: at,
      })
      await pools.recordContribution({
        poolId: 'p1',
        memoryId: '2',
        sourceAgentId: 'agent-b',
        contributedAt: at,
      })
      expect(
        (await pools.contributionsTo('p1', ['1', '2', '3'])).map((c) => [c.memoryId, c.sourceAgentId]).sort(),
      ).toEqual([
        ['1', 'agent-a'],
        ['2', 'agent-b'],
      ])
      expect((await pools.contributionsBy('agent-a', null)).map((c) => c.memoryId)).toEqual(['1'])
      expect(await pools.contributionsBy('agent-a', 'other')).toEqual([])
      await storage.repositories.agents.delete('agent-a')
      expect(await pools.membership('p1', 'agent-a')).toBeNull()
      expect(await pools.contributionsBy('agent-a', null)).toEqual([])
      expect((await pools.contributionsTo('p1', ['2'])).length).toBe(1)
      await pools.forgetContribution('p1', '2')
      expect(await pools.contributionsTo('p1', ['2'])).toEqual([])
    })

    it('deletes a pool with its members and records', async () => {
      const { storage, at } = await seed()
      const { pools } = storage
      await pools.recordContribution({
        poolId: 'p1',
        memoryId: '1',
        sourceAgentId: 'agent-a',
        contributedAt: at,
      })
      expect(await pools.delete('p1')).toBe(true)
      expect(await pools.delete('p1')).toBe(false)
      expect(await pools.find('p1')).toBeNull()
      expect(await pools.membershipsOf('agent-a')).toEqual([])
      expect(await pools.contributionsBy('agent-a', null)).toEqual([])
    })
  })
}

import { describe, expect, it } from 'vitest'
import type { StorageInitializer } from '../types.ts'
import { useFixture } from './fixture.ts'

const key = (id: string, hash: string) => ({
  id,
  label: `label ${id}`,
  keyHash: hash,
  keyPrefix: `engram_${id}`,
})

export function describeAgentRecords(initializer: StorageInitializer): void {
  describe(`${initializer.name}: privacy policies and API keys`, () => {
    const fixture = useFixture(initializer)

    it('keeps each agent its own privacy policy, redact by default, none for an unknown agent', async () => {
      const { storage } = fixture()
      const { agents } = storage.repositories
      await agents.upsert('agent-a', null)
      await agents.upsert('agent-b', null)
      expect(await storage.privacyPolicies.find('agent-a')).toEqual({ mode: 'redact', patterns: [] })
      const patterns = [{ name: 'employee_id', pattern: 'EMP-\\d{6}' }]
      await storage.privacyPolicies.save('agent-a', { mode: 'reject', patterns })
      expect(await storage.privacyPolicies.find('agent-a')).toEqual({ mode: 'reject', patterns })
      expect(await storage.privacyPolicies.find('agent-b')).toEqual({ mode: 'redact', patterns: [] })
      expect(await storage.privacyPolicies.find('nobody')).toBeNull()
      await agents.delete('agent-a')
      expect(await storage.privacyPolicies.find('agent-a')).toBeNull()
    })

    it('issues an agent key creating the agent, finds it by hash, revokes it', async () => {
      const { storage, clock } = fixture()
      const issued = await storage.apiKeys.issueForAgent('agent-new', key('k1', 'hash-1'))
      expect(issued).toMatchObject({
        id: 'k1',
        agentId: 'agent-new',
        role: 'AGENT',
        label: 'label k1',
        keyHash: 'hash-1',
        keyPrefix: 'engram_k1',
        revokedAt: null,
      })
      expect(issued.createdAt).toBeInstanceOf(Date)
      expect((await storage.repositories.agents.find('agent-new'))?.name).toBe('agent-new')
      expect(await storage.apiKeys.findByHash('hash-1')).toMatchObject({ id: 'k1', agentId: 'agent-new' })
      expect(await storage.apiKeys.findByHash('hash-unknown')).toBeNull()
      const at = clock.now()
      expect((await storage.apiKeys.revoke('k1', at)).revokedAt?.getTime()).toBe(at.getTime())
      expect((await storage.apiKeys.findByHash('hash-1'))?.revokedAt?.getTime()).toBe(at.getTime())
      expect((await storage.apiKeys.find('k1'))?.revokedAt?.getTime()).toBe(at.getTime())
      expect(await storage.apiKeys.find('k-unknown')).toBeNull()
    })

    it('counts active admin keys, and a configured admin key put again is active again', async () => {
      const { storage, clock } = fixture()
      expect(await storage.apiKeys.countActiveAdmins()).toBe(0)
      const admin = await storage.apiKeys.putAdmin(key('a1', 'admin-hash'))
      expect(admin).toMatchObject({ role: 'ADMIN', agentId: null })
      await storage.apiKeys.putAdmin(key('a2', 'admin-hash-2'))
      expect(await storage.apiKeys.countActiveAdmins()).toBe(2)
      expect(await storage.apiKeys.countActiveAdmins('a1')).toBe(1)
      await storage.apiKeys.revoke('a1', clock.now())
      expect(await storage.apiKeys.countActiveAdmins()).toBe(1)
      // The same hash again (a restart with ENGRAM_ADMIN_KEY): the stored key, un-revoked.
      const again = await storage.apiKeys.putAdmin(key('a3', 'admin-hash'))
      expect(again).toMatchObject({ id: 'a1', revokedAt: null })
      expect(await storage.apiKeys.countActiveAdmins()).toBe(2)
    })

    it('lists agents by id, and keys of one agent or all, oldest first', async () => {
      const { storage, clock } = fixture()
      const { agents } = storage.repositories
      await agents.upsert('agent-b', 'Bee')
      await agents.upsert('agent-a', null)
      expect((await agents.list()).map((a) => [a.id, a.name])).toEqual([
        ['agent-a', 'agent-a'],
        ['agent-b', 'Bee'],
      ])
      await storage.apiKeys.issueForAgent('agent-b', key('k1', 'hash-1'))
      clock.advance(1_000)
      await storage.apiKeys.putAdmin(key('admin', 'admin-hash'))
      clock.advance(1_000)
      await storage.apiKeys.issueForAgent('agent-b', key('k2', 'hash-2'))
      await storage.apiKeys.issueForAgent('agent-a', key('k3', 'hash-3'))
      expect((await storage.apiKeys.list('agent-b')).map((k) => k.id)).toEqual(['k1', 'k2'])
      expect((await storage.apiKeys.list(null)).map((k) => k.id).sort()).toEqual(['admin', 'k1', 'k2', 'k3'])
      expect(await storage.apiKeys.list('nobody')).toEqual([])
    })

    it("deletes an agent's keys with it", async () => {
      const { storage } = fixture()
      await storage.apiKeys.issueForAgent('agent-a', key('k1', 'hash-1'))
      await storage.apiKeys.issueForAgent('agent-b', key('k2', 'hash-2'))
      await storage.repositories.agents.delete('agent-a')
      expect(await storage.apiKeys.find('k1')).toBeNull()
      expect(await storage.apiKeys.findByHash('hash-2')).toMatchObject({ agentId: 'agent-b' })
      await expect(storage.privacyPolicies.save('agent-a', { mode: 'allow', patterns: [] })).rejects.toThrow()
    })

    it('refuses to save a policy for an agent that does not exist', async () => {
      const { storage } = fixture()
      await expect(storage.privacyPolicies.save('nobody', { mode: 'allow', patterns: [] })).rejects.toThrow()
    })
  })
}

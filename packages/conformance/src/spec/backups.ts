import { ValidationError } from '@engram/core'
import { describe, expect, it } from 'vitest'
import type { StorageInitializer } from '../types.ts'
import { useFixture } from './fixture.ts'

const memory = (content: string, createdAt: Date) => ({
  content,
  category: 'fact',
  tags: [],
  importance: 0.5,
  confidence: 1,
  pinned: false,
  userId: null,
  sourceConversationId: null,
  sourceMessageId: null,
  accessCount: 0,
  lastAccessedAt: null,
  validFrom: createdAt,
  validUntil: null,
  metadata: {},
  contentHash: `hash-${content}`,
  tokenCount: 2,
  createdAt,
  updatedAt: createdAt,
})

export function describeBackups(initializer: StorageInitializer): void {
  describe(`${initializer.name}: backups`, () => {
    const fixture = useFixture(initializer)

    if (!initializer.capabilities.backup) {
      it('declares no backup store, and hands none out', () => {
        const { storage } = fixture()
        expect(storage.capabilities.backup).toBe(false)
        expect(storage.backups).toBeUndefined()
      })
      return
    }

    const contents = async (storage: ReturnType<typeof fixture>['storage'], agentId: string) =>
      (
        await storage.repositories.archive.read(agentId, { vectorModel: 'none', includeSnapshots: false })
      )?.memories.map((m) => m.content) ?? null

    it('lists the backups it made, newest first, and restores one: later changes are gone', async () => {
      const { storage, clock } = fixture()
      const backups = storage.backups
      if (!backups) throw new Error('the adapter declares backups but hands out no store')
      expect(storage.capabilities.backup).toBe(true)
      expect(await backups.list()).toEqual([])
      await storage.repositories.agents.upsert('agent-a', null)
      await storage.repositories.archive.addMemories('agent-a', [memory('kept by the backup', clock.now())])
      const first = await backups.create()
      expect(first.bytes).toBeGreaterThan(0)
      expect(first.createdAt).toEqual(clock.now())
      clock.advance(60_000)
      await storage.repositories.archive.addMemories('agent-a', [memory('written after', clock.now())])
      await storage.repositories.agents.upsert('agent-later', null)
      const second = await backups.create()
      expect(second.name).not.toBe(first.name)
      expect((await backups.list()).map((b) => b.name)).toEqual([second.name, first.name])

      expect(await backups.restore(first.name)).toMatchObject({ name: first.name })
      expect(await contents(storage, 'agent-a')).toEqual(['kept by the backup'])
      expect(await storage.repositories.agents.find('agent-later')).toBeNull()
      // Restoring the later one brings its rows back: a restore replaces, it does not merge.
      await backups.restore(second.name)
      expect(await contents(storage, 'agent-a')).toEqual(['kept by the backup', 'written after'])
    })

    it('names two backups of the same instant apart', async () => {
      const { storage } = fixture()
      const backups = storage.backups
      if (!backups) throw new Error('no backup store')
      const one = await backups.create()
      const two = await backups.create()
      expect(two.name).not.toBe(one.name)
      expect(await backups.list()).toHaveLength(2)
    })

    it('refuses a name that is no backup, naming the field, and changes nothing', async () => {
      const { storage, clock } = fixture()
      const backups = storage.backups
      if (!backups) throw new Error('no backup store')
      await storage.repositories.agents.upsert('agent-a', null)
      await storage.repositories.archive.addMemories('agent-a', [memory('still here', clock.now())])
      for (const name of ['engram-2026-01-01T00-00-00-000Z.db', '../store.db', 'not a backup']) {
        const refused = await backups.restore(name).catch((error: unknown) => error)
        expect(refused).toBeInstanceOf(ValidationError)
        expect((refused as ValidationError).issues[0]?.field).toBe('name')
      }
      expect(await contents(storage, 'agent-a')).toEqual(['still here'])
    })
  })
}

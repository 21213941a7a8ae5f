import { NotFoundError } from '@engram/core'
import type { NewMemoryItem } from '@engram/engine'
import { describe, expect, it } from 'vitest'
import type { StorageInitializer } from '../types.ts'
import { useFixture } from './fixture.ts'

const HOUR = 3_600_000

function item(content: string, at: Date, fields: Partial<NewMemoryItem> = {}): NewMemoryItem {
  return {
    userId: null,
    content,
    category: 'fact',
    tags: [],
    importance: 0.5,
    confidence: 1,
    pinned: false,
    sourceConversationId: null,
    sourceMessageId: null,
    validFrom: at,
    validUntil: null,
    metadata: {},
    contentHash: `hash of ${content}`,
    tokenCount: content.split(/\s+/).length,
    createdAt: at,
    ...fields,
  }
}

export function describeMemoryItems(initializer: StorageInitializer): void {
  describe(`${initializer.name}: memory items`, () => {
    const fixture = useFixture(initializer)

    it('stores an item with every field and reads it back; ids of other agents find nothing', async () => {
      const { storage, clock } = fixture()
      const { memoryItems } = storage
      await storage.repositories.agents.upsert('agent-a', null)
      await storage.repositories.agents.upsert('agent-b', null)
      const at = clock.now()
      const created = await memoryItems.create(
        'agent-a',
        item('Lena is my sister', at, {
          userId: 'user-1',
          category: 'relationship',
          tags: ['family', 'lena'],
          importance: 0.8,
          confidence: 0.9,
          pinned: true,
          sourceConversationId: 'c1',
          sourceMessageId: 'm1',
          validUntil: new Date(at.getTime() + HOUR),
          metadata: { source: 'conformance', nested: { n: 1 } },
        }),
      )
      expect(created).toMatchObject({
        agentId: 'agent-a',
        userId: 'user-1',
        content: 'Lena is my sister',
        category: 'relationship',
        tags: ['family', 'lena'],
        importance: 0.8,
        confidence: 0.9,
        pinned: true,
        sourceConversationId: 'c1',
        sourceMessageId: 'm1',
        accessCount: 0,
        lastAccessedAt: null,
        supersededById: null,
        metadata: { source: 'conformance', nested: { n: 1 } },
        tokenCount: 4,
      })
      expect(created.createdAt.getTime()).toBe(at.getTime())
      expect(created.updatedAt.getTime()).toBe(at.getTime())
      expect(await memoryItems.find('agent-a', created.id)).toMatchObject({ content: 'Lena is my sister' })
      expect(await memoryItems.find('agent-b', created.id)).toBeNull()
      expect(await memoryItems.find('agent-a', 'not-an-id')).toBeNull()
      await expect(memoryItems.delete('agent-b', created.id)).rejects.toBeInstanceOf(NotFoundError)
      await expect(
        memoryItems.supersede('agent-b', created.id, created.id, clock.now()),
      ).rejects.toBeInstanceOf(NotFoundError)
      expect(await memoryItems.recordAccess('agent-b', [created.id], clock.now())).toEqual([])
      expect(await memoryItems.count('agent-b', { validAt: null })).toBe(0)
      expect(await memoryItems.count(null, { validAt: null })).toBe(1)
    })

    it('keeps memory settings per agent', async () => {
      const { storage } = fixture()
      const { memoryItems } = storage
      await storage.repositories.agents.upsert('agent-a', null)
      await storage.repositories.agents.upsert('agent-b', null)
      expect(await memoryItems.settings('agent-a')).toEqual({})
      const stored = { settings: { maxEntriesPerAgent: 3 }, contextBudgets: { knowledge: 0.1 } }
      await memoryItems.saveSettings('agent-a', stored)
      expect(await memoryItems.settings('agent-a')).toEqual(stored)
      expect(await memoryItems.settings('agent-b')).toEqual({})
      expect(await memoryItems.settings('nobody')).toEqual({})
    })

    it('counts accesses and hands items back in the order asked', async () => {
      const { storage, clock } = fixture()
      const { memoryItems } = storage
      await storage.repositories.agents.upsert('agent-a', null)
      const first = await memoryItems.create('agent-a', item('first', clock.now()))
      const second = await memoryItems.create('agent-a', item('second', clock.now()))
      const at = new Date(clock.now().getTime() + HOUR)
      const accessed = await memoryItems.recordAccess('agent-a', [second.id, first.id], at)
      expect(accessed.map((i) => i.id)).toEqual([second.id, first.id])
      expect(accessed.map((i) => i.accessCount)).toEqual([1, 1])
      expect(accessed[0]?.lastAccessedAt?.getTime()).toBe(at.getTime())
      await memoryItems.recordAccess('agent-a', [first.id], at)
      expect((await memoryItems.find('agent-a', first.id))?.accessCount).toBe(2)
    })

    it('filters lists by user, category, tags, importance, pin, text, creation and validity, in order and pages', async () => {
      const { storage, clock } = fixture()
      const { memoryItems } = storage
      await storage.repositories.agents.upsert('agent-a', null)
      const t0 = clock.now()
      const at = (hours: number) => new Date(t0.getTime() + hours * HOUR)
      const a = await memoryItems.create(
        'agent-a',
        item('likes green tea', at(0), { userId: 'u1', tags: ['drink', 'tea'], importance: 0.9 }),
      )
      const b = await memoryItems.create(
        'agent-a',
        item('works in Berlin', at(1), {
          category: 'context',
          tags: ['work'],
          importance: 0.2,
          pinned: true,
        }),
      )
      const c = await memoryItems.create(
        'agent-a',
        item('liked coffee', at(2), { validFrom: at(0), validUntil: at(3), tags: ['drink'] }),
      )
      const ids = (rows: { id: string }[]) => rows.map((r) => r.id)
      const all = { validAt: null }
      expect(ids(await memoryItems.page('agent-a', all, 'createdAt', 0, 10))).toEqual([c.id, b.id, a.id])
      expect(ids(await memoryItems.page('agent-a', all, 'createdAt', 1, 1))).toEqual([b.id])
      expect(ids(await memoryItems.page('agent-a', all, 'importance', 0, 10))).toEqual([a.id, c.id, b.id])
      expect(await memoryItems.count('agent-a', { validAt: null, userId: 'u1' })).toBe(1)
      expect(await memoryItems.count('agent-a', { validAt: null, categories: ['context'] })).toBe(1)
      expect(
        ids(await memoryItems.page('agent-a', { validAt: null, tags: ['drink'] }, 'createdAt', 0, 10)),
      ).toEqual([c.id, a.id])
      expect(await memoryItems.count('agent-a', { validAt: null, tags: ['drink', 'tea'] })).toBe(1)
      expect(await memoryItems.count('agent-a', { validAt: null, minImportance: 0.5 })).toBe(2)
      expect(await memoryItems.count('agent-a', { validAt: null, pinned: true })).toBe(1)
      expect(await memoryItems.count('agent-a', { validAt: null, search: 'Berlin' })).toBe(1)
      expect(await memoryItems.count('agent-a', { validAt: null, createdAfter: at(1) })).toBe(2)
      expect(await memoryItems.count('agent-a', { validAt: null, createdBefore: at(1) })).toBe(2)
      // Valid at a time: begun and not yet ended.
      expect(ids(await memoryItems.page('agent-a', { validAt: at(2) }, 'createdAt', 0, 10))).toEqual([
        c.id,
        b.id,
        a.id,
      ])
      expect(ids(await memoryItems.page('agent-a', { validAt: at(3) }, 'createdAt', 0, 10))).toEqual([
        b.id,
        a.id,
      ])
      expect(ids(await memoryItems.page('agent-a', { validAt: at(0.5) }, 'createdAt', 0, 10))).toEqual([
        c.id,
        a.id,
      ])
      // Never accessed last.
      await memoryItems.recordAccess('agent-a', [b.id], at(4))
      expect(ids(await memoryItems.page('agent-a', all, 'lastAccessedAt', 0, 10))).toEqual([b.id, c.id, a.id])
    })

    it('finds the verification candidates: items sharing words, and of those ids the current ones of the user', async () => {
      const { storage, clock } = fixture()
      const { memoryItems } = storage
      await storage.repositories.agents.upsert('agent-a', null)
      await storage.repositories.agents.upsert('agent-b', null)
      const now = clock.now()
      const tea = await memoryItems.create('agent-a', item('the user drinks green tea every morning', now))
      const other = await memoryItems.create('agent-a', item('the office is in Berlin', now))
      const theirs = await memoryItems.create('agent-b', item('green tea is great', now))
      const ended = await memoryItems.create(
        'agent-a',
        item('green tea at noon', now, { validFrom: new Date(now.getTime() - HOUR), validUntil: now }),
      )
      const someone = await memoryItems.create('agent-a', item('green tea for u2', now, { userId: 'u2' }))
      const sharing = await memoryItems.sharingWords('agent-a', 'green tea in the morning', 10)
      expect(sharing).toContain(tea.id)
      expect(sharing).not.toContain(theirs.id)
      expect(sharing).not.toContain(other.id)
      expect(await memoryItems.sharingWords('agent-a', 'green tea', 1)).toHaveLength(1)
      expect(await memoryItems.sharingWords('agent-a', '', 10)).toEqual([])
      const current = await memoryItems.currentAmong('agent-a', null, now, [
        tea.id,
        theirs.id,
        ended.id,
        someone.id,
        'not-an-id',
      ])
      expect(current).toEqual([
        { id: tea.id, content: tea.content, category: 'fact', createdAt: tea.createdAt },
      ])
      expect((await memoryItems.currentAmong('agent-a', 'u2', now, [someone.id])).map((c) => c.id)).toEqual([
        someone.id,
      ])
    })

    it('supersedes, counts current items and expires the least valued ones past a limit', async () => {
      const { storage, clock } = fixture()
      const { memoryItems } = storage
      await storage.repositories.agents.upsert('agent-a', null)
      const t0 = clock.now()
      const at = (hours: number) => new Date(t0.getTime() + hours * HOUR)
      const old = await memoryItems.create('agent-a', item('lives in Paris', at(0), { importance: 0.1 }))
      const pinned = await memoryItems.create(
        'agent-a',
        item('pinned', at(0), { importance: 0, pinned: true }),
      )
      const used = await memoryItems.create('agent-a', item('used', at(0), { importance: 0.3 }))
      const unused = await memoryItems.create('agent-a', item('unused', at(0), { importance: 0.3 }))
      const kept = await memoryItems.create('agent-a', item('new', at(1), { importance: 0 }))
      await memoryItems.recordAccess('agent-a', [used.id], at(1))
      const superseded = await memoryItems.supersede('agent-a', old.id, kept.id, at(2))
      expect(superseded.supersededById).toBe(kept.id)
      expect(superseded.validUntil?.getTime()).toBe(at(2).getTime())
      expect(await memoryItems.countCurrent('agent-a', at(2))).toBe(4)
      expect(await memoryItems.countCurrent('agent-a', at(1))).toBe(5)
      // Lowest importance first, then never accessed before accessed; pinned and kept never.
      const expired = await memoryItems.expireLeastValued('agent-a', at(2), kept.id, 1)
      expect(expired.map((i) => i.id)).toEqual([unused.id])
      expect(expired[0]?.validUntil?.getTime()).toBe(at(2).getTime())
      const next = await memoryItems.expireLeastValued('agent-a', at(2), kept.id, 5)
      expect(next.map((i) => i.id)).toEqual([used.id])
      expect(await memoryItems.countCurrent('agent-a', at(2))).toBe(2)
      expect((await memoryItems.find('agent-a', pinned.id))?.validUntil).toBeNull()
    })

    it('updates, deletes, and rolls a transaction back when it throws', async () => {
      const { storage, clock } = fixture()
      const { memoryItems } = storage
      await storage.repositories.agents.upsert('agent-a', null)
      const now = clock.now()
      const created = await memoryItems.create('agent-a', item('before', now))
      const later = new Date(now.getTime() + HOUR)
      const updated = await memoryItems.update('agent-a', created.id, {
        userId: 'u1',
        content: 'after',
        category: 'preference',
        tags: ['x'],
        importance: 0.7,
        confidence: 0.6,
        pinned: true,
        validFrom: now,
        validUntil: null,
        metadata: { k: 'v' },
        contentHash: 'hash of after',
        tokenCount: 1,
        updatedAt: later,
      })
      expect(updated).toMatchObject({ content: 'after', category: 'preference', tags: ['x'], userId: 'u1' })
      expect(updated.updatedAt.getTime()).toBe(later.getTime())
      await memoryItems.discardVectors('agent-a', created.id)
      await expect(
        memoryItems.transaction(async (tx) => {
          const inside = await tx.create('agent-a', item('rolled back tulips', now))
          // A verified write's reads inside its transaction see the transaction's own writes.
          expect(await tx.countCurrent('agent-a', now)).toBe(2)
          expect(await tx.sharingWords('agent-a', 'tulips', 10)).toEqual([inside.id])
          expect((await tx.currentAmong('agent-a', null, now, [inside.id])).map((c) => c.id)).toEqual([
            inside.id,
          ])
          await tx.supersede('agent-a', created.id, created.id, later)
          throw new Error('abort')
        }),
      ).rejects.toThrow('abort')
      expect(await memoryItems.sharingWords('agent-a', 'tulips', 10)).toEqual([])
      expect(await memoryItems.count('agent-a', { validAt: null })).toBe(1)
      expect((await memoryItems.find('agent-a', created.id))?.validUntil).toBeNull()
      await memoryItems.delete('agent-a', created.id)
      expect(await memoryItems.find('agent-a', created.id)).toBeNull()
      await memoryItems.create('agent-a', item('goes with its agent', now))
      await storage.repositories.agents.delete('agent-a')
      expect(await memoryItems.count(null, { validAt: null })).toBe(0)
    })

    it('reports figures: totals, current, pinned, per category and bytes', async () => {
      const { storage, clock } = fixture()
      const { memoryItems } = storage
      await storage.repositories.agents.upsert('agent-a', null)
      const now = clock.now()
      await memoryItems.create('agent-a', item('one', now, { pinned: true }))
      await memoryItems.create('agent-a', item('two', now, { category: 'preference' }))
      await memoryItems.create(
        'agent-a',
        item('three', now, { validFrom: new Date(now.getTime() - HOUR), validUntil: now }),
      )
      const figures = await memoryItems.figures('agent-a', now, 'some-model')
      expect(figures).toMatchObject({ total: 3, current: 2, pinned: 1, vectorBytes: 0 })
      expect(figures.byCategory).toEqual(
        new Map([
          ['fact', 1],
          ['preference', 1],
        ]),
      )
      // Content, tags and metadata: "one" + [] + {} and the rest.
      expect(figures.contentBytes).toBe(3 + 2 + 2 + (3 + 2 + 2) + (5 + 2 + 2))
    })
  })
}

import { CONTEXT_SUMMARY_PREFIX } from '@engram/core'
import type { NewKnowledge, NewMemoryItem } from '@engram/engine'
import { describe, expect, it } from 'vitest'
import type { StorageInitializer } from '../types.ts'
import { useFixture } from './fixture.ts'

const MINUTE = 60_000
const at = (minutes: number) => new Date(Date.UTC(2026, 0, 15, 10, 0) + minutes * MINUTE)
const sorted = (ids: Iterable<string>) => [...ids].sort((a, b) => Number(a) - Number(b))

function item(content: string, tags: string[], minutes: number): NewMemoryItem {
  return {
    userId: null,
    content,
    category: 'fact',
    tags,
    importance: 0.5,
    confidence: 1,
    pinned: false,
    sourceConversationId: null,
    sourceMessageId: null,
    validFrom: at(minutes),
    validUntil: null,
    metadata: {},
    contentHash: `hash of ${content}`,
    tokenCount: content.split(/\s+/).length,
    createdAt: at(minutes),
  }
}

const fact = (key: string, value: string): NewKnowledge => ({
  category: 'domain',
  key,
  value,
  confidence: 0.5,
  createdAt: at(0),
})

/**
 * The text filters (a search within memories, facts and entries, a tag, the summary prefix) ignore
 * the case of ASCII letters on every adapter: SQLite's LIKE always did, and a replica on Postgres
 * must answer the same filter with the same rows.
 */
export function describeTextFilters(initializer: StorageInitializer): void {
  describe(`${initializer.name}: text filters ignore ASCII case`, () => {
    const fixture = useFixture(initializer)

    it('a memory search and a tag in capitals find the items written in lower or mixed case', async () => {
      const { storage } = fixture()
      const { memoryItems } = storage
      await storage.repositories.agents.upsert('agent-a', null)
      await storage.repositories.agents.upsert('agent-b', null)
      const lower = await memoryItems.create('agent-a', item('met alice at the station', ['friend'], 0))
      const mixed = await memoryItems.create('agent-a', item('Alice moved to Lyon', ['Friend'], 1))
      await memoryItems.create('agent-a', item('Bob likes tea', ['family'], 2))
      await memoryItems.create('agent-b', item('alice, but not yours', ['friend'], 3))
      const ids = (rows: { id: string }[]) => sorted(rows.map((r) => r.id))

      expect(
        ids(await memoryItems.page('agent-a', { validAt: null, search: 'ALICE' }, 'createdAt', 0, 10)),
      ).toEqual(sorted([lower.id, mixed.id]))
      expect(await memoryItems.count('agent-a', { validAt: null, search: 'aLiCe' })).toBe(2)
      expect(
        ids(await memoryItems.page('agent-a', { validAt: null, tags: ['FRIEND'] }, 'createdAt', 0, 10)),
      ).toEqual(sorted([lower.id, mixed.id]))
      // Still a filter: what holds no "alice" in any case stays out.
      expect(await memoryItems.count('agent-a', { validAt: null, search: 'ALICIA' })).toBe(0)
    })

    it("search's memory filter in capitals keeps the items written in lower or mixed case", async () => {
      const { storage, addMemoryItems } = fixture()
      const ids = await addMemoryItems('agent-a', [
        { content: 'met alice at the station', tags: ['friend'], validFrom: at(0), createdAt: at(0) },
        { content: 'Alice moved to Lyon', tags: ['Friend'], validFrom: at(0), createdAt: at(1) },
        { content: 'Bob likes tea', tags: ['family'], validFrom: at(0), createdAt: at(2) },
      ])
      const alice = sorted(ids.slice(0, 2))
      const recalled = await storage.recall.memoryItems('agent-a', ids, { asOf: at(10), search: 'ALICE' })
      expect(sorted(recalled.map((m) => m.id))).toEqual(alice)
      const tagged = await storage.recall.memoryItems('agent-a', ids, { asOf: at(10), tags: ['FRIEND'] })
      expect(sorted(tagged.map((m) => m.id))).toEqual(alice)
    })

    it("a knowledge search in capitals finds facts by key or value in any case, of the agent's own", async () => {
      const { storage } = fixture()
      const { knowledge } = storage
      await storage.repositories.agents.upsert('agent-a', null)
      await storage.repositories.agents.upsert('agent-b', null)
      const byKey = await knowledge.create('agent-a', fact('alice.example.com', 'login at /sso'))
      const byValue = await knowledge.create('agent-a', fact('contact', 'ask Alice first'))
      await knowledge.create('agent-a', fact('bob.example.com', 'login at /auth'))
      await knowledge.create('agent-b', fact('alice', 'not yours'))
      const found = await knowledge.page('agent-a', { search: 'ALICE' }, 'confidence', 0, 10)
      expect(sorted(found.map((f) => f.id))).toEqual(sorted([byKey.id, byValue.id]))
      expect(await knowledge.count('agent-a', { search: 'ALICE' })).toBe(2)
    })

    it('an entry filter in capitals finds the entries holding the text in any case', async () => {
      const { storage } = fixture()
      const { agents, memoryEntries } = storage.repositories
      await agents.upsert('agent-a', null)
      const entry = (content: string, minutes: number) => ({
        type: 'short_term' as const,
        role: 'user' as const,
        content,
        tokenCount: 2,
        relevance: 0.5,
        timestamp: at(minutes),
        sessionId: null,
        metadata: {},
      })
      await memoryEntries.create('agent-a', entry('alice called', 0))
      await memoryEntries.create('agent-a', entry('Alice wrote back', 1))
      await memoryEntries.create('agent-a', entry('Bob called', 2))
      const page = await memoryEntries.page(
        'agent-a',
        { contentContains: 'ALICE' },
        { range: {}, direction: 'asc', take: 10 },
      )
      expect(page.map((e) => e.content)).toEqual(['alice called', 'Alice wrote back'])
      // The same filter inside a unit of work (its own transaction's repositories).
      const inTransaction = await storage.unitOfWork.transaction((repositories) =>
        repositories.memoryEntries.page(
          'agent-a',
          { contentContains: 'ALICE' },
          { range: {}, direction: 'asc', take: 10 },
        ),
      )
      expect(inTransaction.map((e) => e.content)).toEqual(['alice called', 'Alice wrote back'])
    })

    it('a turn starting with the summary prefix in lower case is a summary, and no ordinary turn', async () => {
      const { storage, addTurns } = fixture()
      const { ids } = await addTurns('agent-a', 'c1', [
        { content: 'we went hiking', timestamp: at(0) },
        { content: `${CONTEXT_SUMMARY_PREFIX.toLowerCase()} they talked about hiking`, timestamp: at(1) },
      ])
      const summaries = await storage.recall.messages('agent-a', ids, { set: 'summaries' })
      expect(summaries.map((t) => t.message.id)).toEqual([ids[1]])
      const turns = await storage.recall.messages('agent-a', ids, { set: 'messages' })
      expect(turns.map((t) => t.message.id)).toEqual([ids[0]])
      expect(await storage.recall.newestMessageIds('agent-a', 'messages', 5)).toEqual([ids[0]])
      expect(await storage.recall.newestMessageIds('agent-a', 'summaries', 5)).toEqual([ids[1]])
    })
  })
}

import { CONTEXT_SUMMARY_PREFIX } from '@engram/core'
import { describe, expect, it } from 'vitest'
import type { StorageInitializer } from '../types.ts'
import { useFixture } from './fixture.ts'

const MINUTE = 60_000
const at = (minutes: number) => new Date(Date.UTC(2026, 0, 15, 10, 0) + minutes * MINUTE)
const sorted = (ids: Iterable<string>) => [...ids].sort((a, b) => Number(a) - Number(b))

export function describeRecallSources(initializer: StorageInitializer): void {
  describe(`${initializer.name}: recall sources`, () => {
    const fixture = useFixture(initializer)

    it("gives each speaker's newest turn and top id once per speaker, from the rows after a known id only", async () => {
      const { storage, addTurns, addMemoryItems } = fixture()
      const { ids } = await addTurns('agent-a', 'c1', [
        { content: 'hello there', speaker: 'Alice', timestamp: at(0) },
        { content: 'hi Alice', speaker: 'Bob', timestamp: at(1) },
        { content: 'how are you', speaker: 'Alice', timestamp: at(2) },
        { content: 'system note', timestamp: at(3) },
      ])
      await addTurns('agent-b', 'c1', [{ content: 'not yours', speaker: 'Carol', timestamp: at(9) }])
      const speakers = await storage.recall.speakersSince('agent-a', 0)
      const bySpeaker = new Map(speakers.map((s) => [s.speaker, s]))
      expect([...bySpeaker.keys()].sort()).toEqual(['Alice', 'Bob', null].sort())
      expect(bySpeaker.get('Alice')?.newest?.getTime()).toBe(at(2).getTime())
      expect(bySpeaker.get('Alice')?.topMessageId).toBe(Number(ids[2]))
      expect(bySpeaker.get(null)?.topMessageId).toBe(Number(ids[3]))
      const later = await storage.recall.speakersSince('agent-a', Number(ids[1]))
      expect(later.map((s) => s.speaker).sort()).toEqual(['Alice', null].sort())
      expect(await storage.recall.speakersSince('agent-a', Number(ids[3]))).toEqual([])

      const items = await addMemoryItems('agent-a', [
        { content: 'likes tea', userId: 'dana', validFrom: at(0), createdAt: at(0) },
        { content: 'likes jazz', userId: 'dana', validFrom: at(0), createdAt: at(1) },
        { content: 'no user', validFrom: at(0), createdAt: at(2) },
      ])
      await addMemoryItems('agent-b', [
        { content: 'other', userId: 'erin', validFrom: at(0), createdAt: at(0) },
      ])
      expect(await storage.recall.memoryUsersSince('agent-a', 0)).toEqual([
        { userId: 'dana', topMemoryId: Number(items[1]) },
      ])
      expect(await storage.recall.memoryUsersSince('agent-a', Number(items[1]))).toEqual([])
    })

    it("finds the agent's memories formed from given turns, never another agent's", async () => {
      const { storage, addTurns, addMemoryItems } = fixture()
      const { ids: turns } = await addTurns('agent-a', 'c1', [
        { content: 'I took up the cello', speaker: 'Alice', timestamp: at(0) },
        { content: 'nice', speaker: 'Bob', timestamp: at(1) },
      ])
      const { ids: theirTurns } = await addTurns('agent-b', 'c1', [{ content: 'drums', timestamp: at(0) }])
      const [cello, practice, typed] = await addMemoryItems('agent-a', [
        { content: 'Alice plays the cello', validFrom: at(0), createdAt: at(0), sourceMessageId: turns[0] },
        { content: 'Alice practises', validFrom: at(0), createdAt: at(0), sourceMessageId: turns[0] },
        { content: 'typed in by hand', validFrom: at(0), createdAt: at(0) },
      ])
      await addMemoryItems('agent-b', [
        { content: 'Carol plays drums', validFrom: at(0), createdAt: at(0), sourceMessageId: theirTurns[0] },
      ])
      const asked = [turns[0], turns[1], theirTurns[0]] as string[]
      const found = await storage.recall.memoryItemIdsFromTurns('agent-a', asked)
      expect(found.map((f) => `${f.memoryId}:${f.turnId}`).sort()).toEqual(
        [`${cello}:${turns[0]}`, `${practice}:${turns[0]}`].sort(),
      )
      expect(found.map((f) => f.memoryId)).not.toContain(typed)
      expect(await storage.recall.memoryItemIdsFromTurns('agent-a', [])).toEqual([])
    })

    it("tells whether any of the agent's memories was formed from a turn, never counting another agent's", async () => {
      const { storage, addTurns, addMemoryItems } = fixture()
      const { ids: theirTurns } = await addTurns('agent-b', 'c1', [{ content: 'drums', timestamp: at(0) }])
      await addMemoryItems('agent-b', [
        { content: 'Carol plays drums', validFrom: at(0), createdAt: at(0), sourceMessageId: theirTurns[0] },
      ])
      expect(await storage.recall.hasMemoryItemsFromTurns('agent-a')).toBe(false)
      await addMemoryItems('agent-a', [{ content: 'typed in by hand', validFrom: at(0), createdAt: at(0) }])
      expect(await storage.recall.hasMemoryItemsFromTurns('agent-a')).toBe(false)
      const { ids: turns } = await addTurns('agent-a', 'c1', [
        { content: 'I took up the cello', timestamp: at(1) },
      ])
      await addMemoryItems('agent-a', [
        { content: 'Plays the cello', validFrom: at(1), createdAt: at(1), sourceMessageId: turns[0] },
      ])
      expect(await storage.recall.hasMemoryItemsFromTurns('agent-a')).toBe(true)
      expect(await storage.recall.hasMemoryItemsFromTurns('agent-b')).toBe(true)
    })

    it("reads the agent's turns by id through the set, conversation and span filters, never another agent's", async () => {
      const { storage, addTurns } = fixture()
      const first = await addTurns('agent-a', 'c1', [
        { content: 'we went hiking', speaker: 'Alice', timestamp: at(0) },
        { content: `${CONTEXT_SUMMARY_PREFIX} they talked about hiking`, timestamp: at(5) },
        { content: 'then we ate', timestamp: at(10) },
      ])
      const second = await addTurns('agent-a', 'c2', [{ content: 'another day', timestamp: at(20) }])
      const theirs = await addTurns('agent-b', 'c1', [{ content: 'hiking too', timestamp: at(0) }])
      const all = [...first.ids, ...second.ids, ...theirs.ids]

      const turns = await storage.recall.messages('agent-a', all, { set: 'messages' })
      expect(sorted(turns.map((t) => t.message.id))).toEqual(
        sorted([first.ids[0], first.ids[2], second.ids[0]] as string[]),
      )
      const hiking = turns.find((t) => t.message.id === first.ids[0])
      expect(hiking).toMatchObject({
        conversationId: 'c1',
        message: { sessionId: first.sessionId, speaker: 'Alice', content: 'we went hiking' },
      })
      expect(hiking?.message.timestamp.getTime()).toBe(at(0).getTime())

      const summaries = await storage.recall.messages('agent-a', all, { set: 'summaries' })
      expect(summaries.map((t) => t.message.id)).toEqual([first.ids[1]])
      const inC2 = await storage.recall.messages('agent-a', all, {
        set: 'messages',
        sessionId: second.sessionId,
      })
      expect(inC2.map((t) => t.message.id)).toEqual([second.ids[0]])
      const span = await storage.recall.messages('agent-a', all, {
        set: 'messages',
        since: at(1),
        until: at(10),
      })
      expect(span.map((t) => t.message.id)).toEqual([first.ids[2]])

      expect(await storage.recall.hasSummaries('agent-a', null)).toBe(true)
      expect(await storage.recall.hasSummaries('agent-a', first.sessionId)).toBe(true)
      expect(await storage.recall.hasSummaries('agent-a', second.sessionId)).toBe(false)
      expect(await storage.recall.hasSummaries('agent-b', null)).toBe(false)

      expect(await storage.recall.newestMessageIds('agent-a', 'messages', 2)).toEqual([
        second.ids[0],
        first.ids[2],
      ])
      expect(await storage.recall.newestMessageIds('agent-a', 'summaries', 5)).toEqual([first.ids[1]])

      expect(await storage.recall.sessionIdOf('agent-a', 'c2')).toBe(second.sessionId)
      expect(await storage.recall.sessionIdOf('agent-b', 'c2')).toBeNull()

      const texts = await storage.recall.documentTexts('messages', [first.ids[0] as string])
      expect(texts.get(first.ids[0] as string)).toBe('we went hiking')
    })

    it('reads the turns beside a turn in its own conversation, and a span of turns oldest first', async () => {
      const { storage, addTurns } = fixture()
      const { sessionId, ids } = await addTurns(
        'agent-a',
        'c1',
        [0, 1, 2, 3, 4].map((i) => ({ content: `turn ${i}`, timestamp: at(i) })),
      )
      await addTurns('agent-a', 'c2', [{ content: 'elsewhere', timestamp: at(2) }])
      const beside = await storage.recall.turnsBeside([ids[2] as string], 2)
      const side = (s: 'before' | 'after') =>
        sorted(beside.filter((b) => b.side === s && b.origin === ids[2]).map((b) => b.id))
      expect(side('before')).toEqual(sorted([ids[0], ids[1]] as string[]))
      expect(side('after')).toEqual(sorted([ids[3], ids[4]] as string[]))
      expect(beside.find((b) => b.id === ids[1])?.timestamp?.getTime()).toBe(at(1).getTime())
      const near = await storage.recall.turnsBeside([ids[0] as string, ids[4] as string], 1)
      expect(near.map((b) => `${b.origin}:${b.side}:${b.id}`).sort()).toEqual(
        [`${ids[0]}:after:${ids[1]}`, `${ids[4]}:before:${ids[3]}`].sort(),
      )

      const other = await addTurns(
        'agent-a',
        'c3',
        [0, 1, 2].map((i) => ({ content: `other ${i}`, timestamp: at(i) })),
      )
      const spans = await storage.recall.turnSpans(
        [
          { sessionId, fromTurnId: ids[1] as string, toTurnId: ids[3] as string },
          {
            sessionId: other.sessionId,
            fromTurnId: other.ids[0] as string,
            toTurnId: other.ids[1] as string,
          },
        ],
        10,
      )
      const of = (session: string) => spans.filter((t) => t.sessionId === session).map((t) => t.id)
      // Each span in its own conversation only (c2's turn at the same time is not in it), oldest first.
      expect(of(sessionId)).toEqual([ids[1], ids[2], ids[3]])
      expect(of(other.sessionId)).toEqual([other.ids[0], other.ids[1]])
      expect(spans.find((t) => t.id === ids[1])?.timestamp.getTime()).toBe(at(1).getTime())
      const limited = await storage.recall.turnSpans(
        [{ sessionId, fromTurnId: ids[1] as string, toTurnId: ids[3] as string }],
        2,
      )
      expect(limited.map((t) => t.id)).toEqual([ids[1], ids[2]])
      expect(await storage.recall.turnSpans([], 10)).toEqual([])
      // A search over a long history asks for hundreds of spans and thousands of turns at once
      // (Prisma's IN list of turns ran past the parameter limit; SQLite takes 500 SELECTs in a UNION).
      const many = await storage.recall.turnSpans(
        Array.from({ length: 600 }, () => ({
          sessionId,
          fromTurnId: ids[0] as string,
          toTurnId: ids[1] as string,
        })),
        10,
      )
      expect(many).toHaveLength(1_200)
      const wanted = [...Array.from({ length: 5_000 }, (_, i) => String(10_000_000 + i)), ids[2] as string]
      const found = await storage.recall.messages('agent-a', wanted, { set: 'messages' })
      expect(found.map((t) => t.message.id)).toEqual([ids[2]])
    })

    it('reads memory items by id through the filter, valid at a time unless superseded ones are asked for', async () => {
      const { storage, addMemoryItems } = fixture()
      const [tea, jazz, expired, future] = await addMemoryItems('agent-a', [
        {
          content: 'likes tea',
          userId: 'dana',
          importance: 0.9,
          tags: ['drink'],
          validFrom: at(0),
          createdAt: at(0),
        },
        { content: 'likes jazz', importance: 0.2, validFrom: at(0), createdAt: at(5) },
        { content: 'lived in Oslo', validFrom: at(0), validUntil: at(10), createdAt: at(1) },
        { content: 'moves to Rome', validFrom: at(100), createdAt: at(2) },
      ])
      const [theirs] = await addMemoryItems('agent-b', [
        { content: 'likes tea', validFrom: at(0), createdAt: at(0) },
      ])
      const ids = [tea, jazz, expired, future, theirs] as string[]
      const ids_ = async (filter: Parameters<typeof storage.recall.memoryItems>[2]) =>
        sorted((await storage.recall.memoryItems('agent-a', ids, filter)).map((m) => m.id))

      expect(await ids_({ asOf: at(20) })).toEqual(sorted([tea, jazz] as string[]))
      expect(await ids_({ asOf: at(5) })).toEqual(sorted([tea, jazz, expired] as string[]))
      expect(await ids_({ asOf: at(20), includeSuperseded: true })).toEqual(
        sorted([tea, jazz, expired, future] as string[]),
      )
      expect(await ids_({ asOf: at(20), userId: 'dana' })).toEqual([tea])
      expect(await ids_({ asOf: at(20), tags: ['drink'] })).toEqual([tea])
      expect(await ids_({ asOf: at(20), minImportance: 0.5 })).toEqual([tea])
      expect(await ids_({ asOf: at(20), search: 'jazz' })).toEqual([jazz])
      expect(await ids_({ asOf: at(20), createdAfter: at(1) })).toEqual([jazz])
      const [item] = await storage.recall.memoryItems('agent-a', [tea as string], { asOf: at(20) })
      expect(item).toMatchObject({
        id: tea,
        agentId: 'agent-a',
        userId: 'dana',
        tags: ['drink'],
        importance: 0.9,
      })

      expect(await storage.recall.memoryItemIdsBy('agent-a', 'recency', 10, at(20))).toEqual([jazz, tea])
      expect(await storage.recall.memoryItemIdsBy('agent-a', 'importance', 10, at(20))).toEqual([tea, jazz])
      expect(await storage.recall.memoryItemIdsBy('agent-a', 'recency', 1, at(5))).toEqual([jazz])
    })

    it('reads knowledge by id and order, and counts a recall as a use without touching confidence', async () => {
      const { storage, addKnowledge } = fixture()
      const [city, food] = await addKnowledge('agent-a', [
        { key: 'city', value: 'Lisbon', confidence: 0.4, updatedAt: at(10) },
        { key: 'food', value: 'noodles', confidence: 0.8, updatedAt: at(0) },
      ])
      const [theirs] = await addKnowledge('agent-b', [
        { key: 'city', value: 'Paris', confidence: 0.9, updatedAt: at(0) },
      ])
      const rows = await storage.recall.knowledge('agent-a', [city, food, theirs] as string[])
      expect(sorted(rows.map((k) => String(k.id)))).toEqual(sorted([city, food] as string[]))
      expect(rows.find((k) => String(k.id) === city)).toMatchObject({
        key: 'city',
        value: 'Lisbon',
        useCount: 0,
      })
      expect(await storage.recall.knowledgeIdsBy('agent-a', 'importance', 5)).toEqual([food, city])
      expect(await storage.recall.knowledgeIdsBy('agent-a', 'recency', 5)).toEqual([city, food])
      expect((await storage.recall.documentTexts('knowledge', [city as string])).get(city as string)).toBe(
        'city Lisbon',
      )

      await storage.recall.recordKnowledgeRecall('agent-a', [Number(city), Number(theirs)], at(30))
      const [used] = await storage.recall.knowledge('agent-a', [city as string])
      expect(used).toMatchObject({ useCount: 1, confidence: 0.4 })
      expect(used?.lastUsedAt?.getTime()).toBe(at(30).getTime())
      const [untouched] = await storage.recall.knowledge('agent-b', [theirs as string])
      expect(untouched).toMatchObject({ useCount: 0, lastUsedAt: null })
    })
  })
}

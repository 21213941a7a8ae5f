import type { TimeIdPageQuery } from '@engram/engine'
import { describe, expect, it } from 'vitest'
import type { StorageInitializer } from '../types.ts'
import { storedMessage, useFixture } from './fixture.ts'

const message = storedMessage

const all = (direction: 'asc' | 'desc' = 'asc', take = 100): TimeIdPageQuery => ({
  range: {},
  direction,
  take,
})

/** The paged reads: sessions, messages and memory entries in (timestamp, id) order, scoped. */
export function describeHistory(initializer: StorageInitializer): void {
  describe(`${initializer.name}: conversation history and entry pages`, () => {
    const fixture = useFixture(initializer)

    it('lists sessions most recently active first, per agent or all of them', async () => {
      const { storage, clock } = fixture()
      await storage.repositories.agents.upsert('agent-a', null)
      await storage.repositories.agents.upsert('agent-b', null)
      const older = await storage.sessions.createSession('agent-a', 'older', clock.now())
      clock.advance(1_000)
      await storage.sessions.createSession('agent-b', 'other', clock.now())
      clock.advance(1_000)
      await storage.sessions.createSession('agent-a', 'newer', clock.now())
      clock.advance(1_000)
      // Adapters stamp a session's activity with the wall clock, as Prisma stamps updatedAt (the
      // injected clock dates the messages): wait for the next millisecond so "newer" and the new
      // activity of "older" cannot tie (a tie is ordered by id, which is random).
      const created = Date.now()
      while (Date.now() === created) await new Promise((resolve) => setTimeout(resolve, 1))
      // A new message makes the older conversation the most recently active one.
      await storage.sessions.appendMessages(older, [message('back again', clock.now())])
      expect(await storage.history.countSessions('agent-a')).toBe(2)
      expect(await storage.history.countSessions(null)).toBe(3)
      const mine = await storage.history.sessions('agent-a', { offset: 0, limit: 10 })
      expect(mine.map((s) => s.conversationId)).toEqual(['older', 'newer'])
      expect(
        (await storage.history.sessions('agent-a', { offset: 1, limit: 10 })).map((s) => s.conversationId),
      ).toEqual(['newer'])
      expect(
        (await storage.history.sessions(null, { offset: 0, limit: 10 })).map((s) => s.scope).sort(),
      ).toEqual(['agent-a', 'agent-a', 'agent-b'])
    })

    it('pages messages by (timestamp, id) ranges, with and without compressed ones', async () => {
      const { storage, clock } = fixture()
      await storage.repositories.agents.upsert('agent-a', null)
      const session = await storage.sessions.createSession('agent-a', 'c', clock.now())
      const t = clock.now()
      // Two share a timestamp: the id breaks the tie, so paging never skips or repeats one.
      const { messages } = await storage.sessions.appendMessages(session, [
        message('one', t),
        message('two', t),
        message('three', new Date(t.getTime() + 1_000), true),
        message('four', new Date(t.getTime() + 2_000)),
      ])
      const ids = messages.map((m) => ({ timestamp: m.timestamp, id: Number(m.id) }))
      const read = async (includeCompressed: boolean, query: TimeIdPageQuery) =>
        (await storage.history.messages(session.id, includeCompressed, query)).map((m) => m.content)
      expect(await read(true, all())).toEqual(['one', 'two', 'three', 'four'])
      expect(await read(false, all())).toEqual(['one', 'two', 'four'])
      expect(await read(true, all('desc', 2))).toEqual(['four', 'three'])
      expect(await read(true, { range: { after: ids[0] }, direction: 'asc', take: 2 })).toEqual([
        'two',
        'three',
      ])
      expect(
        await read(true, { range: { after: ids[0], before: ids[3] }, direction: 'desc', take: 10 }),
      ).toEqual(['three', 'two'])
      expect((await storage.history.uncompressedMessages(session.id)).map((m) => m.content)).toEqual([
        'one',
        'two',
        'four',
      ])
    })

    it("filters and pages one agent's memory entries, never another's", async () => {
      const { storage, clock } = fixture()
      const { agents, memoryEntries } = storage.repositories
      await agents.upsert('agent-a', null)
      await agents.upsert('agent-b', null)
      const t = clock.now().getTime()
      const add = (agentId: string, content: string, offset: number, relevance: number) =>
        memoryEntries.create(agentId, {
          type: 'short_term',
          role: 'user',
          content,
          tokenCount: 2,
          relevance,
          timestamp: new Date(t + offset),
        })
      const first = await add('agent-a', 'alpha apples', 0, 0.9)
      await add('agent-a', 'beta bananas', 1_000, 0.2)
      await add('agent-a', 'gamma apples', 2_000, 0.6)
      await add('agent-b', 'apples of b', 500, 0.9)
      const page = async (filter: Parameters<typeof memoryEntries.page>[1], query: TimeIdPageQuery) =>
        (await memoryEntries.page('agent-a', filter, query)).map((e) => e.content)
      expect(await page({}, all('desc'))).toEqual(['gamma apples', 'beta bananas', 'alpha apples'])
      expect(await page({ contentContains: 'apples' }, all())).toEqual(['alpha apples', 'gamma apples'])
      expect(await page({ minRelevance: 0.5 }, all())).toEqual(['alpha apples', 'gamma apples'])
      expect(
        await page(
          {},
          {
            range: { after: { timestamp: first.timestamp, id: Number(first.id) } },
            direction: 'asc',
            take: 1,
          },
        ),
      ).toEqual(['beta bananas'])
    })
  })
}

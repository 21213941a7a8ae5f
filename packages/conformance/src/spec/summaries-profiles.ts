import type { NewProfileVersion, NewSummary, Storage } from '@engram/engine'
import { describe, expect, it } from 'vitest'
import type { StorageInitializer } from '../types.ts'
import { useFixture } from './fixture.ts'

function summary(
  agentId: string,
  conversationId: string,
  content: string,
  createdAt: Date,
  lastMessageId = '2',
): NewSummary {
  return {
    agentId,
    conversationId,
    content,
    strategy: 'extractive',
    writer: 'extractive',
    trigger: 'debounce',
    firstMessageId: '1',
    lastMessageId,
    messageCount: 2,
    tokenCount: 7,
    createdAt,
  }
}

function version(
  agentId: string,
  userId: string,
  content: string,
  sourceMemoryIds: string[],
  createdAt: Date,
): NewProfileVersion {
  return {
    agentId,
    userId,
    content,
    tokenCount: 5,
    writer: 'extractive',
    trigger: 'contributions',
    sourceMemoryIds,
    overrideIds: [],
    createdAt,
  }
}

async function agentsWithConversations(storage: Storage, at: Date) {
  for (const agentId of ['agent-a', 'agent-b']) {
    await storage.repositories.agents.upsert(agentId, null)
    for (const conversationId of ['c1', 'c2'])
      await storage.sessions.createSession(agentId, conversationId, at)
  }
}

const minutes = (at: Date, n: number) => new Date(at.getTime() + n * 60_000)

/** Automatic summaries with their cursors, and the generated profile's versions (issue 13 §3, §4). */
export function describeSummaryAndProfileStores(initializer: StorageInitializer): void {
  describe(`${initializer.name}: summaries`, () => {
    const fixture = useFixture(initializer)

    it('stores summaries per agent, lists them newest first, and moves the cursor past them', async () => {
      const { storage, clock } = fixture()
      const t0 = clock.now()
      await agentsWithConversations(storage, t0)
      const { summaries } = storage
      expect(await summaries.recordTurn('agent-a', 'c1', t0, 40)).toMatchObject({
        cursor: { pendingTokens: 40, lastTurnAt: t0 },
        previous: null,
      })
      const recorded = await summaries.recordTurn('agent-a', 'c1', minutes(t0, 1), 60)
      expect(recorded.previous).toBeNull()
      expect(recorded.cursor).toEqual(await summaries.cursor('agent-a', 'c1'))
      expect(await summaries.cursor('agent-a', 'c1')).toEqual({
        agentId: 'agent-a',
        conversationId: 'c1',
        lastTurnAt: minutes(t0, 1),
        summarisedThroughId: null,
        lastSummaryAt: null,
        pendingTokens: 100,
      })
      expect(await summaries.conversationsWithPendingTurns('agent-a')).toEqual(['c1'])
      const first = await summaries.insert(summary('agent-a', 'c1', 'first summary', minutes(t0, 2), '7'))
      expect(first).toMatchObject({
        agentId: 'agent-a',
        conversationId: 'c1',
        content: 'first summary',
        lastMessageId: '7',
      })
      expect(await summaries.cursor('agent-a', 'c1')).toMatchObject({
        summarisedThroughId: '7',
        lastSummaryAt: minutes(t0, 2),
        pendingTokens: 0,
      })
      expect(await summaries.conversationsWithPendingTurns('agent-a')).toEqual([])
      const second = await summaries.insert(summary('agent-a', 'c2', 'second summary', minutes(t0, 3)))
      await summaries.insert(summary('agent-b', 'c1', 'b summary', minutes(t0, 4)))
      expect((await summaries.list('agent-a', { limit: 10 })).map((s) => s.content)).toEqual([
        'second summary',
        'first summary',
      ])
      expect((await summaries.list('agent-a', { conversationId: 'c1', limit: 10 })).map((s) => s.id)).toEqual(
        [first.id],
      )
      expect(
        (await summaries.list('agent-a', { since: minutes(t0, 3), limit: 10 })).map((s) => s.id),
      ).toEqual([second.id])
      expect(await summaries.list('agent-a', { limit: 1 })).toHaveLength(1)
      expect(await summaries.find('agent-a', first.id)).toMatchObject({ content: 'first summary' })
      // Another agent's id finds nothing, and so does an id that is no row id.
      expect(await summaries.find('agent-b', first.id)).toBeNull()
      expect(await summaries.find('agent-a', 'not-an-id')).toBeNull()
      expect(await summaries.count('agent-a')).toBe(2)
      expect(await summaries.agentsWithSummaries()).toEqual(['agent-a', 'agent-b'])
    })

    it('tells a turn in another conversation of the same agent (a switch), never one of another agent', async () => {
      const { storage, clock } = fixture()
      const t0 = clock.now()
      await agentsWithConversations(storage, t0)
      const { summaries } = storage
      await summaries.recordTurn('agent-a', 'c1', t0, 5)
      expect((await summaries.recordTurn('agent-b', 'c2', minutes(t0, 1), 5)).previous).toBeNull()
      // The jobs the turn calls for are queued with it, decided from what it recorded.
      const { previous } = await summaries.recordTurn('agent-a', 'c2', minutes(t0, 2), 5, (turn) => [
        {
          kind: 'summarize',
          agentId: 'agent-a',
          key: `summary-now:${turn.previous?.conversationId}`,
          payload: { pending: turn.cursor.pendingTokens },
        },
      ])
      const [queued] = await storage.jobs.claim('summarize', 'spec', { limit: 5, leaseMs: 60_000 })
      expect(queued).toMatchObject({ agentId: 'agent-a', key: 'summary-now:c1', payload: { pending: 5 } })
      expect(previous).toMatchObject({
        agentId: 'agent-a',
        conversationId: 'c1',
        lastTurnAt: t0,
        pendingTokens: 5,
      })
      const again = await summaries.recordTurn('agent-a', 'c2', minutes(t0, 3), 5)
      expect(again.previous).toBeNull()
      expect(again.cursor.pendingTokens).toBe(10)
      expect((await summaries.cursor('agent-a', 'c2'))?.pendingTokens).toBe(10)
    })

    it('removes summaries stored before a time, and a deleted conversation’s summaries and cursor', async () => {
      const { storage, clock } = fixture()
      const t0 = clock.now()
      await agentsWithConversations(storage, t0)
      const { summaries } = storage
      expect(await summaries.oldestStoredAt('agent-a')).toBeNull()
      const old = await summaries.insert(summary('agent-a', 'c1', 'old', t0))
      const kept = await summaries.insert(summary('agent-a', 'c2', 'new', minutes(t0, 10)))
      await summaries.insert(summary('agent-b', 'c1', 'b old', t0))
      expect(await summaries.oldestStoredAt('agent-a')).toEqual(t0)
      // What went, with its text: the engine removes its vector, cache entry and embed job next.
      expect(await summaries.deleteStoredBefore('agent-a', minutes(t0, 5))).toEqual([
        { id: old.id, content: 'old' },
      ])
      expect((await summaries.list('agent-a', { limit: 10 })).map((s) => s.content)).toEqual(['new'])
      expect(await summaries.oldestStoredAt('agent-a')).toEqual(minutes(t0, 10))
      expect(await summaries.count('agent-b')).toBe(1)
      expect(await summaries.deleteConversation('agent-a', 'c2')).toEqual([{ id: kept.id, content: 'new' }])
      expect(await summaries.cursor('agent-a', 'c2')).toBeNull()
      expect(await summaries.count('agent-a')).toBe(0)
      // The agent goes with everything it had here.
      await storage.repositories.agents.delete('agent-b')
      expect(await summaries.count('agent-b')).toBe(0)
      expect(await summaries.cursor('agent-b', 'c1')).toBeNull()
      expect(await summaries.agentsWithSummaries()).toEqual([])
    })
  })

  describe(`${initializer.name}: profile versions`, () => {
    const fixture = useFixture(initializer)

    it('numbers versions per agent and user, keeps every one, and pages them newest first', async () => {
      const { storage, clock } = fixture()
      const t0 = clock.now()
      await agentsWithConversations(storage, t0)
      const { profiles } = storage
      expect(await profiles.current('agent-a', 'dana')).toBeNull()
      const v1 = await profiles.insert(version('agent-a', 'dana', '- likes tea', ['1'], t0))
      const v2 = await profiles.insert(
        version('agent-a', 'dana', '- likes coffee', ['1', '2'], minutes(t0, 1)),
      )
      const other = await profiles.insert(version('agent-a', '', '- no user', ['3'], t0))
      const b = await profiles.insert(version('agent-b', 'dana', '- b', ['4'], t0))
      expect([v1.version, v2.version, other.version, b.version]).toEqual([1, 2, 1, 1])
      expect(await profiles.current('agent-a', 'dana')).toEqual(v2)
      expect(v2).toMatchObject({ sourceMemoryIds: ['1', '2'], overrideIds: [], createdAt: minutes(t0, 1) })
      expect(
        (await profiles.list('agent-a', 'dana', { offset: 0, limit: 10 })).map((v) => v.version),
      ).toEqual([2, 1])
      expect(
        (await profiles.list('agent-a', 'dana', { offset: 1, limit: 10 })).map((v) => v.content),
      ).toEqual(['- likes tea'])
      expect(await profiles.count('agent-a', 'dana')).toBe(2)
      expect(await profiles.find('agent-a', 'dana', 1)).toEqual(v1)
      expect(await profiles.find('agent-b', 'dana', 2)).toBeNull()
      expect(await profiles.countAll('agent-a')).toBe(3)
    })

    it('removes the versions built from deleted memories, of that agent only, and goes with the agent', async () => {
      const { storage, clock } = fixture()
      const t0 = clock.now()
      await agentsWithConversations(storage, t0)
      const { profiles } = storage
      await profiles.insert(version('agent-a', 'dana', 'v1', ['1'], t0))
      await profiles.insert(version('agent-a', 'dana', 'v2', ['2'], t0))
      await profiles.insert({ ...version('agent-a', 'eve', 'eve v1', [], t0), overrideIds: ['1'] })
      await profiles.insert(version('agent-b', 'dana', 'b v1', ['1'], t0))
      expect(await profiles.deleteBuiltFrom('agent-a', ['1'])).toEqual(['dana', 'eve'])
      expect(
        (await profiles.list('agent-a', 'dana', { offset: 0, limit: 10 })).map((v) => v.content),
      ).toEqual(['v2'])
      expect(await profiles.count('agent-a', 'eve')).toBe(0)
      expect(await profiles.count('agent-b', 'dana')).toBe(1)
      expect(await profiles.deleteBuiltFrom('agent-a', ['99'])).toEqual([])
      // The next version after a deletion is numbered past the highest kept.
      expect((await profiles.insert(version('agent-a', 'dana', 'v3', [], t0))).version).toBe(3)
      await storage.repositories.agents.delete('agent-a')
      expect(await profiles.countAll('agent-a')).toBe(0)
      expect(await profiles.countAll('agent-b')).toBe(1)
    })
  })
}

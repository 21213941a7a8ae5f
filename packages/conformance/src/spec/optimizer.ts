import type { MemoryEntry, OptimizationSnapshot } from '@engram/core'
import type { OptimizerRunChanges, Storage } from '@engram/engine'
import { describe, expect, it } from 'vitest'
import type { StorageFixture, StorageInitializer } from '../types.ts'
import { useFixture } from './fixture.ts'

const entry = (content: string, timestamp: Date, sessionId: string | null = null) => ({
  type: 'short_term' as const,
  role: 'user' as const,
  content,
  tokenCount: 3,
  relevance: 0.5,
  timestamp,
  sessionId,
})

export const snapshotAt = (timestamp: Date, tokensBefore = 100): OptimizationSnapshot => ({
  tokensBefore,
  tokensAfter: 60,
  entriesCompressed: 1,
  entriesDropped: 1,
  entriesPromoted: 1,
  usageRatio: 0.4,
  compressionTriggerRatio: 0.7,
  fullMessageWindow: 10,
  minRelevanceScore: 0.3,
  timestamp,
  explanation: null,
})

/** A run that changes nothing but records its snapshot. */
export const emptyRun = (timestamp: Date, snapshotHistoryLimit = 500): OptimizerRunChanges => ({
  drops: [],
  promotions: [],
  compressions: [],
  decayed: [],
  decayedAt: timestamp,
  pruned: [],
  snapshot: snapshotAt(timestamp),
  snapshotHistoryLimit,
})

// The SQLite fixture names a conversation's session `${agentId}-${conversationId}`.
const S1 = 'agent-a-s1'
const S2 = 'agent-a-s2'

async function twoAgents(storage: Storage, fixture: StorageFixture) {
  const { agents, memoryEntries } = storage.repositories
  await agents.upsert('agent-a', null)
  await agents.upsert('agent-b', null)
  await agents.upsert('agent-idle', null)
  // Conversations the entries belong to, made where the adapter keeps them (SQLite: session rows).
  for (const conversation of ['s1', 's2'])
    await fixture.addDocuments('messages', [{ agentId: 'agent-a', text: 'hello', sessionId: conversation }])
  const t = fixture.clock.now().getTime()
  const second = await memoryEntries.create('agent-a', entry('second', new Date(t + 2_000), S1))
  const first = await memoryEntries.create('agent-a', entry('first', new Date(t + 1_000), S1))
  const other = await memoryEntries.create('agent-a', entry('other session', new Date(t + 3_000), S2))
  const theirs = await memoryEntries.create('agent-b', entry('b only', new Date(t)))
  return { first, second, other, theirs }
}

/** The optimizer's port: its input read, a run applied as one, and the snapshot history. */
export function describeOptimizer(initializer: StorageInitializer): void {
  describe(`${initializer.name}: optimizer`, () => {
    const fixture = useFixture(initializer)

    it('reads an agent’s entries oldest first (one conversation’s when named) and lists agents with entries', async () => {
      const { storage } = fixture()
      await twoAgents(storage, fixture())
      expect((await storage.optimizer.agentsWithEntries()).sort()).toEqual(['agent-a', 'agent-b'])
      const all = await storage.optimizer.entries('agent-a', null)
      expect(all.map((e) => e.content)).toEqual(['first', 'second', 'other session'])
      expect(all[0]).toMatchObject({ type: 'short_term', role: 'user', isCompressed: false, sessionId: S1 })
      expect(all[0]?.timestamp).toBeInstanceOf(Date)
      expect((await storage.optimizer.entries('agent-a', S2)).map((e) => e.content)).toEqual([
        'other session',
      ])
      expect(await storage.optimizer.entries('agent-idle', null)).toEqual([])
    })

    it('stamps entries without their text, and reads changed ones by id (optional, issue 18)', async () => {
      const { storage, clock } = fixture()
      const { optimizer } = storage
      // Optional: an adapter without them has every run read its entries whole.
      if (!optimizer.entryStamps || !optimizer.entriesByIds) return
      const { first, second, other, theirs } = await twoAgents(storage, fixture())
      const stamps = await optimizer.entryStamps('agent-a', null)
      // The order of entries(), so a run keeping entries lists them as a whole read would.
      expect(stamps.map((s) => s.id)).toEqual((await optimizer.entries('agent-a', null)).map((e) => e.id))
      expect(stamps[0]).toMatchObject({
        id: first.id,
        contentLength: 'first'.length,
        type: 'short_term',
        relevance: 0.5,
        isCompressed: false,
        tokenCount: 3,
      })
      expect((await optimizer.entryStamps('agent-a', S2)).map((s) => s.id)).toEqual([other.id])
      // By id, with the same stamp; another agent's id reads nothing.
      const read = await optimizer.entriesByIds('agent-a', [second.id, theirs.id])
      expect(read.map((r) => r.entry.content)).toEqual(['second'])
      expect(read[0]).toMatchObject({ version: stamps[1]?.version, contentLength: 'second'.length })
      // All of them with their stamps in one read (a first run): entries() and the same stamps.
      const whole = await optimizer.stampedEntries?.('agent-a', null)
      if (whole) {
        // The fields the optimizer reads (an adapter's entries() may carry more of the row).
        const read = (e: MemoryEntry) => [
          e.id,
          e.type,
          e.role,
          e.content,
          e.tokenCount,
          e.relevance,
          e.isCompressed,
          e.timestamp,
          e.sessionId,
        ]
        expect(whole.map((w) => read(w.entry))).toEqual((await optimizer.entries('agent-a', null)).map(read))
        expect(whole.map((w) => [w.entry.id, w.version, w.contentLength])).toEqual(
          stamps.map((s) => [s.id, s.version, s.contentLength]),
        )
      }

      clock.advance(1_000)
      await optimizer.applyRun(
        'agent-a',
        {
          ...emptyRun(clock.now()),
          drops: [first.id],
          promotions: [second.id],
          compressions: [{ entryId: other.id, content: 'short', tokenCount: 1 }],
        },
        async () => {},
      )
      const after = await optimizer.entryStamps('agent-a', null)
      const before = new Map(stamps.map((s) => [s.id, s]))
      expect(after.map((s) => s.id)).toEqual([second.id, other.id])
      expect(after[0]).toMatchObject({ type: 'long_term', relevance: 1 })
      // A rewritten text shows in the stamp: its version or its length changed.
      const compressed = after[1]
      const was = before.get(other.id)
      expect(compressed?.version !== was?.version || compressed?.contentLength !== was?.contentLength).toBe(
        true,
      )
      expect(compressed).toMatchObject({ isCompressed: true, tokenCount: 1 })
      expect((await optimizer.entriesByIds('agent-a', [other.id]))[0]?.entry.content).toBe('short')
    })

    it('applies a run together: drops, promotions, compressions, what runs alongside, and its snapshot', async () => {
      const { storage, clock } = fixture()
      const { first, second, other, theirs } = await twoAgents(storage, fixture())
      const now = clock.now()
      const event = await storage.optimizer.applyRun(
        'agent-a',
        {
          ...emptyRun(now),
          // Another agent's id in a run changes nothing of theirs.
          drops: [first.id, theirs.id],
          promotions: [second.id],
          compressions: [{ entryId: other.id, content: 'short', tokenCount: 1 }],
        },
        async (repositories) => repositories.parameters.put('agent-a', 'minRelevance', 0.42),
      )
      expect(event).toMatchObject({ agentId: 'agent-a', snapshot: snapshotAt(now) })
      expect(typeof event.id).toBe('string')
      const left = await storage.repositories.memoryEntries.list('agent-a', null)
      expect(left.map((e) => [e.content, e.type, e.relevance, e.isCompressed, e.tokenCount])).toEqual([
        ['second', 'long_term', 1, false, 3],
        ['short', 'short_term', 0.5, true, 1],
      ])
      expect(await storage.repositories.memoryEntries.find('agent-b', theirs.id)).not.toBeNull()
      expect(await storage.repositories.parameters.values('agent-a')).toEqual(
        new Map([['minRelevance', 0.42]]),
      )
      expect(await storage.optimizer.lastRunAt('agent-a')).toEqual(now)
      expect(await storage.optimizer.lastRunAt('agent-b')).toBeNull()
      expect(await storage.optimizer.snapshots('agent-a', 10)).toEqual([event])
    })

    it('leaves the agent as it was when the run fails alongside', async () => {
      const { storage, clock } = fixture()
      const { first, second } = await twoAgents(storage, fixture())
      const before = await storage.repositories.memoryEntries.list('agent-a', null)
      await expect(
        storage.optimizer.applyRun(
          'agent-a',
          { ...emptyRun(clock.now()), drops: [first.id], promotions: [second.id] },
          async (repositories) => {
            await repositories.parameters.put('agent-a', 'minRelevance', 0.42)
            throw new Error('disk on fire')
          },
        ),
      ).rejects.toThrow('disk on fire')
      expect(await storage.repositories.memoryEntries.list('agent-a', null)).toEqual(before)
      expect(await storage.repositories.parameters.values('agent-a')).toEqual(new Map())
      expect(await storage.optimizer.snapshots('agent-a', 10)).toEqual([])
      expect(await storage.optimizer.lastRunAt('agent-a')).toBeNull()
    })

    it('keeps the newest snapshots up to the history limit, oldest first, per agent or of all', async () => {
      const { storage, clock } = fixture()
      await twoAgents(storage, fixture())
      const times: Date[] = []
      for (let i = 0; i < 4; i++) {
        times.push(clock.now())
        await storage.optimizer.applyRun('agent-a', emptyRun(clock.now(), 3), async () => {})
        clock.advance(60_000)
      }
      const theirs = await storage.optimizer.applyRun('agent-b', emptyRun(clock.now(), 3), async () => {})
      const ours = await storage.optimizer.snapshots('agent-a', 10)
      expect(ours.map((s) => s.snapshot.timestamp)).toEqual(times.slice(1))
      expect((await storage.optimizer.snapshots('agent-a', 2)).map((s) => s.snapshot.timestamp)).toEqual(
        times.slice(2),
      )
      expect(await storage.optimizer.lastRunAt('agent-a')).toEqual(times[3])
      const all = await storage.optimizer.snapshots(null, 2)
      expect(all.map((s) => s.agentId)).toEqual(['agent-a', 'agent-b'])
      expect(all[1]).toEqual(theirs)
    })
  })
}

/** Knowledge decay inside a run, for adapters that hold knowledge (the fixture adds it as rows). */
export function describeOptimizerKnowledge(initializer: StorageInitializer): void {
  describe(`${initializer.name}: optimizer knowledge decay`, () => {
    const fixture = useFixture(initializer)

    it('reads the agent’s knowledge for decay, and decays and prunes it with the run', async () => {
      const { storage, clock } = fixture()
      const [kept, pruned] = await fixture().addDocuments('knowledge', [
        { agentId: 'agent-a', text: 'the deploy runs on fridays' },
        { agentId: 'agent-a', text: 'an old fact' },
      ])
      const [theirs] = await fixture().addDocuments('knowledge', [{ agentId: 'agent-b', text: 'b knows' }])
      const candidates = await storage.optimizer.decayCandidates('agent-a')
      expect(candidates.map((c) => c.id).sort()).toEqual([kept, pruned].sort())
      expect(candidates[0]).toMatchObject({ confidence: 1, lastUsedAt: null, lastDecayAt: null })
      expect(candidates[0]?.createdAt).toBeInstanceOf(Date)
      const at = clock.now()
      await storage.optimizer.applyRun(
        'agent-a',
        {
          ...emptyRun(at),
          decayed: [{ id: String(kept), confidence: 0.8 }],
          pruned: [String(pruned), String(theirs)],
        },
        async () => {},
      )
      expect(await storage.optimizer.decayCandidates('agent-a')).toEqual([
        expect.objectContaining({ id: kept, confidence: 0.8, lastDecayAt: at }),
      ])
      expect((await storage.optimizer.decayCandidates('agent-b')).map((c) => c.id)).toEqual([theirs])
    })
  })
}

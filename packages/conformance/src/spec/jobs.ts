import { describe, expect, it } from 'vitest'
import type { StorageInitializer } from '../types.ts'
import { useFixture } from './fixture.ts'

const LEASE = { limit: 10, leaseMs: 60_000 }

export function describeJobs(initializer: StorageInitializer): void {
  describe(`${initializer.name}: jobs`, () => {
    const fixture = useFixture(initializer)

    async function queueWithAgents() {
      const { storage, clock } = fixture()
      await storage.repositories.agents.upsert('agent-a', null)
      await storage.repositories.agents.upsert('agent-b', null)
      return { jobs: storage.jobs, clock }
    }

    it('queues a key once while it is pending, and hands a job to one lease holder at a time', async () => {
      const { jobs, clock } = await queueWithAgents()
      expect(
        await jobs.enqueue([
          { kind: 'embed', agentId: 'agent-a', key: 'embed:1' },
          { kind: 'embed', agentId: 'agent-a', key: 'embed:1' },
          { kind: 'embed', agentId: 'agent-b', key: 'embed:1' },
        ]),
      ).toBe(2)
      const first = await jobs.claim('embed', 'worker-1', LEASE)
      const second = await jobs.claim('embed', 'worker-2', LEASE)
      expect(first.map((j) => j.agentId).sort()).toEqual(['agent-a', 'agent-b'])
      expect(second).toEqual([])
      // The lease expires (its worker is presumed dead): another worker takes the job over.
      clock.advance(60_001)
      const retaken = await jobs.claim('embed', 'worker-2', LEASE)
      expect(retaken.map((j) => [j.agentId, j.attempts])).toEqual([
        ['agent-a', 2],
        ['agent-b', 2],
      ])
      // The first worker's late completion is ignored: the lease is no longer its.
      await jobs.complete(
        first.map((j) => j.id),
        'worker-1',
      )
      expect((await jobs.stats(['embed']))[0]).toMatchObject({ kind: 'embed', running: 2 })
      await jobs.complete(
        retaken.map((j) => j.id),
        'worker-2',
      )
      expect((await jobs.stats(['embed']))[0]).toMatchObject({ pending: 0, running: 0, failed: 0 })
    })

    it('runs the jobs of one key in order, retries at the given time, and dead-letters without one', async () => {
      const { jobs, clock } = await queueWithAgents()
      await jobs.enqueue([{ kind: 'embed', agentId: 'agent-a', key: 'k', payload: { n: 1 } }])
      const [first] = await jobs.claim('embed', 'w', LEASE)
      await jobs.fail(first?.id as number, 'w', 'provider down', new Date(clock.now().getTime() + 5_000))
      expect(await jobs.hasDue('embed', 'agent-a')).toBe(false)
      clock.advance(5_000)
      expect(await jobs.hasDue('embed', 'agent-a')).toBe(true)
      expect(await jobs.hasDue('embed', 'agent-b')).toBe(false)
      const [again] = await jobs.claim('embed', 'w', { ...LEASE, agentId: 'agent-a' })
      expect(again).toMatchObject({ payload: { n: 1 }, attempts: 2, lastError: 'provider down' })
      // A later job of the same key waits for the running one.
      await jobs.enqueue([{ kind: 'embed', agentId: 'agent-a', key: 'k', payload: { n: 2 } }])
      expect(await jobs.claim('embed', 'w2', LEASE)).toEqual([])
      await jobs.fail(again?.id as number, 'w', 'still down', null)
      const [next] = await jobs.claim('embed', 'w', LEASE)
      expect(next?.payload).toEqual({ n: 2 })
      expect((await jobs.stats())[0]).toMatchObject({ failed: 1, running: 1 })
    })

    it('reports lag from creation, and the due lag only from when a job comes due', async () => {
      const { jobs, clock } = await queueWithAgents()
      const at = (ms: number) => new Date(clock.now().getTime() + ms)
      await jobs.enqueue([
        { kind: 'extract', agentId: 'agent-a', key: 'extract:c1', runAfter: at(5_000) },
        { kind: 'extract', agentId: 'agent-a', key: 'extract:c2', runAfter: at(8_000) },
      ])
      // Debounced, not behind: pending for 3 s, due for none of it.
      clock.advance(3_000)
      expect((await jobs.stats(['extract']))[0]).toMatchObject({
        pending: 2,
        oldestPendingAgeMs: 3_000,
        oldestDueAgeMs: 0,
      })
      clock.advance(4_000)
      expect((await jobs.stats(['extract']))[0]).toMatchObject({
        oldestPendingAgeMs: 7_000,
        oldestDueAgeMs: 2_000,
      })
    })

    it('postpones the pending job of a key for a debounced job, never earlier, and not a running one', async () => {
      const { jobs, clock } = await queueWithAgents()
      const at = (ms: number) => new Date(clock.now().getTime() + ms)
      const debounced = (ms: number) => ({
        kind: 'extract',
        agentId: 'agent-a',
        key: 'extract:c1',
        runAfter: at(ms),
        postpone: true,
      })
      expect(await jobs.enqueue([debounced(5_000)])).toBe(1)
      clock.advance(3_000)
      expect(await jobs.enqueue([debounced(5_000)])).toBe(0)
      // An earlier time does not pull the job forward; a plain job of the key changes nothing.
      expect(await jobs.enqueue([debounced(1_000)])).toBe(0)
      await jobs.enqueue([{ kind: 'extract', agentId: 'agent-a', key: 'extract:c1' }])
      // Another agent's key of the same name is its own.
      await jobs.enqueue([{ ...debounced(0), agentId: 'agent-b' }])
      clock.advance(4_999)
      expect((await jobs.claim('extract', 'w', LEASE)).map((j) => j.agentId)).toEqual(['agent-b'])
      clock.advance(1)
      const [job] = await jobs.claim('extract', 'w', LEASE)
      expect(job).toMatchObject({ agentId: 'agent-a', key: 'extract:c1' })
      // While it runs, a new turn queues the next job instead of moving the running one.
      expect(await jobs.enqueue([debounced(5_000)])).toBe(1)
      expect((await jobs.stats(['extract']))[0]).toMatchObject({ pending: 1, running: 2 })
    })

    it("cancels an agent's pending and dead-lettered jobs of the keys named, leaving running ones and other agents'", async () => {
      const { jobs } = await queueWithAgents()
      await jobs.enqueue([
        { kind: 'extract', agentId: 'agent-a', key: 'extract:c1' },
        { kind: 'extract', agentId: 'agent-a', key: 'extract:c2' },
        { kind: 'extract', agentId: 'agent-a', key: 'extract:c3' },
        { kind: 'extract', agentId: 'agent-b', key: 'extract:c1' },
      ])
      const claimed = await jobs.claim('extract', 'w', { ...LEASE, limit: 4, agentId: 'agent-a' })
      const byKey = new Map(claimed.map((j) => [j.key, j.id]))
      await jobs.fail(byKey.get('extract:c2') as number, 'w', 'model down', null)
      await jobs.complete([byKey.get('extract:c3') as number], 'w')
      await jobs.enqueue([{ kind: 'extract', agentId: 'agent-a', key: 'extract:c3' }])
      // c1 runs, c2 is a dead letter, c3 pending again.
      expect(await jobs.cancel('agent-a', ['extract:c1', 'extract:c2', 'extract:c3'])).toBe(2)
      expect(await jobs.cancel('agent-a', [])).toBe(0)
      expect((await jobs.stats(['extract']))[0]).toMatchObject({ pending: 1, running: 1, failed: 0 })
      expect(await jobs.hasDue('extract', 'agent-b')).toBe(true)
    })

    it("counts an agent's jobs of a kind by state, also by a field their payloads lack (formation's queue depth)", async () => {
      const { jobs } = await queueWithAgents()
      await jobs.enqueue([
        { kind: 'extract', agentId: 'agent-a', key: 'extract:c1', payload: { conversationId: 'c1' } },
        { kind: 'extract', agentId: 'agent-a', key: 'extract:c2', payload: { conversationId: 'c2' } },
        { kind: 'extract', agentId: 'agent-a', key: 'extract:c3' },
        { kind: 'extract', agentId: 'agent-b', key: 'extract:c1', payload: { conversationId: 'c1' } },
        { kind: 'summarize', agentId: 'agent-a', key: 'summary:c1', payload: { trigger: 'debounce' } },
      ])
      await jobs.claim('extract', 'w', { ...LEASE, limit: 1, agentId: 'agent-a' })
      const byState = (rows: { state: string; count: number }[]) => {
        const totals: Record<string, number> = {}
        for (const row of rows) totals[row.state] = (totals[row.state] ?? 0) + row.count
        return totals
      }
      // Grouped by a field no extract payload has: one group per state, every job counted.
      expect(byState(await jobs.countByPayload('extract', 'trigger', 'agent-a'))).toEqual({
        pending: 2,
        running: 1,
      })
      expect(byState(await jobs.countByPayload('extract', 'trigger', 'agent-b'))).toEqual({ pending: 1 })
      expect(byState(await jobs.countByPayload('extract', 'trigger', null))).toEqual({
        pending: 3,
        running: 1,
      })
    })

    it('wakes a listener when jobs are queued', async () => {
      const { jobs } = await queueWithAgents()
      let woken = 0
      const stop = jobs.onEnqueued(() => woken++)
      await jobs.enqueue([{ kind: 'embed', agentId: 'agent-a', key: 'x' }])
      await jobs.enqueue([{ kind: 'embed', agentId: 'agent-a', key: 'x' }])
      stop()
      await jobs.enqueue([{ kind: 'embed', agentId: 'agent-a', key: 'y' }])
      expect(woken).toBe(1)
    })

    it('gives a job to one of two stores sharing a database, never both', async () => {
      const { storage } = fixture()
      const other = await fixture().openAnother()
      if (!other) return // one process only (the in-memory store)
      await storage.repositories.agents.upsert('agent-a', null)
      await storage.jobs.enqueue(
        Array.from({ length: 20 }, (_, i) => ({ kind: 'embed', agentId: 'agent-a', key: `k${i}` })),
      )
      const [a, b] = await Promise.all([
        storage.jobs.claim('embed', 'process-1', { limit: 20, leaseMs: 60_000 }),
        other.jobs.claim('embed', 'process-2', { limit: 20, leaseMs: 60_000 }),
      ])
      const ids = [...a, ...b].map((j) => j.id)
      expect(ids).toHaveLength(20)
      expect(new Set(ids).size).toBe(20)
    })

    it('hands each job to one of many concurrent claims across stores, completes it once, and reclaims an expired lease once', async () => {
      const { storage, clock } = fixture()
      // Replicas on one database (one store alone where the adapter has no second process).
      const others = await Promise.all([fixture().openAnother(), fixture().openAnother()])
      const stores = [storage, ...others.flatMap((other) => (other ? [other] : []))]
      await storage.repositories.agents.upsert('agent-a', null)
      await storage.repositories.agents.upsert('agent-b', null)
      const queued = await storage.jobs.enqueue(
        Array.from({ length: 60 }, (_, i) => ({
          kind: 'embed',
          agentId: i % 2 === 0 ? 'agent-a' : 'agent-b',
          key: `k${i}`,
        })),
      )
      expect(queued).toBe(60)
      // Rounds of claims all at once, four per store with small limits, so they contend for the
      // same oldest rows; each worker completes what it took before the next round.
      const takenBy = new Map<number, string>()
      const completions = new Map<number, number>()
      for (let round = 0; round < 20 && takenBy.size < 60; round++) {
        const workers = stores.flatMap((store, s) =>
          Array.from({ length: 4 }, (_, w) => ({ store, id: `replica-${s}-worker-${w}` })),
        )
        const claims = await Promise.all(
          workers.map(async ({ store, id }) => ({
            store,
            id,
            jobs: await store.jobs.claim('embed', id, { limit: 3, leaseMs: 60_000 }),
          })),
        )
        for (const { id, jobs } of claims)
          for (const job of jobs) {
            expect(
              takenBy.get(job.id),
              `job ${job.id} taken by ${takenBy.get(job.id)} and ${id}`,
            ).toBeUndefined()
            takenBy.set(job.id, id)
          }
        await Promise.all(
          claims.map(async ({ store, id, jobs }) => {
            await store.jobs.complete(
              jobs.map((j) => j.id),
              id,
            )
            for (const job of jobs) completions.set(job.id, (completions.get(job.id) ?? 0) + 1)
          }),
        )
      }
      expect(takenBy.size).toBe(60)
      expect([...completions.values()].every((n) => n === 1)).toBe(true)
      expect((await storage.jobs.stats(['embed']))[0]).toMatchObject({ pending: 0, running: 0, failed: 0 })

      // A worker dies holding leases: once they expire, the jobs go to exactly one new holder each.
      await storage.jobs.enqueue(
        Array.from({ length: 12 }, (_, i) => ({ kind: 'embed', agentId: 'agent-a', key: `late${i}` })),
      )
      const held = await storage.jobs.claim('embed', 'dead-worker', { limit: 12, leaseMs: 30_000 })
      expect(held).toHaveLength(12)
      const beforeExpiry = await Promise.all(
        stores.map((store, s) => store.jobs.claim('embed', `early-${s}`, { limit: 12, leaseMs: 30_000 })),
      )
      expect(beforeExpiry.flat()).toEqual([])
      clock.advance(30_000)
      const reclaims = await Promise.all(
        stores.flatMap((store, s) =>
          Array.from({ length: 3 }, (_, w) =>
            store.jobs.claim('embed', `heir-${s}-${w}`, { limit: 4, leaseMs: 30_000 }),
          ),
        ),
      )
      const reclaimed = reclaims.flat()
      expect(reclaimed.map((j) => j.id).sort((a, b) => a - b)).toEqual(held.map((j) => j.id))
      expect(reclaimed.every((j) => j.attempts === 2 && j.leaseOwner?.startsWith('heir-'))).toBe(true)
      // The dead worker's late completion is ignored; the heirs' own completes them.
      await storage.jobs.complete(
        held.map((j) => j.id),
        'dead-worker',
      )
      expect((await storage.jobs.stats(['embed']))[0]).toMatchObject({ running: 12 })
      await Promise.all(reclaimed.map((job) => storage.jobs.complete([job.id], job.leaseOwner as string)))
      expect((await storage.jobs.stats(['embed']))[0]).toMatchObject({ pending: 0, running: 0, failed: 0 })
    })
  })
}

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
  })
}

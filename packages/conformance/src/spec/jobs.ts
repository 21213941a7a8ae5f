import { JobWorker, SILENT_LOGGER, type Storage, yieldToRequests } from '@engram/engine'
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

    it('extends a lease for its holder only, and no other worker takes the job meanwhile', async () => {
      const { jobs, clock } = await queueWithAgents()
      await jobs.enqueue([{ kind: 'embed', agentId: 'agent-a', key: 'k' }])
      const [job] = await jobs.claim('embed', 'worker-1', { limit: 1, leaseMs: 10_000 })
      const id = job?.id as number
      clock.advance(8_000)
      expect(await jobs.extend([id], 'worker-2', 60_000)).toBe(0)
      expect(await jobs.extend([id], 'worker-1', 10_000)).toBe(1)
      // Past the first lease, within the extended one: not due.
      clock.advance(9_000)
      expect(await jobs.claim('embed', 'worker-2', LEASE)).toEqual([])
      expect(await jobs.hasDue('embed', 'agent-a')).toBe(false)
      clock.advance(1_000)
      expect((await jobs.claim('embed', 'worker-2', LEASE)).map((j) => j.id)).toEqual([id])
      // Taken over: its first worker extends nothing now.
      expect(await jobs.extend([id], 'worker-1', 10_000)).toBe(0)
      expect(await jobs.extend([], 'worker-2', 10_000)).toBe(0)
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

/** Which worker ran which job's side effect, in order: exactly-once is checked on it. */
interface SideEffects {
  runs: { key: string; worker: string }[]
  /** Keys a worker had in hand when it died. */
  diedHolding: string[]
  timesRun(key: string): number
}

function sideEffects(): SideEffects {
  const runs: { key: string; worker: string }[] = []
  return { runs, diedHolding: [], timesRun: (key) => runs.filter((run) => run.key === key).length }
}

/**
 * The durable queue consumed by several workers at once, each on its own store of the one
 * database (as replicas in separate processes would be, through openAnother): every job's side
 * effect happens exactly once, and a worker that dies holding jobs loses them to another once
 * their lease expires, still once. For any adapter whose initializer opens another store
 * (SQLite; Postgres's claim with FOR UPDATE SKIP LOCKED when it comes).
 */
export function describeJobsAcrossWorkers(initializer: StorageInitializer): void {
  describe(`${initializer.name}: jobs consumed by several workers on one database`, () => {
    const fixture = useFixture(initializer)
    const KIND = 'replica-count'
    const POLICY = { batchSize: 4, leaseMs: 60_000, maxAttempts: 3 }

    /** Three stores on the one database (null: the adapter is one process only). */
    async function stores(): Promise<Storage[] | null> {
      const { storage } = fixture()
      const others = [await fixture().openAnother(), await fixture().openAnother()]
      if (others.some((other) => other === null)) return null
      return [storage, ...(others as Storage[])]
    }

    function worker(storage: Storage, effects: SideEffects, hang?: Promise<never>): JobWorker {
      const created = new JobWorker(storage.jobs, fixture().clock, SILENT_LOGGER, 60_000, 0)
      created.register(
        KIND,
        async (jobs) => {
          // A worker that dies mid-job: it holds the jobs and never gets to their side effect.
          if (hang) {
            effects.diedHolding.push(...jobs.map((job) => job.key))
            await hang
          }
          // Other workers' calls interleave here, as they would between processes.
          await yieldToRequests()
          for (const job of jobs) effects.runs.push({ key: job.key, worker: created.id })
          return undefined
        },
        POLICY,
      )
      return created
    }

    async function enqueue(storage: Storage, count: number): Promise<string[]> {
      for (const agent of ['agent-a', 'agent-b']) await storage.repositories.agents.upsert(agent, null)
      const keys = Array.from({ length: count }, (_, i) => `job-${i}`)
      await storage.jobs.enqueue(
        keys.map((key, i) => ({ kind: KIND, agentId: i % 2 === 0 ? 'agent-a' : 'agent-b', key })),
      )
      return keys
    }

    it('runs each job exactly once with three workers draining at the same time', async () => {
      const all = await stores()
      if (!all) return
      const effects = sideEffects()
      const keys = await enqueue(all[0] as Storage, 60)
      const workers = all.map((storage) => worker(storage, effects))
      // Each drains until nothing is due; all three claim side by side from the start.
      const ran = await Promise.all(workers.map((w) => w.runDue()))
      expect(ran.reduce((sum, n) => sum + n, 0)).toBe(60)
      expect(keys.filter((key) => effects.timesRun(key) !== 1)).toEqual([])
      expect(effects.runs).toHaveLength(60)
      expect((await all[1]?.jobs.stats([KIND]))?.[0]).toMatchObject({ pending: 0, running: 0, failed: 0 })
    })

    it('hands the jobs of a worker that died mid-job to another once their lease expires, once', async () => {
      const all = await stores()
      if (!all) return
      const [first, second, third] = all as [Storage, Storage, Storage]
      const { clock } = fixture()
      const effects = sideEffects()
      const keys = await enqueue(first, 12)
      // The first worker claims a batch and dies holding it (its handler never returns).
      const dying = worker(first, effects, new Promise<never>(() => {}))
      void dying.runDue()
      await waitUntil(async () => effects.diedHolding.length === POLICY.batchSize)
      const held = effects.diedHolding
      const survivors = [worker(second, effects), worker(third, effects)]
      await Promise.all(survivors.map((w) => w.runDue()))
      // Everything but the dead worker's batch ran once; its batch waits for the lease.
      expect(effects.runs).toHaveLength(12 - POLICY.batchSize)
      expect((await third.jobs.stats([KIND]))[0]).toMatchObject({ pending: 0, running: POLICY.batchSize })
      clock.advance(POLICY.leaseMs - 1)
      expect(await Promise.all(survivors.map((w) => w.runDue()))).toEqual([0, 0])
      clock.advance(1)
      await Promise.all(survivors.map((w) => w.runDue()))
      expect(held.filter((key) => effects.timesRun(key) !== 1)).toEqual([])
      expect(keys.filter((key) => effects.timesRun(key) !== 1)).toEqual([])
      expect(effects.runs).toHaveLength(12)
      expect(effects.runs.some((run) => run.worker === dying.id)).toBe(false)
      expect((await first.jobs.stats([KIND]))[0]).toMatchObject({ pending: 0, running: 0, failed: 0 })
    })

    it('keeps a batch that runs longer than its lease with its live worker (renewed), run once', async () => {
      const all = await stores()
      if (!all) return
      const [first, second] = all as [Storage, Storage]
      const { clock } = fixture()
      const effects = sideEffects()
      const keys = await enqueue(first, POLICY.batchSize)
      // A slow handler (a model taking its time), not a dead one: it finishes once released.
      let release: () => void = () => {}
      let started = false
      const slow = new JobWorker(first.jobs, clock, SILENT_LOGGER, 60_000, 0)
      slow.register(
        KIND,
        async (jobs) => {
          started = true
          await new Promise<void>((resolve) => {
            release = resolve
          })
          for (const job of jobs) effects.runs.push({ key: job.key, worker: slow.id })
          return undefined
        },
        POLICY,
      )
      const running = slow.runDue()
      await waitUntil(async () => started)
      const other = worker(second, effects)
      // Three lease lengths pass while it works; it renews at each third, so nobody takes it.
      for (let step = 0; step < 9; step++) {
        clock.advance(POLICY.leaseMs / 3)
        await slow.renewLeases()
        expect(await other.runDue()).toBe(0)
      }
      release()
      expect(await running).toBe(POLICY.batchSize)
      expect(keys.filter((key) => effects.timesRun(key) !== 1)).toEqual([])
      expect((await second.jobs.stats([KIND]))[0]).toMatchObject({ pending: 0, running: 0, failed: 0 })
    })

    it("ignores a stalled worker's late completion of jobs another worker took over", async () => {
      const all = await stores()
      if (!all) return
      const [first, second] = all as [Storage, Storage]
      const { clock } = fixture()
      await enqueue(first, 2)
      const stalled = await first.jobs.claim(KIND, 'stalled', { limit: 2, leaseMs: 1_000 })
      clock.advance(1_000)
      const retaken = await second.jobs.claim(KIND, 'successor', { limit: 2, leaseMs: 60_000 })
      expect(retaken.map((job) => job.attempts)).toEqual([2, 2])
      await first.jobs.complete(
        stalled.map((job) => job.id),
        'stalled',
      )
      await first.jobs.fail(stalled[0]?.id as number, 'stalled', 'late', null)
      // Still the successor's, running: neither deleted nor dead-lettered by the stalled worker.
      expect((await second.jobs.stats([KIND]))[0]).toMatchObject({ running: 2, failed: 0 })
      await second.jobs.complete(
        retaken.map((job) => job.id),
        'successor',
      )
      expect((await second.jobs.stats([KIND]))[0]).toMatchObject({ pending: 0, running: 0, failed: 0 })
    })
  })
}

/** Polls (a few ms apart) until `done` holds; the claim of a dying worker lands asynchronously. */
async function waitUntil(done: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await done()) return
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  throw new Error('condition not met')
}

import { type Logger, optimizerLeaseKey, SILENT_LOGGER } from '@engram/engine'
import { optimizerOnMemory } from '@engram/engine/testing'
import { type RedisServer, startRedis } from '@engram/test-servers'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { leaseKey, RedisLease } from './redis-lease.ts'

/** Polls with short waits until `done` holds or the deadline passes (no wait longer than 20 ms). */
async function waitFor(done: () => boolean | Promise<boolean>, deadlineMs = 1_000): Promise<number> {
  const started = Date.now()
  while (!(await done())) {
    if (Date.now() - started > deadlineMs) throw new Error('condition not met before the deadline')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return Date.now() - started
}

describe('RedisLease on a real redis-server', () => {
  let redis: RedisServer
  let inspect: Redis
  const leases: RedisLease[] = []
  const lease = (prefix = 'engram-test') => {
    const created = new RedisLease({ url: redis.url, prefix, reconnectMaxDelayMs: 100 })
    leases.push(created)
    return created
  }

  beforeAll(async () => {
    redis = await startRedis()
    inspect = new Redis(redis.url)
  })
  afterAll(async () => {
    for (const created of leases) created.close()
    inspect?.disconnect()
    await redis?.stop()
  })

  it('gives a key to one holder, under <prefix>:lease:<key> with the TTL as PX', async () => {
    const [one, two] = [lease(), lease()]
    const key = optimizerLeaseKey('agent-exclusive')
    expect(await one.acquire(key, 'replica-1', 5_000)).toBe(true)
    expect(await two.acquire(key, 'replica-2', 5_000)).toBe(false)
    // Its holder asks again: still its own, with a fresh TTL.
    expect(await one.acquire(key, 'replica-1', 5_000)).toBe(true)
    expect(await inspect.get('engram-test:lease:optimizer:agent-exclusive')).toBe('replica-1')
    expect(leaseKey('engram-test', key)).toBe('engram-test:lease:optimizer:agent-exclusive')
    const ttl = await inspect.pttl('engram-test:lease:optimizer:agent-exclusive')
    expect(ttl).toBeGreaterThan(4_000)
    expect(ttl).toBeLessThanOrEqual(5_000)
    expect(await two.holderOf(key)).toBe('replica-1')
    expect(await two.remainingMs(key)).toBeGreaterThan(4_000)
    expect(await two.remainingMs(optimizerLeaseKey('agent-nobody'))).toBeNull()
  })

  it('renews and releases only for the holder', async () => {
    const [one, two] = [lease(), lease()]
    const key = optimizerLeaseKey('agent-cas')
    await one.acquire(key, 'replica-1', 1_000)
    expect(await two.renew(key, 'replica-2', 60_000)).toBe(false)
    expect(await two.release(key, 'replica-2')).toBe(false)
    expect(await inspect.pttl(leaseKey('engram-test', key))).toBeLessThanOrEqual(1_000)
    expect(await one.renew(key, 'replica-1', 60_000)).toBe(true)
    expect(await inspect.pttl(leaseKey('engram-test', key))).toBeGreaterThan(59_000)
    expect(await one.release(key, 'replica-1')).toBe(true)
    expect(await one.release(key, 'replica-1')).toBe(false)
    expect(await one.renew(key, 'replica-1', 1_000)).toBe(false)
    expect(await two.acquire(key, 'replica-2', 1_000)).toBe(true)
  })

  it('lets a lease lapse after its TTL, and keeps one its holder renews', async () => {
    const [one, two] = [lease(), lease()]
    const lapsing = optimizerLeaseKey('agent-lapsing')
    const renewed = optimizerLeaseKey('agent-renewed')
    await one.acquire(renewed, 'replica-1', 250)
    await one.acquire(lapsing, 'replica-1', 600)
    const lapsesAt = Date.now() + ((await one.remainingMs(lapsing)) ?? 0)
    await waitFor(async () => {
      await one.renew(renewed, 'replica-1', 250)
      return two.acquire(lapsing, 'replica-2', 5_000)
    })
    // Not a moment before Redis let it lapse.
    expect(Date.now()).toBeGreaterThanOrEqual(lapsesAt - 5)
    // Renewed every 20 ms, for more than twice its 250 ms TTL: still the first holder's.
    expect(await two.acquire(renewed, 'replica-2', 5_000)).toBe(false)
    expect(await inspect.get(leaseKey('engram-test', renewed))).toBe('replica-1')
  })

  it('keeps deployments with different prefixes apart', async () => {
    const key = optimizerLeaseKey('agent-prefix')
    expect(await lease('deployment-a').acquire(key, 'replica-1', 5_000)).toBe(true)
    expect(await lease('deployment-b').acquire(key, 'replica-2', 5_000)).toBe(true)
  })

  it('fails a call while Redis cannot be reached, rather than granting', async () => {
    const nowhere = new RedisLease({ url: 'redis://127.0.0.1:1', prefix: 'x', reconnectMaxDelayMs: 100 })
    leases.push(nowhere)
    await expect(nowhere.acquire('optimizer:a', 'replica-1', 1_000)).rejects.toThrow()
  })

  describe('two optimizer services, as two replicas on one database', () => {
    const TTL_MS = 600
    const RENEW_MS = 100

    function replicas() {
      const { storage, optimizer, addAgents } = optimizerOnMemory({ now: () => new Date() })
      const replica = (log: Logger = SILENT_LOGGER) => {
        const leaseStore = lease()
        // The schedule's cycles are driven by the test; the renewal timer runs for real.
        const settings = { intervalMs: 3_600_000, leaseTtlMs: TTL_MS, leaseRenewMs: RENEW_MS }
        return { optimizer: optimizer(settings, { log, lease: leaseStore }), leaseStore }
      }
      const runsOf = async (agent: string) =>
        (await storage.optimizer.snapshots(agent, 100)).map((event) => event.snapshot.timestamp.getTime())
      return { replica, addAgents, runsOf }
    }

    it('one runs each agent; renewal keeps it past the TTL; killed without release, the other takes over after the TTL, once', async () => {
      const { replica, addAgents, runsOf } = replicas()
      const a = replica()
      const b = replica()
      await addAgents('agent-r1', 'agent-r2')
      await a.optimizer.runAll()
      await b.optimizer.runAll()
      expect(await runsOf('agent-r1')).toHaveLength(1)
      expect(await runsOf('agent-r2')).toHaveLength(1)
      expect(await a.leaseStore.holderOf(optimizerLeaseKey('agent-r1'))).toBe(a.optimizer.holder)
      // A's renewal timer keeps its agents for twice the TTL: B's cycles skip them all along.
      a.optimizer.start()
      const until = Date.now() + 2 * TTL_MS
      while (Date.now() < until) {
        await b.optimizer.runAll()
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      expect(await runsOf('agent-r1')).toHaveLength(1)
      expect(b.optimizer.heldLeases()).toEqual([])
      // A dies: its connection to Redis is gone, nothing is released, no renewal arrives.
      // When its lease would lapse with no renewal from now (a loaded machine may have delayed
      // the last one: that, not the renewal interval, bounds the takeover from below).
      const readAt = Date.now()
      const lapsesAt = readAt + ((await b.leaseStore.remainingMs(optimizerLeaseKey('agent-r1'))) ?? 0)
      const diedAt = Date.now()
      a.leaseStore.close()
      await waitFor(async () => {
        await b.optimizer.runAll()
        return (await runsOf('agent-r1')).length === 2
      }, TTL_MS + 500)
      expect(Date.now()).toBeGreaterThanOrEqual(lapsesAt - 5)
      expect(Date.now() - diedAt).toBeLessThanOrEqual(TTL_MS + 600)
      // agent-r2 too (its lease may have lapsed a cycle earlier than r1's: then B has run it in
      // each of its cycles since, which are the test's loop, not duplicates).
      expect((await runsOf('agent-r2')).length).toBeGreaterThanOrEqual(2)
      expect(await b.leaseStore.holderOf(optimizerLeaseKey('agent-r2'))).toBe(b.optimizer.holder)
      expect(await b.leaseStore.holderOf(optimizerLeaseKey('agent-r1'))).toBe(b.optimizer.holder)
      await a.optimizer.stop()
      await b.optimizer.stop()
      // Stopped, B released its agents at once.
      expect(await inspect.exists(leaseKey('engram-test', optimizerLeaseKey('agent-r1')))).toBe(0)
    })
  })
})

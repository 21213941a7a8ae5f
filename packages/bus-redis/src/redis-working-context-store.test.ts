import { type Clock, emptyWorkingContext, type TokenCounter, UnavailableError } from '@engram/core'
import { createEngine, SILENT_LOGGER } from '@engram/engine'
import { createInMemoryStorage } from '@engram/engine/testing'
import { type RedisServer, startRedis } from '@engram/test-servers'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { workingContextKey } from './redis-keys.ts'
import { RedisWorkingContextStore } from './redis-working-context-store.ts'

const PREFIX = 'wc-test'
const clock: Clock = { now: () => new Date('2026-02-01T12:00:00.000Z') }
const words: TokenCounter = { name: 'o200k_base', count: (text) => text.split(/\s+/).filter(Boolean).length }

/** Polls with short waits until `done` holds (no wait longer than 20 ms). */
async function waitFor(done: () => boolean, deadlineMs = 5_000): Promise<void> {
  const until = Date.now() + deadlineMs
  while (!done()) {
    if (Date.now() > until) throw new Error('condition not met before the deadline')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe('RedisWorkingContextStore on a real redis-server (spec 002 L1 shared by replicas)', () => {
  let redis: RedisServer
  let raw: Redis
  const stores: RedisWorkingContextStore[] = []
  const open = async (url = redis.url) => {
    const store = new RedisWorkingContextStore({
      url,
      prefix: PREFIX,
      log: SILENT_LOGGER,
      reconnectMaxDelayMs: 100,
    })
    stores.push(store)
    await waitFor(() => store.status() === 'up')
    return store
  }
  /** A replica: an engine of its own (its own LRU) on the shared store. */
  const replica = (store: RedisWorkingContextStore) =>
    createEngine({
      storage: createInMemoryStorage(clock),
      clock,
      tokenCounter: words,
      log: SILENT_LOGGER,
      formation: { automatic: false },
      automaticSummaries: false,
      workingContext: { store },
    }).workingContext

  beforeAll(async () => {
    redis = await startRedis()
    raw = new Redis(redis.url)
  })
  beforeEach(async () => {
    await raw.flushall()
  })
  afterAll(async () => {
    for (const store of stores) store.close()
    raw?.disconnect()
    await redis?.stop()
  })

  it('writes only over the version it read, with a PX TTL, and answers `unchanged` to a current copy', async () => {
    const store = await open()
    const first = { ...emptyWorkingContext('agent-a'), scratchpad: 'one', version: 'v1' }
    expect(await store.read('agent-a', null)).toBeNull()
    expect(await store.write('agent-a', null, first, 60_000)).toBe(true)
    // Someone else's expectation of "none held" is now stale.
    expect(await store.write('agent-a', null, { ...first, version: 'v-other' }, 60_000)).toBe(false)
    expect(await store.read('agent-a', 'v1')).toBe('unchanged')
    expect(await store.read('agent-a', 'v0')).toEqual(first)
    expect(await store.write('agent-a', 'v1', { ...first, scratchpad: 'two', version: 'v2' }, 60_000)).toBe(
      true,
    )
    const key = workingContextKey(PREFIX, 'agent-a')
    expect(key).toBe('wc-test:wc:agent-a')
    const ttl = await raw.pttl(key)
    expect(ttl).toBeGreaterThan(50_000)
    expect(ttl).toBeLessThanOrEqual(60_000)
    expect(await store.keysOf('agent-a')).toBe(1)
    await store.remove('agent-a')
    expect(await store.read('agent-a', 'v2')).toBeNull()
  })

  it('two replicas appending at once lose nothing and see one working context', async () => {
    const store = await open()
    const one = replica(store)
    const two = replica(await open())
    await Promise.all(
      Array.from({ length: 15 }, (_, i) => [
        one.append('agent-a', [{ role: 'user', content: `one-${i}` }]),
        two.append('agent-a', [{ role: 'assistant', content: `two-${i}` }]),
      ]).flat(),
    )
    const seenByOne = (await one.get('agent-a')).messages.map((m) => m.content).sort()
    const seenByTwo = (await two.get('agent-a')).messages.map((m) => m.content).sort()
    expect(seenByOne).toHaveLength(30)
    expect(seenByTwo).toEqual(seenByOne)
    await two.setScratchpad('agent-a', 'set on two')
    expect((await one.get('agent-a')).scratchpad).toBe('set on two')
    await one.clear('agent-a')
    expect((await two.get('agent-a')).messages).toEqual([])
  })

  it('forgets one agent’s key, or every agent’s, and leaves other kinds of key alone', async () => {
    const store = await open()
    const context = { ...emptyWorkingContext('agent-a'), version: 'v1' }
    await store.write('agent-a', null, context, 60_000)
    await store.write('agent-b', null, { ...context, agentId: 'agent-b' }, 60_000)
    await raw.set(`${PREFIX}:l2:agent-a:c`, 'x')
    await store.forgetAgent('agent-a')
    expect(await store.keysOf('agent-a')).toBe(0)
    expect(await store.keysOf('agent-b')).toBe(1)
    await store.forgetAgent(null)
    expect(await store.keysOf('agent-b')).toBe(0)
    expect(await raw.exists(`${PREFIX}:l2:agent-a:c`)).toBe(1)
  })

  it('Redis stopped: calls fail UNAVAILABLE (never one replica’s stale copy), the report cannot count', async () => {
    const own = await startRedis()
    try {
      const store = await open(own.url)
      const wc = replica(store)
      await wc.append('agent-a', [{ role: 'user', content: 'held' }])
      await own.stop()
      await waitFor(() => store.status() === 'down')
      await expect(wc.get('agent-a')).rejects.toBeInstanceOf(UnavailableError)
      await expect(wc.append('agent-a', [{ role: 'user', content: 'x' }])).rejects.toBeInstanceOf(
        UnavailableError,
      )
      expect(await store.keysOf('agent-a')).toBeNull()
    } finally {
      await own.stop().catch(() => {})
    }
  })
})

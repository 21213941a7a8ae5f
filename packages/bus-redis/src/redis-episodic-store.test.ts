import type { StoredMessage } from '@engram/core'
import { SILENT_LOGGER } from '@engram/engine'
import { type RedisServer, startRedis } from '@engram/test-servers'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { RedisEpisodicStore, type RedisEpisodicStoreOptions } from './redis-episodic-store.ts'
import { episodicKey, episodicMetaKey, keyNamesAgent } from './redis-keys.ts'

const PREFIX = 'l2-test'
const AT = Date.parse('2026-01-15T10:00:00.000Z')

/** A stored message as the database hands it back (uncompressed, its id a row number). */
function message(id: number, atMs: number, content = `turn ${id}`): StoredMessage {
  return {
    id: String(id),
    sessionId: 's-1',
    role: id % 2 === 0 ? 'assistant' : 'user',
    speaker: null,
    content,
    tokenCount: 3,
    isCompressed: false,
    timestamp: new Date(atMs),
    metadata: { n: id },
  }
}

/** Polls with short waits until `done` holds (no wait longer than 20 ms). */
async function waitFor(done: () => boolean, deadlineMs = 5_000): Promise<void> {
  const until = Date.now() + deadlineMs
  while (!done()) {
    if (Date.now() > until) throw new Error('condition not met before the deadline')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe('RedisEpisodicStore on a real redis-server (spec 002 L2)', () => {
  let redis: RedisServer
  let raw: Redis
  const stores: RedisEpisodicStore[] = []
  const open = async (options: Partial<RedisEpisodicStoreOptions> = {}) => {
    const store = new RedisEpisodicStore({
      url: redis.url,
      prefix: PREFIX,
      log: SILENT_LOGGER,
      reconnectMaxDelayMs: 100,
      ...options,
    })
    stores.push(store)
    await waitFor(() => store.status() === 'up')
    return store
  }
  /** A fill as the engine makes it after a miss: ticket first, then what the database said. */
  const fill = async (store: RedisEpisodicStore, conversation: string, oldestFirst: StoredMessage[]) => {
    const ticket = await store.ticket('agent-a', conversation)
    expect(ticket).not.toBeNull()
    const newestFirst = oldestFirst.slice().reverse()
    const whole = newestFirst.length <= store.maxMessages
    await store.fill(
      'agent-a',
      conversation,
      ticket as string,
      newestFirst.slice(0, store.maxMessages),
      whole,
    )
  }
  const append = async (store: RedisEpisodicStore, conversation: string, messages: StoredMessage[]) => {
    const token = await store.writing('agent-a', conversation)
    await store.appended('agent-a', conversation, token, messages)
  }

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

  it('answers after a fill in (timestamp, id) order, exactly as stored, with the TTL set', async () => {
    const store = await open({ ttlMs: 60_000 })
    // Equal times order by id (10 before 9 would be the string order): the padded id decides.
    const messages = [message(9, AT), message(10, AT), message(11, AT + 1), message(12, AT + 2)]
    expect(await store.newest('agent-a', 'c', 2)).toBeNull()
    await fill(store, 'c', messages)
    expect(await store.whole('agent-a', 'c')).toEqual(messages)
    expect(await store.newest('agent-a', 'c', 3)).toEqual([messages[3], messages[2], messages[1]])
    // More than it holds: a whole conversation answers with all of it.
    expect(await store.newest('agent-a', 'c', 10)).toEqual(messages.slice().reverse())
    for (const key of [episodicKey(PREFIX, 'agent-a', 'c'), episodicMetaKey(PREFIX, 'agent-a', 'c')]) {
      const ttl = await raw.pttl(key)
      expect(ttl).toBeGreaterThan(50_000)
      expect(ttl).toBeLessThanOrEqual(60_000)
    }
    expect(await raw.type(episodicKey(PREFIX, 'agent-a', 'c'))).toBe('zset')
  })

  it('spec 002’s TTL is 24 hours by default, refreshed by every write', async () => {
    const store = await open()
    await fill(store, 'c', [message(1, AT)])
    await raw.pexpire(episodicKey(PREFIX, 'agent-a', 'c'), 1_000)
    await append(store, 'c', [message(2, AT + 1)])
    const ttl = await raw.pttl(episodicKey(PREFIX, 'agent-a', 'c'))
    expect(ttl).toBeGreaterThan(24 * 3_600_000 - 60_000)
    expect(ttl).toBeLessThanOrEqual(24 * 3_600_000)
  })

  it('a missing set (expired, evicted, never filled) is a miss, and an append does not create one', async () => {
    const store = await open()
    await append(store, 'c', [message(1, AT)])
    expect(await raw.exists(episodicKey(PREFIX, 'agent-a', 'c'))).toBe(0)
    expect(await store.newest('agent-a', 'c', 1)).toBeNull()
    await fill(store, 'c', [message(1, AT)])
    await raw.del(episodicKey(PREFIX, 'agent-a', 'c'))
    expect(await store.newest('agent-a', 'c', 1)).toBeNull()
    expect(await store.whole('agent-a', 'c')).toBeNull()
  })

  it('appends join a held set; a bounded set keeps the newest and answers only what it holds', async () => {
    const store = await open({ maxMessages: 3 })
    await fill(store, 'c', [message(1, AT), message(2, AT + 1)])
    await append(store, 'c', [message(3, AT + 2)])
    expect(await store.whole('agent-a', 'c')).toEqual([
      message(1, AT),
      message(2, AT + 1),
      message(3, AT + 2),
    ])
    await append(store, 'c', [message(4, AT + 3)])
    // Past the bound: no longer the whole conversation, the newest three still answer.
    expect(await store.whole('agent-a', 'c')).toBeNull()
    expect(await store.newest('agent-a', 'c', 3)).toEqual([
      message(4, AT + 3),
      message(3, AT + 2),
      message(2, AT + 1),
    ])
    expect(await store.newest('agent-a', 'c', 4)).toBeNull()
    // A turn dated before the window is not the set's business; one inside it lands in order.
    await append(store, 'c', [message(5, AT - 10)])
    await append(store, 'c', [message(6, AT + 2)])
    expect(await store.newest('agent-a', 'c', 3)).toEqual([
      message(4, AT + 3),
      message(6, AT + 2),
      message(3, AT + 2),
    ])
    // The same message written twice (a retried settle) is held once, as its last version.
    await append(store, 'c', [message(4, AT + 3, 'turn 4 again')])
    expect(await store.newest('agent-a', 'c', 1)).toEqual([message(4, AT + 3, 'turn 4 again')])
    expect(await raw.zcard(episodicKey(PREFIX, 'agent-a', 'c'))).toBe(3)
  })

  it('a write under way is not answered past, and a fill racing a write is ignored', async () => {
    const store = await open()
    await fill(store, 'c', [message(1, AT)])
    const token = await store.writing('agent-a', 'c')
    // Committed in the database, not yet in the set: readers go to the database meanwhile.
    expect(await store.newest('agent-a', 'c', 1)).toBeNull()
    await store.appended('agent-a', 'c', token, [message(2, AT + 1)])
    expect(await store.newest('agent-a', 'c', 2)).toEqual([message(2, AT + 1), message(1, AT)])

    // A reader took its ticket and read the database; a write then changed the conversation.
    await raw.del(episodicKey(PREFIX, 'agent-a', 'c'))
    const ticket = (await store.ticket('agent-a', 'c')) as string
    const stale = [message(2, AT + 1), message(1, AT)]
    await append(store, 'c', [message(3, AT + 2)])
    await store.fill('agent-a', 'c', ticket, stale, true)
    expect(await store.newest('agent-a', 'c', 1)).toBeNull()
  })

  it('a change other than an append drops the set; a writer that never settled drops it when its lease passes', async () => {
    const store = await open()
    await fill(store, 'c', [message(1, AT), message(2, AT + 1)])
    const token = await store.writing('agent-a', 'c')
    await store.changed('agent-a', 'c', token)
    expect(await raw.exists(episodicKey(PREFIX, 'agent-a', 'c'))).toBe(0)

    // A lease already over: the writer died between its commit and its update.
    const dying = await open({ writeLeaseMs: -1 })
    await fill(store, 'c', [message(1, AT)])
    await dying.writing('agent-a', 'c')
    expect(await store.newest('agent-a', 'c', 1)).toBeNull()
    expect(await raw.exists(episodicKey(PREFIX, 'agent-a', 'c'))).toBe(0)
    // Filled again afterwards, it answers.
    await fill(store, 'c', [message(1, AT), message(3, AT + 1)])
    expect(await store.newest('agent-a', 'c', 1)).toEqual([message(3, AT + 1)])
  })

  it('forgetAgent removes every key of the agent and no other agent’s (SCAN, whole segments)', async () => {
    const store = await open()
    await fill(store, 'c', [message(1, AT)])
    await fill(store, 'other:c', [message(2, AT)])
    for (const [agent, conversation] of [
      ['agent-ab', 'c'],
      ['agent-b', 'agent-a'],
    ] as const) {
      const ticket = (await store.ticket(agent, conversation)) as string
      await store.fill(agent, conversation, ticket, [message(3, AT)], true)
    }
    // A key another part of Engram keeps for the agent (e.g. the optimizer's lease).
    await raw.set(`${PREFIX}:lease:optimizer:agent-a`, 'holder')
    await raw.set(`other-prefix:l2:agent-a:c`, 'another deployment')
    expect(await store.keysOf('agent-a')).toBe(5)

    await store.forgetAgent('agent-a')
    expect(await store.keysOf('agent-a')).toBe(0)
    const left = (await raw.keys('*')).sort()
    expect(left).toEqual(
      [
        episodicKey(PREFIX, 'agent-ab', 'c'),
        episodicMetaKey(PREFIX, 'agent-ab', 'c'),
        episodicKey(PREFIX, 'agent-b', 'agent-a'),
        episodicMetaKey(PREFIX, 'agent-b', 'agent-a'),
        'other-prefix:l2:agent-a:c',
      ].sort(),
    )
    // A fill that read the database before the deletion lands after it: ignored.
    await store.forgetAgent(null)
    expect((await raw.keys(`${PREFIX}:*`)).length).toBe(0)
  })

  it('names keys by whole segments', () => {
    expect(keyNamesAgent(PREFIX, `${PREFIX}:l2:a:b`, 'a')).toBe(true)
    expect(keyNamesAgent(PREFIX, `${PREFIX}:l2:b:a`, 'a')).toBe(false)
    expect(keyNamesAgent(PREFIX, `${PREFIX}:l2:ab:c`, 'a')).toBe(false)
    expect(keyNamesAgent(PREFIX, `${PREFIX}:lease:optimizer:a`, 'a')).toBe(true)
    expect(keyNamesAgent(PREFIX, `other:l2:a:b`, 'a')).toBe(false)
  })

  it('a fill whose agent was deleted meanwhile leaves nothing behind', async () => {
    const store = await open()
    const ticket = (await store.ticket('agent-a', 'c')) as string
    await store.forgetAgent('agent-a')
    await store.fill('agent-a', 'c', ticket, [message(1, AT)], true)
    expect(await store.keysOf('agent-a')).toBe(0)
    // And an append settled after the deletion does not bring the meta hash back.
    const token = await store.writing('agent-a', 'c')
    await store.forgetAgent('agent-a')
    await store.appended('agent-a', 'c', token, [message(2, AT)])
    expect(await store.keysOf('agent-a')).toBe(0)
  })

  it('a write Redis did not answer drops its conversation’s set once Redis answers again', async () => {
    const warnings: string[] = []
    const log = { ...SILENT_LOGGER, warn: (...args: unknown[]) => warnings.push(String(args[0])) }
    const store = await open({ commandTimeoutMs: 100, log })
    await fill(store, 'c', [message(1, AT)])
    // The server stops answering (paused) while a message is committed in the database.
    await raw.client('PAUSE', 400, 'ALL')
    expect(await store.writing('agent-a', 'c')).toBeNull()
    expect(await store.newest('agent-a', 'c', 1)).toBeNull()
    expect(warnings).toHaveLength(1)
    const until = Date.now() + 5_000
    // Answers again: the held set, which lacks the committed message, is not served.
    let answered: StoredMessage[] | null = [message(0, AT)]
    while (Date.now() < until) {
      answered = await store.newest('agent-a', 'c', 1)
      if (store.status() === 'up' && (await raw.exists(episodicKey(PREFIX, 'agent-a', 'c'))) === 0) break
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(answered).toBeNull()
    expect(await raw.exists(episodicKey(PREFIX, 'agent-a', 'c'))).toBe(0)
    await fill(store, 'c', [message(1, AT), message(2, AT + 1)])
    expect(await store.newest('agent-a', 'c', 1)).toEqual([message(2, AT + 1)])
    expect(warnings).toHaveLength(1)
  })

  it('Redis stopped: reads miss and writes do nothing, without throwing; restarted: it answers again', async () => {
    const warnings: string[] = []
    const log = { ...SILENT_LOGGER, warn: (...args: unknown[]) => warnings.push(String(args[0])) }
    const own = await startRedis()
    const store = new RedisEpisodicStore({ url: own.url, prefix: PREFIX, log, reconnectMaxDelayMs: 100 })
    stores.push(store)
    try {
      await waitFor(() => store.status() === 'up')
      await own.stop()
      await waitFor(() => store.status() === 'down')
      expect(await store.newest('agent-a', 'c', 1)).toBeNull()
      expect(await store.whole('agent-a', 'c')).toBeNull()
      expect(await store.ticket('agent-a', 'c')).toBeNull()
      const token = await store.writing('agent-a', 'c')
      expect(token).toBeNull()
      await store.appended('agent-a', 'c', token, [message(1, AT)])
      await store.forgetAgent('agent-a')
      expect(await store.keysOf('agent-a')).toBeNull()
      // One warning for the outage, however many calls and reconnection attempts.
      expect(warnings).toHaveLength(1)

      const again = await startRedis({ port: own.port })
      try {
        await waitFor(() => store.status() === 'up')
        const ticket = (await store.ticket('agent-a', 'c')) as string
        await store.fill('agent-a', 'c', ticket, [message(1, AT)], true)
        expect(await store.newest('agent-a', 'c', 1)).toEqual([message(1, AT)])
        expect(warnings).toHaveLength(1)
      } finally {
        store.close()
        await again.stop()
      }
    } finally {
      await own.stop()
    }
  })
})

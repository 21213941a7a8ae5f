import { workingContextKey } from '@engram/bus-redis'
import { type RedisServer, startRedis } from '@engram/test-servers'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp, waitFor } from './helpers.ts'
import {
  APPEND_WORKING_CONTEXT,
  FLUSH_WORKING_CONTEXT,
  GET_WORKING_CONTEXT,
  RECENT_MEMORY,
  SET_SCRATCHPAD,
} from './working-context-documents.ts'

const PREFIX = 'engram-wc-test'
const REPORT = `query($a: ID!) { deletionReport(agentId: $a) {
  __typename ... on DeletionReport { remaining stores { store kind count } } } }`
const DELETE = `mutation($id: ID!) { deleteAgent(id: $id) { __typename ... on Error { message } } }`

// Two replicas (two apps on one database) sharing one real Redis, as behind a load balancer: an
// agent's working context is one, whichever replica a request reaches (issue 17, spec 002's L1).
describe('the working context shared by two replicas through Redis', () => {
  let redis: RedisServer
  let raw: Redis
  let a: TestApp
  let b: TestApp
  let key: string

  const env = () => ({ REDIS_URL: redis.url, ENGRAM_REDIS_PREFIX: PREFIX, ENGRAM_EXTRACTION: 'off' as const })
  const health = async (t: TestApp) =>
    (await (await t.app.yoga.fetch('http://yoga/health')).json()) as { redis?: string }

  beforeAll(async () => {
    redis = await startRedis()
    raw = new Redis(redis.url)
    a = await createTestApp({ env: env(), redisReconnectMaxDelayMs: 200 })
    b = await createTestApp({ sameStoreAs: a, env: env(), redisReconnectMaxDelayMs: 200 })
    key = await createAgentKey(a, 'wc-agent')
    await waitFor(async () => (await health(a)).redis === 'up' && (await health(b)).redis === 'up')
  })
  afterAll(async () => {
    await b?.close()
    await a?.close()
    raw?.disconnect()
    await redis?.stop()
  })

  it('what one replica appends the other reads; appends on both at once lose nothing', async () => {
    await a.gql(APPEND_WORKING_CONTEXT, { m: [{ role: 'USER', content: 'on A' }], c: 'shared' }, key)
    const onB = await b.gql(GET_WORKING_CONTEXT, {}, key)
    expect(onB.data.workingContext.messages.map((m: { content: string }) => m.content)).toEqual(['on A'])
    await Promise.all(
      Array.from({ length: 8 }, (_, i) => [
        a.gql(APPEND_WORKING_CONTEXT, { m: [{ role: 'USER', content: `a-${i}` }], c: 'shared' }, key),
        b.gql(APPEND_WORKING_CONTEXT, { m: [{ role: 'ASSISTANT', content: `b-${i}` }], c: 'shared' }, key),
      ]).flat(),
    )
    const readA = (await a.gql(GET_WORKING_CONTEXT, {}, key)).data.workingContext
    const readB = (await b.gql(GET_WORKING_CONTEXT, {}, key)).data.workingContext
    expect(readA.messages).toHaveLength(17)
    expect(readB).toEqual(readA)
    await b.gql(SET_SCRATCHPAD, { s: 'set on B' }, key)
    expect((await a.gql(GET_WORKING_CONTEXT, {}, key)).data.workingContext.scratchpad).toBe('set on B')
    // Held in Redis under the agent's key, with spec 002's 30-minute TTL.
    const ttl = await raw.pttl(workingContextKey(PREFIX, 'wc-agent'))
    expect(ttl).toBeGreaterThan(29 * 60_000)
    expect(ttl).toBeLessThanOrEqual(30 * 60_000)
  })

  it('a flush on one replica stores each turn once; recentMemory on the other reads them from L2', async () => {
    const flushed = await b.gql(FLUSH_WORKING_CONTEXT, {}, key)
    expect(flushed.data.flushWorkingContext.flush).toMatchObject({
      messages: 17,
      conversationIds: ['shared'],
    })
    expect((await a.gql(FLUSH_WORKING_CONTEXT, {}, key)).data.flushWorkingContext.flush).toBeNull()
    // The first read fills the L2 set from the database; the next is answered by it.
    const first = (await a.gql(RECENT_MEMORY, { c: 'shared', l: 5 }, key)).data.recentMemory.data
    expect(first.map((i: { source: string }) => i.source)).toEqual(Array(5).fill('DATABASE'))
    const second = (await a.gql(RECENT_MEMORY, { c: 'shared', l: 5 }, key)).data.recentMemory.data
    expect(second.map((i: { source: string }) => i.source)).toEqual(Array(5).fill('L2'))
    expect(second.map((i: { id: string }) => i.id)).toEqual(first.map((i: { id: string }) => i.id))
    await a.gql(APPEND_WORKING_CONTEXT, { m: [{ role: 'USER', content: 'newest' }], c: 'shared' }, key)
    const mixed = (await b.gql(RECENT_MEMORY, { c: 'shared', l: 3 }, key)).data.recentMemory.data
    expect(mixed.map((i: { source: string }) => i.source)).toEqual(['WORKING_CONTEXT', 'L2', 'L2'])
    const messages = await a.db.message.count({ where: { agentId: 'wc-agent' } })
    expect(messages).toBe(17)
  })

  it('deleting the agent removes its working context from Redis and both replicas; the report counts it first', async () => {
    const before = (await a.gql(REPORT, { a: 'wc-agent' })).data.deletionReport.stores
    expect(before).toContainEqual({ store: 'working context (L1)', kind: 'CACHE', count: 1 })
    expect(before.find((s: { store: string }) => s.store === 'Redis keys').count).toBeGreaterThan(0)
    expect(await raw.exists(workingContextKey(PREFIX, 'wc-agent'))).toBe(1)
    expect((await a.gql(DELETE, { id: 'wc-agent' })).data.deleteAgent.__typename).toBe('Agent')
    expect(await raw.exists(workingContextKey(PREFIX, 'wc-agent'))).toBe(0)
    // B drops its own copy when A's deletion reaches it (cache:invalidate over Redis).
    const reportOnB = async () => (await b.gql(REPORT, { a: 'wc-agent' })).data.deletionReport.stores
    await waitFor(
      async () =>
        (await reportOnB()).find((s: { store: string }) => s.store === 'working context (L1)').count === 0,
    )
    const after = await reportOnB()
    expect(
      after.filter((s: { store: string }) => s.store === 'Redis keys' || s.store === 'working context (L1)'),
    ).toEqual([
      { store: 'working context (L1)', kind: 'CACHE', count: 0 },
      { store: 'Redis keys', kind: 'CACHE', count: 0 },
    ])
    const again = await createAgentKey(b, 'wc-agent')
    expect((await a.gql(GET_WORKING_CONTEXT, {}, again)).data.workingContext.messages).toEqual([])
  })
})

import { episodicKey, episodicMetaKey } from '@engram/bus-redis'
import type { Session } from '@engram/core'
import { type RedisServer, startRedis } from '@engram/test-servers'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_KEY, createAgentKey, createTestApp, type TestApp, waitFor } from './helpers.ts'

const PREFIX = 'engram-l2-test'
const RECONNECT_MAX_DELAY_MS = 200

const ADD = `mutation($c: String!, $t: String!, $at: DateTime) {
  addMessage(input: { conversationId: $c, role: USER, content: $t, timestamp: $at }) {
    __typename ... on Message { id } ... on Error { message } } }`
const ADD_MANY = `mutation($c: String!, $m: [MessageInput!]!) { addMessages(input: { conversationId: $c, messages: $m }) {
  __typename ... on Error { message } } }`
const COMPRESS = `mutation($c: String!, $id: ID!) { compressMessages(input: { conversationId: $c, olderThanId: $id }) {
  __typename ... on CompressMessagesPayload { compressedCount } ... on Error { message } } }`
const DELETE_SESSION = `mutation($c: String!) { deleteSession(conversationId: $c) { __typename } }`
const EXPORT = `query($a: ID) { exportMemory(agentId: $a) { __typename ... on MemoryExport { document } } }`
const IMPORT = `mutation($a: ID, $d: JSON!, $m: ImportMode) { importMemory(agentId: $a, document: $d, mode: $m) {
  __typename ... on Error { message } } }`
const CLEAR = `mutation($a: ID, $c: String!) { clearAll(agentId: $a, confirm: $c) { __typename ... on Error { message } } }`
const WINDOW = `query($c: String!) { contextWindow(conversationId: $c) {
  __typename ... on ContextWindow { full { id content } totalTokens } ... on Error { message } } }`
const CONTEXT = `query($c: String!) { memoryContext(input: { conversationId: $c, sections: [CONVERSATION] }) {
  __typename ... on MemoryContext { text cached } ... on Error { message } } }`
const CONTEXT_MEMORIES = `query { memoryContext(input: { query: "garden" }) {
  __typename ... on MemoryContext { text cached } ... on Error { message } } }`
const CREATE = `mutation($t: String!) { createMemory(input: { content: $t, category: FACT }) { __typename } }`
const REPORT = `query($a: ID!) { deletionReport(agentId: $a) {
  __typename ... on DeletionReport { remaining stores { store kind count } } } }`

// Two replicas (createApp twice on one SQLite file) sharing one real Redis, as behind a load
// balancer: what one writes, the other reads through the L2 sets, and every read through L2 must
// be exactly the database's answer.
describe('spec 002 L2 episodic layer on Redis, across two replicas', () => {
  let redis: RedisServer
  let raw: Redis
  let a: TestApp
  let b: TestApp
  let keyA: string

  const env = () => ({ REDIS_URL: redis.url, ENGRAM_REDIS_PREFIX: PREFIX })
  const setKey = (agent: string, conversation: string) => episodicKey(PREFIX, agent, conversation)
  const health = async (t: TestApp) =>
    (await (await t.app.yoga.fetch('http://yoga/health')).json()) as { status: string; redis?: string }

  /**
   * On replica `t`: the reads that go through L2 (memoryContext's recent turns, the context
   * window's messages) against the database's own answer, and whether L2 holds the conversation.
   */
  async function expectExact(t: TestApp, agent: string, conversation: string): Promise<void> {
    const engine = t.app.services.engine
    const layer = engine.episodic
    if (!layer) throw new Error('the L2 layer is not configured')
    const storage = engine.storage
    const database = await storage.contextSources.recentTurns(agent, conversation, 200)
    expect(await layer.recentTurns(agent, conversation, 200)).toEqual(database)
    // The second read is served by the set the first one filled.
    expect(await layer.recentTurns(agent, conversation, 200)).toEqual(database)
    expect(await layer.recentTurns(agent, conversation, 3)).toEqual(database?.slice(0, 3) ?? null)
    const session = (await storage.sessions.findSession(agent, conversation)) as Session | null
    if (!session) {
      expect(database).toBeNull()
      expect(await raw.exists(setKey(agent, conversation))).toBe(0)
      return
    }
    const all = await storage.history.uncompressedMessages(session.id)
    expect(await layer.uncompressedMessages(session)).toEqual(all)
    expect(await layer.uncompressedMessages(session)).toEqual(all)
    if (all.length > 0) expect(await raw.exists(setKey(agent, conversation))).toBe(1)
  }

  beforeAll(async () => {
    redis = await startRedis()
    raw = new Redis(redis.url)
    // Its reconnection attempts while the test stops Redis are expected.
    raw.on('error', () => {})
    a = await createTestApp({ env: env(), redisReconnectMaxDelayMs: RECONNECT_MAX_DELAY_MS })
    b = await createTestApp({
      sameStoreAs: a,
      env: env(),
      redisReconnectMaxDelayMs: RECONNECT_MAX_DELAY_MS,
    })
    keyA = await createAgentKey(a, 'l2-agent')
    await waitFor(async () => (await health(a)).redis === 'up' && (await health(b)).redis === 'up')
  })
  afterAll(async () => {
    await b?.close()
    await a?.close()
    raw?.disconnect()
    await redis?.stop()
  })

  it('reads through L2 return exactly what the database does, through appends, compression and deletion', async () => {
    const messages = Array.from({ length: 6 }, (_, i) => ({ role: 'USER', content: `turn ${i} of the walk` }))
    expect((await a.gql(ADD_MANY, { c: 'walk', m: messages }, keyA)).data.addMessages.__typename).toBe(
      'AddMessagesPayload',
    )
    // Filled on B from the database, the set answers both replicas.
    await expectExact(b, 'l2-agent', 'walk')
    await expectExact(a, 'l2-agent', 'walk')
    const ttl = await raw.pttl(setKey('l2-agent', 'walk'))
    expect(ttl).toBeGreaterThan(24 * 3_600_000 - 60_000)
    expect(ttl).toBeLessThanOrEqual(24 * 3_600_000)

    // Appended on B after its commit: A's next read (from the set) has it.
    const added = await b.gql(ADD, { c: 'walk', t: 'the newest turn' }, keyA)
    expect(added.data.addMessage.__typename).toBe('Message')
    const held = await a.app.services.engine.episodic?.recentTurns('l2-agent', 'walk', 1)
    expect(held?.[0]).toMatchObject({ id: added.data.addMessage.id, content: 'the newest turn' })
    await expectExact(a, 'l2-agent', 'walk')
    // A turn dated in the past lands where the database orders it, not at the end.
    await a.gql(ADD, { c: 'walk', t: 'said yesterday', at: '2026-01-14T09:00:00.000Z' }, keyA)
    await expectExact(b, 'l2-agent', 'walk')

    // The API's answers on both replicas agree (the context window, memoryContext's turns).
    const windowOnA = await a.gql(WINDOW, { c: 'walk' }, keyA)
    expect(windowOnA.data.contextWindow.full.map((m: { content: string }) => m.content)).toContain(
      'said yesterday',
    )
    expect((await b.gql(WINDOW, { c: 'walk' }, keyA)).data.contextWindow).toEqual(
      windowOnA.data.contextWindow,
    )
    const contextOnB = await b.gql(CONTEXT, { c: 'walk' }, keyA)
    expect(contextOnB.data.memoryContext.text).toContain('the newest turn')

    // Compression hides turns and adds the summary: the set is dropped, the next read is exact.
    const ids =
      (await a.app.services.engine.storage.contextSources.recentTurns('l2-agent', 'walk', 200)) ?? []
    const compressed = await b.gql(COMPRESS, { c: 'walk', id: ids[2]?.id }, keyA)
    expect(compressed.data.compressMessages.compressedCount).toBeGreaterThan(0)
    expect(await raw.exists(setKey('l2-agent', 'walk'))).toBe(0)
    await expectExact(a, 'l2-agent', 'walk')

    // Deleting the conversation drops its set: neither replica answers from it.
    await b.gql(DELETE_SESSION, { c: 'walk' }, keyA)
    expect(await raw.exists(setKey('l2-agent', 'walk'))).toBe(0)
    expect(await a.app.services.engine.episodic?.recentTurns('l2-agent', 'walk', 5)).toBeNull()
    await expectExact(a, 'l2-agent', 'walk')
  })

  it('import (replace) and clearing drop the agent’s sets; the next reads are exact', async () => {
    const keyOther = await createAgentKey(a, 'l2-source')
    await a.gql(
      ADD,
      { c: 'trip', t: 'imported turn, dated earlier', at: '2026-01-10T08:00:00.000Z' },
      keyOther,
    )
    const document = (await a.gql(EXPORT, { a: 'l2-source' }, ADMIN_KEY)).data.exportMemory.document
    await a.gql(ADD, { c: 'trip', t: 'own turn' }, keyA)
    await expectExact(a, 'l2-agent', 'trip')
    expect(await raw.exists(setKey('l2-agent', 'trip'))).toBe(1)

    // The document's conversation of the same id replaces the held one.
    const imported = await b.gql(IMPORT, { a: 'l2-agent', d: document, m: 'REPLACE' }, ADMIN_KEY)
    expect(imported.data.importMemory.__typename).toBe('ImportReport')
    expect(await raw.exists(setKey('l2-agent', 'trip'))).toBe(0)
    await expectExact(a, 'l2-agent', 'trip')
    const turns = await a.app.services.engine.episodic?.recentTurns('l2-agent', 'trip', 10)
    expect(turns?.map((turn) => turn.content)).toEqual(['imported turn, dated earlier'])

    await b.gql(CLEAR, { a: 'l2-agent', c: 'CLEAR l2-agent' }, ADMIN_KEY)
    expect(await raw.exists(setKey('l2-agent', 'trip'))).toBe(0)
    await expectExact(a, 'l2-agent', 'trip')
  })

  it('a change on B is seen by A’s next read where A held a cached answer (cache:invalidate)', async () => {
    const key = await createAgentKey(a, 'l2-cache')
    await a.gql(CREATE, { t: 'The garden gate is green' }, key)
    const first = await a.gql(CONTEXT_MEMORIES, {}, key)
    expect(first.data.memoryContext.text).toContain('green')
    // Served from A's context cache (10 s on the clock, which the test never moves).
    expect((await a.gql(CONTEXT_MEMORIES, {}, key)).data.memoryContext.cached).toBe(true)

    await b.gql(CREATE, { t: 'The garden shed is red' }, key)
    // Delivered through Redis in a moment; without the listener A would serve the cached text forever.
    await waitFor(async () =>
      (await a.gql(CONTEXT_MEMORIES, {}, key)).data.memoryContext.text.includes('red'),
    )
    expect(a.app.services.engine.replicas?.applied).toBeGreaterThan(0)

    // A's session cache: the conversation deleted on B is made again on A, not written into the old row.
    await a.gql(ADD, { c: 'chat', t: 'first' }, key)
    await b.gql(DELETE_SESSION, { c: 'chat' }, key)
    const applied = a.app.services.engine.replicas?.applied ?? 0
    await waitFor(() => (a.app.services.engine.replicas?.applied ?? 0) > applied)
    const again = await a.gql(ADD, { c: 'chat', t: 'second' }, key)
    expect(again.data.addMessage.__typename).toBe('Message')
    const session = await a.gql(
      `query { session(conversationId: "chat") { ... on Session { messageCount } } }`,
      {},
      key,
    )
    expect(session.data.session.messageCount).toBe(1)
  })

  it('deleting an agent removes every Redis key naming it, and the deletion report says so', async () => {
    const key = await createAgentKey(a, 'l2-gone')
    await a.gql(ADD, { c: 'c1', t: 'secret of l2-gone' }, key)
    await a.gql(ADD, { c: 'c2:with:colons', t: 'another secret' }, key)
    await expectExact(b, 'l2-gone', 'c1')
    await expectExact(b, 'l2-gone', 'c2:with:colons')
    // A key another part of Engram may keep for the agent (the optimizer's lease, issue 14).
    await raw.set(`${PREFIX}:lease:optimizer:l2-gone`, 'replica-b')
    const scan = async () => {
      const found: string[] = []
      let cursor = '0'
      do {
        const [next, keys] = await raw.scan(cursor, 'MATCH', `${PREFIX}:*`, 'COUNT', 1000)
        cursor = next
        found.push(...keys.filter((k) => k.split(':').includes('l2-gone')))
      } while (cursor !== '0')
      return found
    }
    expect((await scan()).length).toBe(5)
    const before = (await a.gql(REPORT, { a: 'l2-gone' }, ADMIN_KEY)).data.deletionReport
    expect(before.stores).toContainEqual({ store: 'Redis keys', kind: 'CACHE', count: 5 })

    await b.gql(`mutation { deleteAgent(id: "l2-gone") { __typename } }`, {}, ADMIN_KEY)
    expect(await scan()).toEqual([])
    const after = (await a.gql(REPORT, { a: 'l2-gone' }, ADMIN_KEY)).data.deletionReport
    expect(after.stores).toContainEqual({ store: 'Redis keys', kind: 'CACHE', count: 0 })
    expect(after.remaining).toBe(0)
    // The other agents' sets stay.
    await a.gql(ADD, { c: 'kept', t: 'still here' }, keyA)
    await expectExact(a, 'l2-agent', 'kept')
    expect(await raw.exists(setKey('l2-agent', 'kept'))).toBe(1)
    expect(await raw.exists(episodicMetaKey(PREFIX, 'l2-agent', 'kept'))).toBe(1)
  })

  it('a conversation longer than the bound: L2 answers the newest turns, the database the rest, both exact', async () => {
    const small = await createTestApp({
      sameStoreAs: a,
      env: { ...env(), ENGRAM_REDIS_PREFIX: `${PREFIX}-small`, ENGRAM_L2_MAX_MESSAGES: 3 },
      redisReconnectMaxDelayMs: RECONNECT_MAX_DELAY_MS,
    })
    try {
      await waitFor(async () => (await health(small)).redis === 'up')
      const key = `${PREFIX}-small:l2:l2-agent:long`
      const messages = Array.from({ length: 5 }, (_, i) => ({ role: 'USER', content: `long turn ${i}` }))
      await small.gql(ADD_MANY, { c: 'long', m: messages }, keyA)
      const layer = small.app.services.engine.episodic
      const storage = small.app.services.engine.storage
      const newest = await storage.contextSources.recentTurns('l2-agent', 'long', 3)
      expect(await layer?.recentTurns('l2-agent', 'long', 3)).toEqual(newest)
      expect(await raw.zcard(key)).toBe(3)
      // Held: the three newest answer; four do not, and come from the database.
      expect(await layer?.recentTurns('l2-agent', 'long', 3)).toEqual(newest)
      expect(await layer?.recentTurns('l2-agent', 'long', 4)).toEqual(
        await storage.contextSources.recentTurns('l2-agent', 'long', 4),
      )
      await small.gql(ADD, { c: 'long', t: 'long turn 5' }, keyA)
      expect(await raw.zcard(key)).toBe(3)
      expect((await layer?.recentTurns('l2-agent', 'long', 1))?.[0]?.content).toBe('long turn 5')
      const session = (await storage.sessions.findSession('l2-agent', 'long')) as Session
      expect(await layer?.uncompressedMessages(session)).toEqual(
        await storage.history.uncompressedMessages(session.id),
      )
      expect(await raw.zcard(key)).toBe(3)
    } finally {
      await small.close()
    }
  })

  it('Redis down: reads fall back to the database, writes go on, /health is degraded; back: L2 fills again', async () => {
    await a.gql(ADD, { c: 'outage', t: 'before the outage' }, keyA)
    await expectExact(a, 'l2-agent', 'outage')
    const port = redis.port
    await redis.stop()
    await waitFor(async () => (await health(a)).redis === 'down')
    expect((await health(a)).status).toBe('degraded')
    const during = await b.gql(ADD, { c: 'outage', t: 'during the outage' }, keyA)
    expect(during.data.addMessage.__typename).toBe('Message')
    const layer = a.app.services.engine.episodic
    const storage = a.app.services.engine.storage
    expect(await layer?.recentTurns('l2-agent', 'outage', 10)).toEqual(
      await storage.contextSources.recentTurns('l2-agent', 'outage', 10),
    )
    expect((await a.gql(WINDOW, { c: 'outage' }, keyA)).data.contextWindow.full).toHaveLength(2)

    redis = await startRedis({ port })
    raw.disconnect()
    raw = new Redis(redis.url)
    raw.on('error', () => {})
    await waitFor(async () => (await health(a)).redis === 'up' && (await health(b)).redis === 'up')
    await expectExact(a, 'l2-agent', 'outage')
    expect(await raw.exists(setKey('l2-agent', 'outage'))).toBe(1)
  })
})

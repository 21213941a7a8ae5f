import { type RedisServer, startRedis } from '@engram/test-servers'
import { type Client, createClient } from 'graphql-ws'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { listen, type RunningServer } from '../src/server.ts'
import { createAgentKey, createTestApp, publishUntil, type TestApp, waitFor } from './helpers.ts'

const SUBSCRIPTION = `subscription { optimizerSnapshots { id agentId timestamp } }`
const PREFIX = 'engram-test'
// Reconnection attempts stay close together, so a restarted Redis is found again quickly.
const RECONNECT_MAX_DELAY_MS = 200

interface Snapshot {
  id: string
  agentId: string
  timestamp: string
}

// Two API processes' worth of app (createApp twice) on one SQLite file, each with its own Redis
// connections, as two replicas behind a load balancer would be.
describe('events across API replicas through Redis', () => {
  let redis: RedisServer
  let a: TestApp
  let b: TestApp
  let serverA: RunningServer
  let keyA: string
  let keyB: string
  const clients: Client[] = []

  const env = () => ({ REDIS_URL: redis.url, ENGRAM_REDIS_PREFIX: PREFIX })
  const health = async (t: TestApp) => {
    const response = await t.app.yoga.fetch('http://yoga/health')
    return { code: response.status, ...((await response.json()) as { status: string; redis?: string }) }
  }
  const bothUp = async () => (await health(a)).redis === 'up' && (await health(b)).redis === 'up'
  const runOptimizer = async (t: TestApp, key: string): Promise<string> => {
    const result = await t.gql(`mutation { runOptimizer { ... on OptimizationSnapshot { id } } }`, {}, key)
    return result.data.runOptimizer.id
  }
  /** A graphql-ws subscription to optimizerSnapshots on replica A with the given key. */
  const subscribeOnA = (key: string, ended?: { errors: string[]; completed: boolean }) => {
    const received: Snapshot[] = []
    const client = createClient({
      url: `ws://127.0.0.1:${serverA.port}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${key}` },
      retryAttempts: 0,
    })
    clients.push(client)
    client.subscribe(
      { query: SUBSCRIPTION },
      {
        next: (value) => {
          for (const error of value.errors ?? [])
            ended?.errors.push(String(error.extensions?.code ?? error.message))
          const snapshot = (value.data as { optimizerSnapshots?: Snapshot } | null)?.optimizerSnapshots
          if (snapshot) received.push(snapshot)
        },
        error: () => {},
        complete: () => {
          if (ended) ended.completed = true
        },
      },
    )
    return received
  }

  beforeAll(async () => {
    redis = await startRedis()
    a = await createTestApp({ env: env(), redisReconnectMaxDelayMs: RECONNECT_MAX_DELAY_MS })
    b = await createTestApp({
      sameStoreAs: a,
      env: env(),
      redisReconnectMaxDelayMs: RECONNECT_MAX_DELAY_MS,
    })
    serverA = await listen(a.app, 0, '127.0.0.1')
    // Keys live in the shared database: made through A, they open B too.
    keyA = await createAgentKey(a, 'agent-a')
    keyB = await createAgentKey(a, 'agent-b')
    for (const key of [keyA, keyB]) {
      await b.gql(
        `mutation { addMessage(input: { conversationId: "c", role: USER, content: "ok" }) { __typename } }`,
        {},
        key,
      )
    }
    await waitFor(bothUp)
  })
  afterAll(async () => {
    await Promise.all(clients.map((client) => client.dispose()))
    await serverA?.close()
    await b?.close()
    await a?.close()
    await redis?.stop()
  })

  it('a subscriber on A receives the snapshot produced on B, and never another agent’s', async () => {
    const received = subscribeOnA(keyA)
    const producedOnB: string[] = []
    const otherAgentOnB: string[] = []
    await publishUntil(
      () => received.length > 0,
      async () => {
        // Agent B's snapshot goes first: had scoping leaked, it would arrive before A's.
        otherAgentOnB.push(await runOptimizer(b, keyB))
        producedOnB.push(await runOptimizer(b, keyA))
      },
    )
    expect(received.length).toBeGreaterThan(0)
    expect(received.every((snapshot) => snapshot.agentId === 'agent-a')).toBe(true)
    expect(producedOnB).toContain(received[0]?.id)
    expect(received.some((snapshot) => otherAgentOnB.includes(snapshot.id))).toBe(false)
    // The timestamp crossed Redis as a date, not as whatever JSON made of it.
    expect(Number.isNaN(Date.parse(received[0]?.timestamp ?? ''))).toBe(false)
  })

  it('a replica delivers its own event once (the copy Redis echoes back is dropped)', async () => {
    const received = subscribeOnA(keyA)
    const producedOnA: string[] = []
    await publishUntil(
      () => received.length > 0,
      async () => producedOnA.push(await runOptimizer(a, keyA)),
    )
    // A later event from B arrives after A's echo would have (Redis delivers in publish order).
    const marker = await (async () => {
      let id = ''
      await publishUntil(
        () => received.some((snapshot) => snapshot.id === id),
        async () => {
          id = await runOptimizer(b, keyA)
        },
      )
      return id
    })()
    expect(received.some((snapshot) => snapshot.id === marker)).toBe(true)
    const ownIds = received.map((snapshot) => snapshot.id).filter((id) => producedOnA.includes(id))
    expect(ownIds.length).toBeGreaterThan(0)
    expect(new Set(ownIds).size).toBe(ownIds.length)
  })

  it('a key revoked on B ends the subscription opened with it on A, with no further event', async () => {
    const keyC = await createAgentKey(a, 'agent-c')
    await b.gql(
      `mutation { addMessage(input: { conversationId: "c", role: USER, content: "ok" }) { __typename } }`,
      {},
      keyC,
    )
    const ended = { errors: [] as string[], completed: false }
    const received = subscribeOnA(keyC, ended)
    await publishUntil(
      () => received.length > 0,
      () => runOptimizer(b, keyC),
    )
    const { id } = await a.db.apiKey.findFirstOrThrow({ where: { agentId: 'agent-c' } })
    const revoked = await b.gql(`mutation($id: ID!) { revokeApiKey(id: $id) { __typename } }`, { id })
    expect(revoked.data.revokeApiKey.__typename).toBe('ApiKey')
    // Only B's access:changed, carried by Redis, can tell A's subscription now: nothing else happens.
    await waitFor(() => ended.completed)
    expect(ended.errors).toEqual(['FORBIDDEN'])
  })

  it('with Redis stopped the API still answers and says so; delivery resumes when Redis returns', async () => {
    const port = redis.port
    await redis.stop()
    await waitFor(async () => (await health(a)).redis === 'down')
    const down = await health(a)
    expect(down).toMatchObject({ code: 200, status: 'degraded', database: 'ok', redis: 'down' })

    // Requests still answer, and a subscription on A still receives what A produces.
    const local = subscribeOnA(keyA)
    const producedOnA: string[] = []
    await publishUntil(
      () => local.length > 0,
      async () => producedOnA.push(await runOptimizer(a, keyA)),
    )
    expect(producedOnA).toContain(local[0]?.id)
    const search = await b.gql(`query { search(input: { query: "ok" }) { __typename } }`, {}, keyA)
    expect(search.errors).toBeUndefined()

    // The same port, as a restarted server would be: both replicas reconnect and subscribe again.
    redis = await startRedis({ port })
    await waitFor(bothUp)
    expect(await health(a)).toMatchObject({ code: 200, status: 'ok', redis: 'up' })
    const received = subscribeOnA(keyA)
    const producedOnB: string[] = []
    await publishUntil(
      () => received.length > 0,
      async () => producedOnB.push(await runOptimizer(b, keyA)),
    )
    expect(producedOnB).toContain(received[0]?.id)
  })
})

describe('without REDIS_URL', () => {
  it('/health has no redis field and the bus stays in process', async () => {
    const t = await createTestApp()
    try {
      const response = await t.app.yoga.fetch('http://yoga/health')
      const body = (await response.json()) as Record<string, unknown>
      expect(response.status).toBe(200)
      expect(body.status).toBe('ok')
      expect('redis' in body).toBe(false)
    } finally {
      await t.close()
    }
  })
})

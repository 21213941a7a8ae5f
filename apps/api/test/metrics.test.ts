import { startRedis } from '@engram/test-servers'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { listenMetrics } from '../src/metrics/endpoint.ts'
import { ADMIN_KEY, createAgentKey, createTestApp, TEST_BACKEND, type TestApp } from './helpers.ts'

// Issue 17 §3: Prometheus /metrics (its guards, what a scrape holds after real requests, no agent
// id in any label) and the admin query serverMetrics behind the dashboard's Metrics page.

const METRICS_TOKEN = 'metrics-token-0123456789'
/** Agent ids a label must never carry: distinctive, so a scrape can be searched for them. */
const AGENTS = ['zeta-metrics-agent', 'omega-metrics-agent']

const SEARCH = `query($q: String!) { search(input: { query: $q }) { ... on SearchResult { hits { text } } } }`
const CONTEXT = `query($q: String!) { memoryContext(input: { query: $q }) { __typename } }`
const ADD = `mutation($c: String!) { addMessage(input: { conversationId: "c1", role: USER, content: $c }) { __typename } }`
const METRICS = `query($w: Int) { serverMetrics(windowSeconds: $w) {
  __typename
  ... on ServerMetrics { sampleIntervalMs windowMs
    samples { at requestsPerSecond errorRate p95LatencySeconds embeddingBacklog databaseBytes
      searchP95Seconds { scope p95Seconds searches } cacheHitRates { cache hitRate lookups }
      queueDepth { kind state jobs } counts { agents memories messages knowledge graphEntities graphRelationships trajectories } }
    current { at requestsPerSecond counts { agents messages } } }
  ... on ValidationError { issues { field limit } }
} }`

async function scrape(t: TestApp, key: string | null = ADMIN_KEY): Promise<Response> {
  return t.app.yoga.fetch('http://yoga/metrics', {
    headers: key ? { authorization: `Bearer ${key}` } : {},
  })
}

/** The value of one series in exposition text (exact labels, in the order prom-client prints them). */
function series(text: string, name: string): number | null {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `))
  return line ? Number(line.slice(name.length + 1)) : null
}

describe('/metrics and serverMetrics', () => {
  let t: TestApp
  const keys: Record<string, string> = {}

  beforeAll(async () => {
    t = await createTestApp({ env: { ENGRAM_METRICS_TOKEN: METRICS_TOKEN, ENGRAM_EXTRACTION: 'off' } })
    for (const agentId of AGENTS) keys[agentId] = await createAgentKey(t, agentId)
  })
  afterAll(async () => {
    await t?.close()
  })

  it('answers only the metrics token or the admin key (401 otherwise, an agent key too)', async () => {
    expect((await scrape(t, null)).status).toBe(401)
    expect((await scrape(t, 'not-the-token-at-all')).status).toBe(401)
    expect((await scrape(t, keys[AGENTS[0] as string] as string)).status).toBe(401)
    const refused = await scrape(t, null)
    expect(refused.headers.get('www-authenticate')).toContain('Bearer')
    for (const key of [METRICS_TOKEN, ADMIN_KEY]) {
      const response = await scrape(t, key)
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toContain('text/plain')
    }
    const posted = await t.app.yoga.fetch('http://yoga/metrics', {
      method: 'POST',
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    })
    expect(posted.status).toBe(405)
  })

  it('counts real requests per operation with durations, errors by code, searches, caches and the store', async () => {
    const [a, b] = AGENTS as [string, string]
    for (const agentId of [a, b]) {
      const key = keys[agentId] as string
      for (const content of ['I drink green tea every morning.', 'My sister lives in Lisbon.'])
        expect((await t.gql(ADD, { c: content }, key)).errors).toBeUndefined()
      expect((await t.gql(SEARCH, { q: 'tea' }, key)).errors).toBeUndefined()
      await t.gql(CONTEXT, { q: 'tea' }, key)
      await t.gql(CONTEXT, { q: 'tea' }, key)
    }
    // A missing key (UNAUTHENTICATED) and a variable past its limit (a typed VALIDATION answer
    // in the union is data, not an error; a wrong variable type is a GraphQL error).
    expect((await t.gql(SEARCH, { q: 'tea' }, null)).status).toBe(401)
    expect((await t.gql(SEARCH, { q: 42 }, keys[a])).errors?.length).toBeGreaterThan(0)

    const text = await (await scrape(t)).text()
    expect(series(text, 'engram_graphql_requests_total{operation="addMessage",type="mutation"}')).toBe(4)
    expect(series(text, 'engram_graphql_requests_total{operation="search",type="query"}')).toBe(4)
    expect(series(text, 'engram_graphql_requests_total{operation="memoryContext",type="query"}')).toBe(4)
    expect(
      series(text, 'engram_graphql_request_duration_seconds_count{operation="search",type="query"}'),
    ).toBe(4)
    expect(text).toContain(
      'engram_graphql_request_duration_seconds_bucket{le="0.005",operation="search",type="query"}',
    )
    expect(series(text, 'engram_graphql_errors_total{operation="search",code="UNAUTHENTICATED"}')).toBe(1)
    expect(
      series(text, 'engram_graphql_errors_total{operation="search",code="GRAPHQL_VALIDATION_FAILED"}') ??
        series(text, 'engram_graphql_errors_total{operation="search",code="BAD_USER_INPUT"}'),
    ).toBe(1)
    // The engine's own observations: two searches of MESSAGES by HYBRID, the context cache.
    expect(series(text, 'engram_search_duration_seconds_count{scope="MESSAGES",strategy="HYBRID"}')).toBe(2)
    expect(series(text, 'engram_cache_lookups_total{cache="context",result="hit"}')).toBe(2)
    expect(series(text, 'engram_cache_lookups_total{cache="context",result="miss"}')).toBe(2)
    // Collected on scrape from the store.
    expect(series(text, 'engram_agents')).toBe(2)
    expect(series(text, 'engram_messages')).toBe(4)
    expect(series(text, 'engram_memories')).toBe(0)
    expect(series(text, 'engram_database_size_bytes')).toBeGreaterThan(0)
    expect(text).toMatch(/^engram_jobs\{kind="embed",state="pending"\} \d+$/m)
    expect(text).toContain('engram_vector_indexes ')
    // Spec 002's health gauges, where those backends run: Postgres' pool here, Redis not configured.
    if (TEST_BACKEND === 'postgres') expect(text).toMatch(/^memory_postgres_pool_active \d+$/m)
    else expect(text).not.toContain('memory_postgres_pool_active')
    expect(text).not.toContain('memory_redis_connected')
    // Node's process metrics.
    expect(text).toContain('process_cpu_user_seconds_total')
    expect(text).toContain('nodejs_eventloop_lag_seconds')
  })

  it('never carries an agent id in a label', async () => {
    const text = await (await scrape(t)).text()
    for (const agentId of AGENTS) expect(text).not.toContain(agentId)
    // Every label value is one of a few closed shapes: names, numbers, +Inf.
    const values = [...text.matchAll(/="([^"]*)"/g)].map((m) => m[1] as string)
    expect(values.length).toBeGreaterThan(0)
    for (const value of values)
      expect(value).toMatch(/^(?:[A-Za-z_][A-Za-z0-9_.:-]*|[0-9.e+-]+|\+Inf|v?[0-9][\w.-]*)$/)
  })

  it('labels a document by its root field, never by the operation name a client chose', async () => {
    const [a] = AGENTS as [string]
    await t.gql(`query ${a.replaceAll('-', '_')} { agents { id } }`, {}, ADMIN_KEY)
    await t.gql(`query Two { agents { id } backups { __typename } }`, {}, ADMIN_KEY)
    await t.gql(`query { noSuchField }`, {}, ADMIN_KEY)
    const text = await (await scrape(t)).text()
    expect(text).not.toContain(a.replaceAll('-', '_'))
    expect(
      series(text, 'engram_graphql_requests_total{operation="agents",type="query"}'),
    ).toBeGreaterThanOrEqual(1)
    expect(series(text, 'engram_graphql_requests_total{operation="multiple",type="query"}')).toBe(1)
    expect(series(text, 'engram_graphql_requests_total{operation="unknown",type="query"}')).toBe(1)
  })

  it('keeps a ring of samples on the clock: rates between samples, current first to check', async () => {
    const { app, clock } = t
    const first = await app.sampler.sample()
    clock.advance(10_000)
    for (let i = 0; i < 5; i++) await t.gql(SEARCH, { q: 'Lisbon' }, keys[AGENTS[0] as string])
    // serverMetrics itself is a request too: sampled before it is asked.
    const second = await app.sampler.sample()
    expect(second.at.getTime() - first.at.getTime()).toBe(10_000)
    expect(second.requestsPerSecond).toBeCloseTo(0.5)
    expect(second.searchP95Seconds.find((s) => s.scope === 'MESSAGES')?.searches).toBe(5)
    expect(second.counts).toMatchObject({ agents: 2, messages: 4 })

    const result = await t.gql(METRICS, {})
    expect(result.errors).toBeUndefined()
    const report = result.data.serverMetrics
    expect(report).toMatchObject({
      __typename: 'ServerMetrics',
      sampleIntervalMs: 10_000,
      windowMs: 3_600_000,
    })
    expect(report.samples).toHaveLength(2)
    expect(report.current).toEqual({
      at: second.at.toISOString(),
      requestsPerSecond: second.requestsPerSecond,
      counts: { agents: 2, messages: 4 },
    })
    expect(report.samples[1].databaseBytes).toBeGreaterThan(0)
    // Only the last 10 s: the newest sample alone (the first is exactly 10 s old).
    expect((await t.gql(METRICS, { w: 10 })).data.serverMetrics.samples).toHaveLength(1)
    // Past the window (an hour), samples leave the ring.
    clock.advance(3_600_000)
    await app.sampler.sample()
    expect((await t.gql(METRICS, {})).data.serverMetrics.samples).toHaveLength(1)
  })

  it('refuses an agent key (FORBIDDEN) and a window past its limits, naming the field and limit', async () => {
    const forbidden = await t.gql(METRICS, {}, keys[AGENTS[0] as string])
    expect(forbidden.data.serverMetrics.__typename).toBe('ForbiddenError')
    for (const w of [5, 86_401]) {
      const invalid = await t.gql(METRICS, { w })
      expect(invalid.data.serverMetrics.__typename).toBe('ValidationError')
      expect(invalid.data.serverMetrics.issues[0]).toMatchObject({
        field: 'windowSeconds',
        limit: w === 5 ? '10' : '86400',
      })
    }
  })
})

describe('ENGRAM_METRICS_BIND', () => {
  it('serves /metrics on its own listener without a token, and the main port has none', async () => {
    const t = await createTestApp({ env: { ENGRAM_METRICS_BIND: '127.0.0.1:0' } })
    const listener = await listenMetrics(t.app.metrics, '127.0.0.1:0')
    try {
      expect((await scrape(t, ADMIN_KEY)).status).toBe(404)
      const response = await fetch(`http://127.0.0.1:${listener.port}/metrics`)
      expect(response.status).toBe(200)
      expect(await response.text()).toContain('engram_graphql_requests_total')
      expect((await fetch(`http://127.0.0.1:${listener.port}/graphql`)).status).toBe(404)
    } finally {
      await listener.close()
      await t.close()
    }
  })
})

describe('memory_redis_connected', () => {
  it('is 1 while Redis answers and 0 once it is gone', async () => {
    const redis = await startRedis()
    const t = await createTestApp({ env: { REDIS_URL: redis.url }, redisReconnectMaxDelayMs: 100 })
    try {
      const connected = async () => series(await (await scrape(t)).text(), 'memory_redis_connected')
      // The connections come up a moment after the app is made: bounded polling, 5 ms apart.
      for (let i = 0; i < 200 && (await connected()) !== 1; i++) await new Promise((r) => setTimeout(r, 5))
      expect(await connected()).toBe(1)
      await redis.stop()
      for (let i = 0; i < 200 && (await connected()) !== 0; i++) await new Promise((r) => setTimeout(r, 5))
      expect(await connected()).toBe(0)
    } finally {
      await t.close()
      await redis.stop()
    }
  })
})

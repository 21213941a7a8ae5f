import { type Clock, createTokenCounter, type Embedder } from '@engram/core'
import { describe, expect, it } from 'vitest'
import { createEngine } from './engine.ts'
import { JobWorker } from './jobs/job-worker.ts'
import { createOperations } from './operations/operations.ts'
import { SILENT_LOGGER } from './ports/logger.ts'
import type { ServerMetricsSource } from './ports/server-metrics.ts'
import type { JobOutcome, Telemetry, TelemetryCache } from './ports/telemetry.ts'
import { createInMemoryStorage } from './testing/index.ts'

const start = new Date('2026-01-15T10:00:00.000Z')

/** A Telemetry that keeps every observation, as the API's Prometheus registry would count them. */
function recorder() {
  const seen = {
    lookups: [] as { cache: TelemetryCache; hit: boolean }[],
    searches: [] as { scope: string; strategy: string; seconds: number }[],
    saved: [] as number[],
    jobs: [] as { kind: string; outcome: JobOutcome }[],
  }
  const telemetry: Telemetry = {
    cacheLookup: (cache, hit) => seen.lookups.push({ cache, hit }),
    searchObserved: (scope, strategy, seconds) => seen.searches.push({ scope, strategy, seconds }),
    tokensSaved: (tokens) => seen.saved.push(tokens),
    jobFinished: (kind, outcome) => seen.jobs.push({ kind, outcome }),
    workingContextFlushed() {},
  }
  return { seen, telemetry }
}

/** A remote-like embedder (no embedOne): vectors go through the per-agent cache by content hash. */
const remoteEmbedder: Embedder = {
  model: 'remote-test',
  dimensions: 4,
  async embed(texts) {
    return texts.map((text) => Float32Array.from([text.length, 1, 0, 0]))
  },
}

function engineWith(telemetry: Telemetry, extra: { serverMetrics?: ServerMetricsSource } = {}) {
  let now = start.getTime()
  const clock: Clock = { now: () => new Date(now) }
  const engine = createEngine({
    storage: createInMemoryStorage(clock),
    clock,
    tokenCounter: createTokenCounter(),
    log: SILENT_LOGGER,
    optimizer: { intervalMs: 0 },
    embedder: remoteEmbedder,
    telemetry,
    ...extra,
  })
  return { engine, ops: createOperations(engine), advance: (ms: number) => (now += ms) }
}

const agent = { kind: 'agent', agentId: 'agent-a' } as const
const operator = { kind: 'operator' } as const

describe('the engine reports to its telemetry (issue 17 metrics)', () => {
  it('reports the context cache: a miss, then a hit for the same request, a miss once the TTL passed', async () => {
    const { seen, telemetry } = recorder()
    const { ops, advance } = engineWith(telemetry)
    await ops.createAgent(operator, { id: 'agent-a' })
    await ops.memoryContext(agent, { query: 'tea' })
    await ops.memoryContext(agent, { query: 'tea' })
    advance(60_000)
    await ops.memoryContext(agent, { query: 'tea' })
    expect(seen.lookups.filter((l) => l.cache === 'context').map((l) => l.hit)).toEqual([false, true, false])
  })

  it('reports each search once per scope with its strategy, and no agent id anywhere', async () => {
    const { seen, telemetry } = recorder()
    const { ops } = engineWith(telemetry)
    await ops.createAgent(operator, { id: 'agent-a' })
    await ops.addMessage(agent, { conversationId: 'c1', role: 'USER', content: 'I drink green tea.' })
    await ops.search(agent, { query: 'tea', scopes: ['MESSAGES', 'MEMORIES'], strategy: 'RECENCY' })
    await ops.search(agent, { query: 'tea' })
    expect(seen.searches.map(({ scope, strategy }) => [scope, strategy])).toEqual([
      ['MESSAGES', 'RECENCY'],
      ['MEMORIES', 'RECENCY'],
      ['MESSAGES', 'HYBRID'],
    ])
    for (const search of seen.searches) expect(search.seconds).toBeGreaterThanOrEqual(0)
    expect(JSON.stringify(seen)).not.toContain('agent-a')
  })

  it('reports the embedding cache: a text seen before is a hit', async () => {
    const { seen, telemetry } = recorder()
    const { engine } = engineWith(telemetry)
    await engine.embeddings.embedTexts('agent-a', ['green tea', 'black coffee'])
    await engine.embeddings.embedTexts('agent-a', ['green tea'])
    expect(seen.lookups.filter((l) => l.cache === 'embedding').map((l) => l.hit)).toEqual([
      false,
      false,
      true,
    ])
  })

  it('reports the tokens each optimizer run saved', async () => {
    const { seen, telemetry } = recorder()
    const { ops } = engineWith(telemetry)
    await ops.createAgent(operator, { id: 'agent-a' })
    await ops.addMessage(agent, { conversationId: 'c1', role: 'USER', content: 'hello there' })
    const run = await ops.runOptimizer(agent, {})
    expect(seen.saved).toEqual([run.tokensSaved])
  })

  it('reports job outcomes by kind: done, retried, failed for good', async () => {
    const { seen, telemetry } = recorder()
    let now = start.getTime()
    const clock: Clock = { now: () => new Date(now) }
    const storage = createInMemoryStorage(clock)
    const worker = new JobWorker(storage.jobs, clock, SILENT_LOGGER)
    worker.reportTo(telemetry)
    worker.register('ok', async () => ({}))
    worker.register('broken', async (jobs) => ({ failed: new Map(jobs.map((j) => [j.id, 'no'])) }), {
      maxAttempts: 2,
      backoffBaseMs: 1_000,
      backoffMaxMs: 1_000,
    })
    await storage.jobs.enqueue([
      { kind: 'ok', agentId: 'a', key: 'k1', payload: {} },
      { kind: 'broken', agentId: 'a', key: 'k2', payload: {} },
    ])
    await worker.runDue()
    // The failed job comes due again after its backoff, on the clock.
    now += 60_000
    await worker.runDue()
    expect(seen.jobs).toEqual([
      { kind: 'ok', outcome: 'done' },
      { kind: 'broken', outcome: 'retried' },
      { kind: 'broken', outcome: 'failed' },
    ])
  })

  it('answers serverMetrics from the server’s source, the newest sample as current; an empty ring without one', async () => {
    const { telemetry } = recorder()
    const sample = {
      at: start,
      requestsPerSecond: 2,
      errorRate: 0,
      p95LatencySeconds: 0.05,
      searchP95Seconds: [],
      cacheHitRates: [],
      queueDepth: [],
      embeddingBacklog: 0,
      counts: {
        agents: 1,
        memories: 0,
        messages: 0,
        knowledge: 0,
        graphEntities: 0,
        graphRelationships: 0,
        trajectories: 0,
      },
      databaseBytes: 4096,
    }
    const asked: (number | undefined)[] = []
    const { ops } = engineWith(telemetry, {
      serverMetrics: {
        async read(windowMs) {
          asked.push(windowMs)
          return { sampleIntervalMs: 10_000, windowMs: 3_600_000, samples: [sample] }
        },
      },
    })
    const report = await ops.serverMetrics(operator, { windowSeconds: 60 })
    expect(asked).toEqual([60_000])
    expect(report.current).toEqual({ ...sample, at: start.toISOString() })
    await expect(ops.serverMetrics(agent, {})).rejects.toMatchObject({ code: 'FORBIDDEN' })
    const bare = engineWith(telemetry)
    expect(await bare.ops.serverMetrics(operator, {})).toEqual({
      sampleIntervalMs: 0,
      windowMs: 0,
      samples: [],
      current: null,
    })
  })
})

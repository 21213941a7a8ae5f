import { describe, expect, it } from 'vitest'
import { cacheSeries, type MetricsSample, queued, queueSeries, requestSeries, searchSeries } from './metrics'

const sample = (at: string, over: Partial<MetricsSample> = {}): MetricsSample => ({
  at,
  requestsPerSecond: 2.345,
  errorRate: 0.125,
  p95LatencySeconds: 0.0421,
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
  databaseBytes: 0,
  ...over,
})

describe('metrics series', () => {
  it('turns rates into the units the charts show: req/s, % errors, ms', () => {
    expect(requestSeries([sample('2026-01-15T10:00:10.000Z')])).toEqual([
      { time: '10:00:10', requests: 2.35, errors: 12.5, p95: 42.1 },
    ])
    expect(
      requestSeries([sample('2026-01-15T10:00:10.000Z', { p95LatencySeconds: null })])[0]?.p95,
    ).toBeNull()
  })

  it('gives each scope and cache its own line, null where a sample had none', () => {
    const samples = [
      sample('2026-01-15T10:00:00.000Z', {
        searchP95Seconds: [{ scope: 'MESSAGES', p95Seconds: 0.01, searches: 3 }],
        cacheHitRates: [{ cache: 'context', hitRate: 0.5, lookups: 4 }],
      }),
      sample('2026-01-15T10:00:10.000Z', {
        searchP95Seconds: [{ scope: 'MEMORIES', p95Seconds: 0.02, searches: 1 }],
        cacheHitRates: [{ cache: 'context', hitRate: null, lookups: 0 }],
      }),
    ]
    expect(searchSeries(samples)).toEqual({
      keys: ['MEMORIES', 'MESSAGES'],
      points: [
        { time: '10:00:00', MEMORIES: null, MESSAGES: 10 },
        { time: '10:00:10', MEMORIES: 20, MESSAGES: null },
      ],
    })
    expect(cacheSeries(samples).points).toEqual([
      { time: '10:00:00', context: 50 },
      { time: '10:00:10', context: null },
    ])
  })

  it('counts queued jobs apart from dead-lettered ones', () => {
    const s = sample('2026-01-15T10:00:00.000Z', {
      queueDepth: [
        { kind: 'embed', state: 'pending', jobs: 4 },
        { kind: 'extract', state: 'running', jobs: 1 },
        { kind: 'embed', state: 'failed', jobs: 2 },
      ],
      embeddingBacklog: 4,
    })
    expect(queued(s)).toBe(5)
    expect(queueSeries([s])).toEqual([{ time: '10:00:00', queued: 5, failed: 2, backlog: 4 }])
  })
})

import { describe, expect, it } from 'vitest'
import {
  bucketDelta,
  type CumulativeReading,
  DEFAULT_METRICS_RULES,
  histogramQuantile,
  intervalRates,
  MetricsRulesSchema,
  SampleRing,
} from './metrics.ts'

const buckets = (pairs: [number, number][]) => pairs.map(([le, count]) => ({ le, count }))

describe('metrics rules', () => {
  it('defaults to a sample every 10 s over the last hour', () => {
    expect(DEFAULT_METRICS_RULES).toEqual({ sampleIntervalMs: 10_000, windowMs: 3_600_000 })
  })

  it('refuses an interval below a second and a ring past its cap, naming the field', () => {
    const tooFast = MetricsRulesSchema.safeParse({ sampleIntervalMs: 999 })
    expect(tooFast.success).toBe(false)
    expect(tooFast.error?.issues[0]?.path).toEqual(['sampleIntervalMs'])
    const tooMany = MetricsRulesSchema.safeParse({ sampleIntervalMs: 1_000, windowMs: 86_400_000 })
    expect(tooMany.success).toBe(false)
    expect(tooMany.error?.issues[0]?.message).toContain('10000')
  })
})

describe('histogramQuantile', () => {
  it('interpolates inside the bucket the rank falls in, as Prometheus does', () => {
    // 100 observations: 50 ≤ 0.1 s, 90 ≤ 0.5 s, 100 ≤ 1 s. p95 is half-way through (0.5, 1].
    const h = buckets([
      [0.1, 50],
      [0.5, 90],
      [1, 100],
      [Number.POSITIVE_INFINITY, 100],
    ])
    expect(histogramQuantile(0.95, h)).toBeCloseTo(0.75)
    expect(histogramQuantile(0.5, h)).toBeCloseTo(0.1)
  })

  it('answers null without observations and the highest finite bound past it', () => {
    expect(
      histogramQuantile(
        0.95,
        buckets([
          [1, 0],
          [Number.POSITIVE_INFINITY, 0],
        ]),
      ),
    ).toBeNull()
    expect(
      histogramQuantile(
        0.95,
        buckets([
          [1, 0],
          [Number.POSITIVE_INFINITY, 10],
        ]),
      ),
    ).toBe(1)
  })
})

describe('intervalRates', () => {
  const reading = (
    at: number,
    requests: number,
    errors: number,
    fast: number,
    slow: number,
  ): CumulativeReading => ({
    at,
    requests,
    errors,
    requestDuration: buckets([
      [0.01, fast],
      [1, fast + slow],
      [Number.POSITIVE_INFINITY, fast + slow],
    ]),
    searchDuration: {
      MESSAGES: buckets([
        [0.01, fast],
        [Number.POSITIVE_INFINITY, fast],
      ]),
    },
    cacheLookups: { context: { hits: errors, lookups: requests } },
  })

  it('takes what happened between two readings: rate, error share, the interval’s own p95', () => {
    const before = reading(0, 100, 0, 100, 0)
    // 10 s later: 20 more requests, 5 failed, all of them slow.
    const after = reading(10_000, 120, 5, 100, 20)
    const rates = intervalRates(before, after)
    expect(rates.requestsPerSecond).toBe(2)
    expect(rates.errorRate).toBe(0.25)
    // Only the interval's 20 slow requests count: p95 lies in (0.01, 1], not in the fast bucket.
    expect(rates.p95LatencySeconds).toBeGreaterThan(0.9)
    expect(rates.searchP95Seconds).toEqual([{ scope: 'MESSAGES', p95Seconds: null, searches: 0 }])
    expect(rates.cacheHitRates).toEqual([{ cache: 'context', hitRate: 0.25, lookups: 20 }])
  })

  it('counts from zero after a reset (a counter that went down)', () => {
    expect(bucketDelta(buckets([[1, 50]]), buckets([[1, 3]]))).toEqual(buckets([[1, 3]]))
    const rates = intervalRates(reading(0, 100, 0, 100, 0), reading(10_000, 10, 0, 10, 0))
    expect(rates.requestsPerSecond).toBe(1)
  })
})

describe('SampleRing', () => {
  it('keeps the window and drops what falls out of it', () => {
    const ring = new SampleRing<{ at: number }>({ sampleIntervalMs: 10_000, windowMs: 60_000 })
    for (let at = 0; at <= 120_000; at += 10_000) ring.push({ at })
    // At 120 s the window (60 s] holds 70 s to 120 s.
    expect(ring.size).toBe(6)
    expect(ring.since(90_000).map((s) => s.at)).toEqual([100_000, 110_000, 120_000])
    expect(ring.latest?.at).toBe(120_000)
  })
})

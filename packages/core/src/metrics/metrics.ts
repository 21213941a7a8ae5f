import { z } from 'zod'

/**
 * How the server keeps the headline series an operator charts (issue 17 §3): one sample every
 * `sampleIntervalMs` (10 s), held for `windowMs` (the last hour). Server-wide
 * (ENGRAM_METRICS_SAMPLE_MS, ENGRAM_METRICS_WINDOW_MS), parsed once at start-up.
 */
export const MetricsRulesSchema = z
  .object({
    sampleIntervalMs: z.number().int().min(1_000).max(600_000).default(10_000),
    windowMs: z.number().int().min(60_000).max(86_400_000).default(3_600_000),
  })
  .refine((rules) => rules.windowMs / rules.sampleIntervalMs <= MAX_METRICS_SAMPLES, {
    path: ['sampleIntervalMs'],
    message: 'windowMs / sampleIntervalMs must be at most 10000 (the samples the ring keeps)',
  })
export type MetricsRules = z.infer<typeof MetricsRulesSchema>

/** Samples the ring holds at most (a day at 10 s is 8,640): bounds its memory whatever the rules. */
export const MAX_METRICS_SAMPLES = 10_000
/** The longest window a serverMetrics read may ask for (s): the longest ring there can be. */
export const MAX_METRICS_WINDOW_SECONDS = 86_400

export const DEFAULT_METRICS_RULES: MetricsRules = MetricsRulesSchema.parse({})

/** One cumulative histogram bucket: observations at most `le` seconds (`le` Infinity for +Inf). */
export interface HistogramBucket {
  le: number
  count: number
}

/**
 * The q-quantile of a cumulative histogram, interpolated linearly inside the bucket it falls in,
 * as Prometheus' histogram_quantile does; null with no observations. A quantile in the +Inf
 * bucket answers the highest finite bound (nothing better is known).
 */
export function histogramQuantile(q: number, buckets: readonly HistogramBucket[]): number | null {
  const sorted = [...buckets].sort((a, b) => a.le - b.le)
  const total = sorted.at(-1)?.count ?? 0
  if (total <= 0) return null
  const rank = q * total
  let lowerBound = 0
  let lowerCount = 0
  for (const bucket of sorted) {
    if (bucket.count >= rank) {
      if (!Number.isFinite(bucket.le)) return lowerBound
      const inBucket = bucket.count - lowerCount
      if (inBucket <= 0) return bucket.le
      return lowerBound + (bucket.le - lowerBound) * ((rank - lowerCount) / inBucket)
    }
    lowerBound = bucket.le
    lowerCount = bucket.count
  }
  return lowerBound
}

/** What one interval added to a cumulative histogram: `after` minus `before`, bucket by bucket. */
export function bucketDelta(
  before: readonly HistogramBucket[] | undefined,
  after: readonly HistogramBucket[],
): HistogramBucket[] {
  const previous = new Map((before ?? []).map((b) => [b.le, b.count]))
  // A counter that went down was reset (a restarted registry): the interval counts from zero.
  const reset = after.some((b) => b.count < (previous.get(b.le) ?? 0))
  return after.map((b) => ({ le: b.le, count: reset ? b.count : b.count - (previous.get(b.le) ?? 0) }))
}

/**
 * The cumulative figures a sample is computed from: counters only grow, so two readings give what
 * happened between them. Labels are closed sets (scopes, caches), never ids.
 */
export interface CumulativeReading {
  /** Clock ms when read. */
  at: number
  requests: number
  errors: number
  requestDuration: HistogramBucket[]
  searchDuration: Record<string, HistogramBucket[]>
  cacheLookups: Record<string, { hits: number; lookups: number }>
}

/** The rates of one interval between two readings: what the dashboard charts. */
export interface IntervalRates {
  requestsPerSecond: number
  /** Errors per request in the interval; 0 when there was no request. */
  errorRate: number
  /** p95 of the interval's requests (s); null when there was none. */
  p95LatencySeconds: number | null
  searchP95Seconds: { scope: string; p95Seconds: number | null; searches: number }[]
  cacheHitRates: { cache: string; hitRate: number | null; lookups: number }[]
}

const delta = (after: number, before: number | undefined) =>
  after >= (before ?? 0) ? after - (before ?? 0) : after

/**
 * Rates between two readings (the first sample has no previous one: everything since start-up).
 * Quantiles come from the interval's own buckets, so an old slow hour does not hide a fast minute.
 */
export function intervalRates(previous: CumulativeReading | null, current: CumulativeReading): IntervalRates {
  const seconds = Math.max((current.at - (previous?.at ?? current.at)) / 1000, 0)
  const requests = delta(current.requests, previous?.requests)
  const errors = delta(current.errors, previous?.errors)
  const requestBuckets = bucketDelta(previous?.requestDuration, current.requestDuration)
  return {
    requestsPerSecond: seconds > 0 ? requests / seconds : 0,
    errorRate: requests > 0 ? Math.min(errors / requests, 1) : 0,
    p95LatencySeconds: histogramQuantile(0.95, requestBuckets),
    searchP95Seconds: Object.entries(current.searchDuration)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([scope, buckets]) => {
        const interval = bucketDelta(previous?.searchDuration[scope], buckets)
        return {
          scope,
          p95Seconds: histogramQuantile(0.95, interval),
          searches: interval.at(-1)?.count ?? 0,
        }
      }),
    cacheHitRates: Object.entries(current.cacheLookups)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([cache, now]) => {
        const before = previous?.cacheLookups[cache]
        const lookups = delta(now.lookups, before?.lookups)
        const hits = lookups === now.lookups ? now.hits : delta(now.hits, before?.hits)
        return { cache, hitRate: lookups > 0 ? hits / lookups : null, lookups }
      }),
  }
}

/**
 * A ring of samples for the window: the oldest dropped once the window (or the cap) is past.
 * Pure bookkeeping; the server decides when to sample (its clock) and what a sample holds.
 */
export class SampleRing<T extends { at: number }> {
  private readonly samples: T[] = []

  constructor(private readonly rules: MetricsRules) {}

  push(sample: T): void {
    this.samples.push(sample)
    const oldest = sample.at - this.rules.windowMs
    while (
      this.samples.length > 0 &&
      ((this.samples[0] as T).at <= oldest || this.samples.length > MAX_METRICS_SAMPLES)
    )
      this.samples.shift()
  }

  /** Samples newer than `since` (clock ms), oldest first. */
  since(since: number): T[] {
    return this.samples.filter((s) => s.at > since)
  }

  get latest(): T | null {
    return this.samples.at(-1) ?? null
  }

  get size(): number {
    return this.samples.length
  }
}

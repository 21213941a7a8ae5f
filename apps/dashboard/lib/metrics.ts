// The Metrics page's data (issue 17): the admin query serverMetrics, and the pure shaping of its
// samples into the series the charts draw. No React here, so it is tested on its own.

export interface MetricsSample {
  at: string
  requestsPerSecond: number
  errorRate: number
  p95LatencySeconds: number | null
  searchP95Seconds: { scope: string; p95Seconds: number | null; searches: number }[]
  cacheHitRates: { cache: string; hitRate: number | null; lookups: number }[]
  queueDepth: { kind: string; state: string; jobs: number }[]
  embeddingBacklog: number
  counts: {
    agents: number
    memories: number
    messages: number
    knowledge: number
    graphEntities: number
    graphRelationships: number
    trajectories: number
  }
  databaseBytes: number
}

export interface MetricsReport {
  sampleIntervalMs: number
  windowMs: number
  samples: MetricsSample[]
  current: MetricsSample | null
}

const SAMPLE_FIELDS = `at requestsPerSecond errorRate p95LatencySeconds embeddingBacklog databaseBytes
  searchP95Seconds { scope p95Seconds searches } cacheHitRates { cache hitRate lookups }
  queueDepth { kind state jobs }
  counts { agents memories messages knowledge graphEntities graphRelationships trajectories }`

export const SERVER_METRICS_QUERY = `query { serverMetrics { __typename ... on ServerMetrics {
  sampleIntervalMs windowMs samples { ${SAMPLE_FIELDS} } current { ${SAMPLE_FIELDS} } } ... on Error { message } } }`

/** One chart point per sample; a series' value is null where the sample had nothing to measure. */
export type Point = { time: string } & Record<string, number | string | null>

const clock = (at: string) => at.slice(11, 19)

/** Requests per second, error rate (%) and p95 latency (ms) per sample. */
export function requestSeries(samples: readonly MetricsSample[]): Point[] {
  return samples.map((s) => ({
    time: clock(s.at),
    requests: round(s.requestsPerSecond),
    errors: round(s.errorRate * 100),
    p95: s.p95LatencySeconds === null ? null : round(s.p95LatencySeconds * 1000),
  }))
}

/** Search p95 (ms) per scope: one key per scope any sample has. */
export function searchSeries(samples: readonly MetricsSample[]): { keys: string[]; points: Point[] } {
  const keys = [...new Set(samples.flatMap((s) => s.searchP95Seconds.map((x) => x.scope)))].sort()
  return {
    keys,
    points: samples.map((s) => {
      const point: Point = { time: clock(s.at) }
      for (const key of keys) {
        const p95 = s.searchP95Seconds.find((x) => x.scope === key)?.p95Seconds ?? null
        point[key] = p95 === null ? null : round(p95 * 1000)
      }
      return point
    }),
  }
}

/** Cache hit rates (%) per cache. */
export function cacheSeries(samples: readonly MetricsSample[]): { keys: string[]; points: Point[] } {
  const keys = [...new Set(samples.flatMap((s) => s.cacheHitRates.map((x) => x.cache)))].sort()
  return {
    keys,
    points: samples.map((s) => {
      const point: Point = { time: clock(s.at) }
      for (const key of keys) {
        const rate = s.cacheHitRates.find((x) => x.cache === key)?.hitRate ?? null
        point[key] = rate === null ? null : round(rate * 100)
      }
      return point
    }),
  }
}

/** Jobs waiting or running, and dead-lettered, per sample. */
export function queueSeries(samples: readonly MetricsSample[]): Point[] {
  return samples.map((s) => ({
    time: clock(s.at),
    queued: queued(s),
    failed: s.queueDepth.filter((q) => q.state === 'failed').reduce((n, q) => n + q.jobs, 0),
    backlog: s.embeddingBacklog,
  }))
}

/** Jobs still to run (pending or running) in one sample. */
export function queued(sample: MetricsSample): number {
  return sample.queueDepth.filter((q) => q.state !== 'failed').reduce((n, q) => n + q.jobs, 0)
}

function round(value: number): number {
  return Math.round(value * 100) / 100
}

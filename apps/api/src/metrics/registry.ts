import type { CumulativeReading, HistogramBucket } from '@engram/core'
import type { Telemetry } from '@engram/engine'
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client'

/** Where /metrics is served (Prometheus' default path). */
export const METRICS_PATH = '/metrics'

// Request latency: a cached context read is a few ms, a cold hybrid search tens, an import seconds.
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]
const SEARCH_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

/**
 * A label value from a closed set as written, anything else one bucket: the engine passes scopes,
 * strategies and job kinds (closed sets), and this keeps a bug from turning an id into a series.
 */
export function boundedLabel(seen: Set<string>, value: string, cap: number, fallback = 'other'): string {
  if (!/^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/.test(value)) return fallback
  if (seen.has(value)) return value
  if (seen.size >= cap) return fallback
  seen.add(value)
  return value
}

/**
 * One Prometheus registry per app (never prom-client's global one: tests run several apps in one
 * process, and two replicas' figures must not mix). It holds what the engine reports through its
 * Telemetry port, what the GraphQL plugin counts, and the gauges collected on each scrape.
 * Names follow Prometheus' conventions: `engram_` prefix, `_total` counters, `_seconds` durations.
 */
export function createMetricsRegistry(options: { processMetrics?: boolean } = {}) {
  const registry = new Registry()
  const registers = [registry]
  // Node's own: CPU, memory, event loop lag, GC, handles (standard names, no prefix).
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry })

  const requests = new Counter({
    name: 'engram_graphql_requests_total',
    help: 'GraphQL requests over HTTP, by operation (the root field) and type.',
    labelNames: ['operation', 'type'] as const,
    registers,
  })
  const requestDuration = new Histogram({
    name: 'engram_graphql_request_duration_seconds',
    help: 'GraphQL request duration, from the request to its answer, by operation and type.',
    labelNames: ['operation', 'type'] as const,
    buckets: REQUEST_BUCKETS,
    registers,
  })
  const errors = new Counter({
    name: 'engram_graphql_errors_total',
    help: 'Errors in GraphQL answers, by operation and error code (UNAUTHENTICATED, VALIDATION, ...).',
    labelNames: ['operation', 'code'] as const,
    registers,
  })
  const searchDuration = new Histogram({
    name: 'engram_search_duration_seconds',
    help: 'Search duration by scope searched and strategy (a search of two scopes counts in each).',
    labelNames: ['scope', 'strategy'] as const,
    buckets: SEARCH_BUCKETS,
    registers,
  })
  const cacheLookups = new Counter({
    name: 'engram_cache_lookups_total',
    help: 'Lookups in the engine’s caches (context, embedding, working_context, episodic), hit or miss.',
    labelNames: ['cache', 'result'] as const,
    registers,
  })
  const tokensSaved = new Counter({
    name: 'engram_optimizer_tokens_saved_total',
    help: 'Tokens the optimizer’s runs saved (spec 002 memory.summarization.tokens_saved).',
    registers,
  })
  const optimizerRuns = new Counter({
    name: 'engram_optimizer_runs_total',
    help: 'Optimizer runs (spec 002 memory.summarization.runs).',
    registers,
  })
  const jobsFinished = new Counter({
    name: 'engram_jobs_finished_total',
    help: 'Background jobs finished by kind (extract, summary, profile, graph, embed...) and outcome (done, retried, failed).',
    labelNames: ['kind', 'outcome'] as const,
    registers,
  })
  const flushes = new Counter({
    name: 'engram_working_context_flushes_total',
    help: 'Working context (L1) flushes to the stored conversation, by reason.',
    labelNames: ['reason'] as const,
    registers,
  })
  const flushedTokens = new Counter({
    name: 'engram_working_context_flushed_tokens_total',
    help: 'Tokens the working context flushes moved to the stored conversation, by reason.',
    labelNames: ['reason'] as const,
    registers,
  })

  const scopes = new Set<string>()
  const strategies = new Set<string>()
  const kinds = new Set<string>()
  const telemetry: Telemetry = {
    cacheLookup(cache, hit) {
      cacheLookups.inc({ cache, result: hit ? 'hit' : 'miss' })
    },
    searchObserved(scope, strategy, seconds) {
      searchDuration.observe(
        { scope: boundedLabel(scopes, scope, 16), strategy: boundedLabel(strategies, strategy, 16) },
        Math.max(seconds, 0),
      )
    },
    tokensSaved(tokens) {
      optimizerRuns.inc()
      if (tokens > 0) tokensSaved.inc(tokens)
    },
    jobFinished(kind, outcome) {
      jobsFinished.inc({ kind: boundedLabel(kinds, kind, 32), outcome })
    },
    workingContextFlushed(reason, tokens) {
      flushes.inc({ reason })
      if (tokens > 0) flushedTokens.inc({ reason }, tokens)
    },
  }

  /** The cumulative figures the server's samples are computed from (core's intervalRates). */
  async function reading(at: number): Promise<CumulativeReading> {
    const sum = async (counter: Counter<string>) =>
      (await counter.get()).values.reduce((total, v) => total + v.value, 0)
    const lookups: CumulativeReading['cacheLookups'] = {}
    for (const v of (await cacheLookups.get()).values) {
      const cache = String(v.labels.cache)
      const entry = lookups[cache] ?? { hits: 0, lookups: 0 }
      entry.lookups += v.value
      if (v.labels.result === 'hit') entry.hits += v.value
      lookups[cache] = entry
    }
    return {
      at,
      requests: await sum(requests),
      errors: await sum(errors),
      requestDuration: await bucketsBy(requestDuration, () => 'all').then((b) => b.all ?? []),
      searchDuration: await bucketsBy(searchDuration, (labels) => String(labels.scope)),
      cacheLookups: lookups,
    }
  }

  return {
    registry,
    telemetry,
    requests,
    requestDuration,
    errors,
    reading,
  }
}

export type MetricsRegistry = ReturnType<typeof createMetricsRegistry>

/** A histogram's cumulative buckets summed over every label but the one `groupOf` picks. */
async function bucketsBy(
  histogram: Histogram<string>,
  groupOf: (labels: Partial<Record<string, string | number>>) => string,
): Promise<Record<string, HistogramBucket[]>> {
  const groups = new Map<string, Map<number, number>>()
  for (const v of (await histogram.get()).values) {
    if (!v.metricName?.endsWith('_bucket')) continue
    const le = v.labels.le === '+Inf' ? Number.POSITIVE_INFINITY : Number(v.labels.le)
    const group = groupOf(v.labels)
    const buckets = groups.get(group) ?? new Map<number, number>()
    buckets.set(le, (buckets.get(le) ?? 0) + v.value)
    groups.set(group, buckets)
  }
  return Object.fromEntries(
    [...groups].map(([group, buckets]) => [
      group,
      [...buckets].sort(([a], [b]) => a - b).map(([le, count]) => ({ le, count })),
    ]),
  )
}

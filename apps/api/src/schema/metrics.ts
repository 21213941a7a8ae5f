// The server's metrics (issue 17 §3): the headline series the dashboard's Metrics page charts,
// answered through the operations layer (admin only: an agent key gets FORBIDDEN).
import type { OutputOf } from '@engram/contract'
import { builder } from '../builder.ts'
import { operate } from '../operations.ts'

type Report = OutputOf<'serverMetrics'>
type Sample = Report['samples'][number]

const ScopeLatencyRef = builder
  .objectRef<Sample['searchP95Seconds'][number]>('SearchScopeLatency')
  .implement({
    fields: (t) => ({
      scope: t.exposeString('scope', { description: 'The search scope (MESSAGES, MEMORIES, ...).' }),
      p95Seconds: t.exposeFloat('p95Seconds', {
        nullable: true,
        description: 'p95 of the interval’s searches of this scope; null when there was none.',
      }),
      searches: t.exposeInt('searches', { description: 'Searches of this scope in the interval.' }),
    }),
  })

const CacheHitRateRef = builder.objectRef<Sample['cacheHitRates'][number]>('CacheHitRate').implement({
  fields: (t) => ({
    cache: t.exposeString('cache', { description: 'context, embedding, working_context or episodic.' }),
    hitRate: t.exposeFloat('hitRate', {
      nullable: true,
      description: 'Hits per lookup in the interval; null when there was no lookup.',
    }),
    lookups: t.exposeInt('lookups'),
  }),
})

const QueueDepthRef = builder.objectRef<Sample['queueDepth'][number]>('QueueDepth').implement({
  fields: (t) => ({
    kind: t.exposeString('kind', {
      description: 'The job kind (extract, summary, profile, graph, embed...).',
    }),
    state: t.exposeString('state', { description: 'pending, running or failed (dead-lettered).' }),
    jobs: t.exposeInt('jobs'),
  }),
})

const StoreCountsRef = builder.objectRef<Sample['counts']>('StoreCounts').implement({
  fields: (t) => ({
    agents: t.exposeInt('agents'),
    memories: t.exposeInt('memories'),
    messages: t.exposeInt('messages'),
    knowledge: t.exposeInt('knowledge'),
    graphEntities: t.exposeInt('graphEntities'),
    graphRelationships: t.exposeInt('graphRelationships'),
    trajectories: t.exposeInt('trajectories'),
  }),
})

const SampleRef = builder.objectRef<Sample>('ServerMetricsSample').implement({
  description:
    'One sample of the server’s headline series; rates cover the interval since the previous sample.',
  fields: (t) => ({
    at: t.field({ type: 'DateTime', resolve: (s) => s.at }),
    requestsPerSecond: t.exposeFloat('requestsPerSecond', { description: 'GraphQL requests per second.' }),
    errorRate: t.exposeFloat('errorRate', { description: 'Errors per request (0 to 1).' }),
    p95LatencySeconds: t.exposeFloat('p95LatencySeconds', {
      nullable: true,
      description: 'p95 request latency (s); null when there was no request.',
    }),
    searchP95Seconds: t.field({ type: [ScopeLatencyRef], resolve: (s) => s.searchP95Seconds }),
    cacheHitRates: t.field({ type: [CacheHitRateRef], resolve: (s) => s.cacheHitRates }),
    queueDepth: t.field({ type: [QueueDepthRef], resolve: (s) => s.queueDepth }),
    embeddingBacklog: t.exposeInt('embeddingBacklog', { description: 'Embed jobs still to run.' }),
    counts: t.field({ type: StoreCountsRef, resolve: (s) => s.counts }),
    databaseBytes: t.exposeFloat('databaseBytes', {
      description: 'The database on disk (SQLite file + WAL, or pg_database_size), bytes.',
    }),
  }),
})

const ServerMetricsRef = builder.objectRef<Report>('ServerMetrics').implement({
  fields: (t) => ({
    sampleIntervalMs: t.exposeInt('sampleIntervalMs', {
      description: 'ENGRAM_METRICS_SAMPLE_MS (0: no sampling).',
    }),
    windowMs: t.exposeInt('windowMs', {
      description: 'How long samples are kept (ENGRAM_METRICS_WINDOW_MS).',
    }),
    samples: t.field({ type: [SampleRef], resolve: (r) => r.samples, description: 'Oldest first.' }),
    current: t.field({
      type: SampleRef,
      nullable: true,
      resolve: (r) => r.current,
      description: 'The newest sample; null before the first is taken.',
    }),
  }),
})

builder.queryFields((t) => ({
  serverMetrics: t.field({
    type: ServerMetricsRef,
    errors: {},
    description:
      'The server’s headline series over the last hour (admin): requests/s, error rate, p95 latency, search p95 by scope, cache hit rates, queue depth, embedding backlog, counts, database size. Prometheus scrapes /metrics for the full set.',
    args: {
      windowSeconds: t.arg.int({
        description:
          'Only the samples of the last this many seconds (10 to 86400); the whole ring when omitted.',
      }),
    },
    resolve: (_root, args, ctx) => operate(ctx, 'serverMetrics', args),
  }),
}))

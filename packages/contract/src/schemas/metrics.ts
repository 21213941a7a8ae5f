import { z } from 'zod'
import { CONTRACT_LIMITS as L } from '../limits.ts'

// The server's metrics (issue 17 §3): the headline series the dashboard's Metrics page charts,
// sampled by the API every ENGRAM_METRICS_SAMPLE_MS. Labels are closed sets (scopes, caches, job
// kinds and states), never ids.

export const ServerMetricsInputSchema = z.object({
  /** The last seconds of samples to return; the whole ring (an hour by default) when omitted. */
  windowSeconds: z.number().int().min(10).max(L.maxMetricsWindowSeconds).optional(),
})

const seconds = z.number().min(0)

export const ServerMetricsSampleSchema = z.object({
  at: z.string(),
  requestsPerSecond: z.number().min(0),
  errorRate: z.number().min(0).max(1),
  p95LatencySeconds: seconds.nullable(),
  searchP95Seconds: z
    .object({ scope: z.string(), p95Seconds: seconds.nullable(), searches: z.number().int().min(0) })
    .array(),
  cacheHitRates: z
    .object({
      cache: z.string(),
      hitRate: z.number().min(0).max(1).nullable(),
      lookups: z.number().int().min(0),
    })
    .array(),
  queueDepth: z.object({ kind: z.string(), state: z.string(), jobs: z.number().int().min(0) }).array(),
  embeddingBacklog: z.number().int().min(0),
  counts: z.object({
    agents: z.number().int().min(0),
    memories: z.number().int().min(0),
    messages: z.number().int().min(0),
    knowledge: z.number().int().min(0),
    graphEntities: z.number().int().min(0),
    graphRelationships: z.number().int().min(0),
    trajectories: z.number().int().min(0),
  }),
  databaseBytes: z.number().min(0),
})

export const ServerMetricsSchema = z.object({
  sampleIntervalMs: z.number().int().min(0),
  windowMs: z.number().int().min(0),
  samples: ServerMetricsSampleSchema.array(),
  /** The newest sample (what an operator checks first); null before the first one is taken. */
  current: ServerMetricsSampleSchema.nullable(),
})

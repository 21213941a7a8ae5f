/**
 * The headline series of the server's metrics (issue 17 §3), as the admin query `serverMetrics`
 * answers them: the API door keeps a ring of samples taken from its Prometheus registry; an engine
 * without one (the embedded SDK) has no server to measure and answers an empty ring.
 * Every label is a closed set (scopes, caches, job kinds and states), never an id.
 */
export interface ServerMetricsSample {
  at: Date
  requestsPerSecond: number
  /** Errors per request in the interval before `at`; 0 when there was none. */
  errorRate: number
  /** p95 of the interval's GraphQL requests (s); null when there was none. */
  p95LatencySeconds: number | null
  searchP95Seconds: { scope: string; p95Seconds: number | null; searches: number }[]
  cacheHitRates: { cache: string; hitRate: number | null; lookups: number }[]
  queueDepth: { kind: string; state: string; jobs: number }[]
  /** Embed jobs still to run (pending or running). */
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
  /** The database's size on disk (SQLite file + WAL; Postgres pg_database_size), bytes. */
  databaseBytes: number
}

export interface ServerMetricsReport {
  /** How often a sample is taken (ms) and how long they are kept (ms). */
  sampleIntervalMs: number
  windowMs: number
  /** The samples of the asked window, oldest first. */
  samples: ServerMetricsSample[]
}

export interface ServerMetricsSource {
  /** The samples of the last `windowMs` (the whole ring when omitted). */
  read(windowMs?: number): Promise<ServerMetricsReport>
}

/** An engine with no server: nothing is sampled. */
export const NO_SERVER_METRICS: ServerMetricsSource = {
  async read() {
    return { sampleIntervalMs: 0, windowMs: 0, samples: [] }
  },
}

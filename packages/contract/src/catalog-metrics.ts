import { operation } from './operation.ts'
import * as s from './schemas.ts'

/** The server's metrics (issue 17 §3): operators only. Spread into the catalog in catalog.ts. */
export const metricsOperations = {
  serverMetrics: operation({
    kind: 'query',
    description:
      'The server’s headline series over the last hour (a sample every 10 s by default): requests per second, error rate, p95 latency, search p95 by scope, cache hit rates, job queue depth, embedding backlog, counts and database size, with the newest sample as `current`.',
    input: s.ServerMetricsInputSchema,
    output: s.ServerMetricsSchema,
    admin: true,
    graphql: { field: 'serverMetrics' },
  }),
}

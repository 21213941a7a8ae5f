import { gql } from '../../../lib/api'
import { type MetricsReport, SERVER_METRICS_QUERY } from '../../../lib/metrics'
import { MetricsConsole } from './metrics-console'

export const dynamic = 'force-dynamic'

/**
 * What an operator checks first (issue 17): the server's headline series over the last hour, the
 * newest values on top. Prometheus scrapes /metrics for everything else.
 */
export default async function MetricsPage() {
  const { serverMetrics } = await gql<{
    serverMetrics: MetricsReport & { __typename: string; message?: string }
  }>(SERVER_METRICS_QUERY)
  if (serverMetrics.__typename !== 'ServerMetrics')
    return <p className="empty">Metrics are unavailable: {serverMetrics.message}</p>
  return (
    <section aria-labelledby="metrics-heading">
      <header className="page-header">
        <h1 id="metrics-heading">Metrics</h1>
      </header>
      <MetricsConsole initial={serverMetrics} />
    </section>
  )
}

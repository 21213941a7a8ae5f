'use server'

import { gql } from '../../../lib/api'
import { type MetricsReport, SERVER_METRICS_QUERY } from '../../../lib/metrics'

/** The server's sampled series now (the page polls it at the sampling interval). */
export async function readServerMetrics(): Promise<MetricsReport | { error: string }> {
  const { serverMetrics } = await gql<{
    serverMetrics: MetricsReport & { __typename: string; message?: string }
  }>(SERVER_METRICS_QUERY)
  if (serverMetrics.__typename !== 'ServerMetrics') return { error: serverMetrics.message ?? 'unavailable' }
  return serverMetrics
}

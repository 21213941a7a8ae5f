'use client'

import { useEffect, useState } from 'react'
import { formatBytes, formatCount, formatExact, formatPercent } from '../../../lib/format'
import {
  cacheSeries,
  type MetricsReport,
  queued,
  queueSeries,
  requestSeries,
  searchSeries,
} from '../../../lib/metrics'
import { readServerMetrics } from './actions'
import { MetricsChart } from './metrics-chart'

/** Polling floor: a 1 s sampling interval is polled at most this often. */
const MIN_POLL_MS = 1_000

/** The current values and the charts, refreshed at the server's sampling interval. */
export function MetricsConsole({ initial }: { initial: MetricsReport }) {
  const [report, setReport] = useState(initial)
  const [error, setError] = useState<string | null>(null)
  useEffect(() => {
    if (initial.sampleIntervalMs <= 0) return
    let stopped = false
    const timer = setInterval(
      async () => {
        try {
          const next = await readServerMetrics()
          if (stopped) return
          if ('error' in next) setError(next.error)
          else {
            setReport(next)
            setError(null)
          }
        } catch (caught) {
          if (!stopped) setError(caught instanceof Error ? caught.message : String(caught))
        }
      },
      Math.max(initial.sampleIntervalMs, MIN_POLL_MS),
    )
    return () => {
      stopped = true
      clearInterval(timer)
    }
  }, [initial.sampleIntervalMs])

  const current = report.current
  const search = searchSeries(report.samples)
  const caches = cacheSeries(report.samples)
  const requests = requestSeries(report.samples)
  return (
    <>
      <p className="muted" data-testid="metrics-sampling">
        A sample every {Math.round(report.sampleIntervalMs / 1000)} s, the last{' '}
        {Math.round(report.windowMs / 60_000)} minutes ({report.samples.length} samples).
        {error ? ` Refresh failed: ${error}` : ''}
      </p>
      {current === null ? (
        <p className="empty" data-testid="metrics-empty">
          No sample yet: the first is taken {Math.round(report.sampleIntervalMs / 1000)} s after the server
          starts.
        </p>
      ) : (
        <section className="cards" aria-label="Current values">
          <Stat label="Requests/s" testId="metric-requests" value={current.requestsPerSecond.toFixed(2)} />
          <Stat label="Error rate" testId="metric-errors" value={formatPercent(current.errorRate)} />
          <Stat
            label="p95 latency"
            testId="metric-p95"
            value={
              current.p95LatencySeconds === null ? '—' : `${Math.round(current.p95LatencySeconds * 1000)} ms`
            }
          />
          <Stat label="Jobs queued" testId="metric-queued" value={formatCount(queued(current))} />
          <Stat
            label="Embedding backlog"
            testId="metric-backlog"
            value={formatCount(current.embeddingBacklog)}
          />
          <Stat label="Database" testId="metric-db" value={formatBytes(current.databaseBytes)} />
          <Stat label="Agents" testId="metric-agents" value={formatExact(current.counts.agents)} />
          <Stat label="Memories" testId="metric-memories" value={formatExact(current.counts.memories)} />
          <Stat label="Messages" testId="metric-messages" value={formatExact(current.counts.messages)} />
          <Stat label="Knowledge" testId="metric-knowledge" value={formatExact(current.counts.knowledge)} />
          <Stat
            label="Graph"
            testId="metric-graph"
            value={`${formatExact(current.counts.graphEntities)} / ${formatExact(current.counts.graphRelationships)}`}
            title="entities / relationships"
          />
          <Stat
            label="Trajectories"
            testId="metric-trajectories"
            value={formatExact(current.counts.trajectories)}
          />
        </section>
      )}
      <div className="charts">
        <MetricsChart
          title="Requests per second"
          testId="chart-requests"
          points={requests}
          keys={['requests']}
          unit="req/s"
        />
        <MetricsChart
          title="Error rate (%)"
          testId="chart-errors"
          points={requests}
          keys={['errors']}
          unit="%"
        />
        <MetricsChart
          title="p95 latency (ms)"
          testId="chart-latency"
          points={requests}
          keys={['p95']}
          unit="ms"
        />
        <MetricsChart
          title="Search p95 by scope (ms)"
          testId="chart-search"
          points={search.points}
          keys={search.keys}
          unit="ms"
        />
        <MetricsChart
          title="Cache hit rate (%)"
          testId="chart-caches"
          points={caches.points}
          keys={caches.keys}
          unit="%"
        />
        <MetricsChart
          title="Job queue and embedding backlog"
          testId="chart-queue"
          points={queueSeries(report.samples)}
          keys={['queued', 'failed', 'backlog']}
          unit="jobs"
        />
      </div>
    </>
  )
}

function Stat({
  label,
  value,
  testId,
  title,
}: {
  label: string
  value: string
  testId: string
  title?: string
}) {
  return (
    <div className="card stat">
      <span className="muted">{label}</span>
      <strong data-testid={testId} title={title}>
        {value}
      </strong>
    </div>
  )
}

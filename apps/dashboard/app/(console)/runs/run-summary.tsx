'use client'

import Link from 'next/link'
import { type ReactNode, useState } from 'react'
import { LiveStatusLine } from '../../../components/live-status-line'
import { TimeAgo } from '../../../components/time-ago'
import { useLiveSubscription } from '../../../components/use-live-subscription'
import {
  domainHref,
  formatDuration,
  RUN_EVENT_FIELDS,
  RUN_ID_TYPE,
  RUN_KIND_LABELS,
  type Run,
  type RunEvent,
  runDurationMs,
  runHref,
} from '../../../lib/runs'
import { StatusBadge } from './run-parts'
import { useNow } from './runs-table'

const EVENTS = `subscription($a: ID, $r: ${RUN_ID_TYPE}) { runEvents(agentId: $a, runId: $r) { ${RUN_EVENT_FIELDS} } }`

/** One run's facts, kept current by its runEvents while the page is open. */
export function RunSummary({
  agentId,
  initial,
  renderedAt,
}: {
  agentId: string
  initial: Run
  renderedAt: string
}) {
  const [run, setRun] = useState(initial)
  const now = useNow(renderedAt)
  const status = useLiveSubscription<{ runEvents: RunEvent }>({
    query: EVENTS,
    variables: { a: agentId, r: initial.id },
    tokenAgentId: agentId,
    onData: ({ runEvents: event }) =>
      // Events can cross on the bus: an older state never overwrites a newer one.
      setRun((current) => (event.run.updatedAt >= current.updatedAt ? event.run : current)),
  })
  const rows: [string, ReactNode][] = [
    ['Status', <StatusBadge key="s" status={run.status} />],
    ['Goal', run.goal],
    [
      'Domain',
      <Link key="d" href={domainHref(agentId, run.domain, run.scope)}>
        {run.domain}
      </Link>,
    ],
    [
      'Kind',
      run.parentRunId ? (
        <span key="k">
          {RUN_KIND_LABELS[run.kind] ?? run.kind} of{' '}
          <Link href={runHref(agentId, run.parentRunId)}>{run.parentRunId}</Link>
        </span>
      ) : (
        (RUN_KIND_LABELS[run.kind] ?? run.kind)
      ),
    ],
    ['Run session', <code key="c">{run.sessionId}</code>],
    ['Memory', run.scope ? `${run.isolation.toLowerCase()} (scope ${run.scope})` : 'off'],
    ['Start URL', run.startUrl ?? '—'],
    [
      'Current URL',
      <span key="u" data-testid="run-current-url">
        {run.currentUrl ?? '—'}
      </span>,
    ],
    ['Final URL', run.finalUrl ?? '—'],
    [
      'Turns',
      <span key="t" data-testid="run-turns">
        {run.turnCount}
      </span>,
    ],
    ['Duration', formatDuration(runDurationMs(run, now))],
    ['Started', <TimeAgo key="st" date={run.startedAt} renderedAt={renderedAt} />],
    ['Ended', run.completedAt ? <TimeAgo key="e" date={run.completedAt} renderedAt={renderedAt} /> : '—'],
  ]
  if (run.summary)
    rows.push([
      'Doing',
      <span key="sm" data-testid="run-summary">
        {run.summary}
      </span>,
    ])
  if (run.result) rows.push(['Result', run.result])
  if (run.reason)
    rows.push([
      'Reason',
      <span key="r" className="bad">
        {run.reason}
      </span>,
    ])
  if (run.model) rows.push(['Model', run.model])
  return (
    <div className="card">
      <LiveStatusLine status={status} />
      <dl className="facts" aria-label="Run">
        {rows.map(([term, value]) => (
          <div key={term} style={{ display: 'contents' }}>
            <dt>{term}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
    </div>
  )
}

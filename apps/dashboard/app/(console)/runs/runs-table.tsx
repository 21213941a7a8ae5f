'use client'

import Link from 'next/link'
import { useCallback, useEffect, useRef, useState } from 'react'
import { LiveStatusLine } from '../../../components/live-status-line'
import { TimeAgo } from '../../../components/time-ago'
import { useCoalescedRead } from '../../../components/use-coalesced-read'
import { useLiveSubscription } from '../../../components/use-live-subscription'
import {
  applyRunEvent,
  domainHref,
  formatDuration,
  RUN_EVENT_FIELDS,
  RUN_KIND_LABELS,
  type RunEvent,
  type RunFilter,
  type RunPage,
  runDurationMs,
  runHref,
} from '../../../lib/runs'
import { readRuns } from './actions'
import { runWhere, StatusBadge } from './run-parts'

const EVENTS = `subscription($a: ID, $domain: String) { runEvents(agentId: $a, domain: $domain) { ${RUN_EVENT_FIELDS} } }`

/** "Now" for running runs' durations: the server's render time first (a clean hydration), then the browser's, each second. */
export function useNow(renderedAt: string): Date {
  const [now, setNow] = useState(() => new Date(renderedAt))
  useEffect(() => {
    setNow(new Date())
    const timer = setInterval(() => setNow(new Date()), 1_000)
    return () => clearInterval(timer)
  }, [])
  return now
}

/**
 * The agent's runs, kept current by the runEvents subscription: a listed run's progress (URL,
 * turns, status) changes in place; a matching run the list does not hold yet (just started, or
 * now matching the filter) makes it read the page again, as the API orders and counts it.
 */
export function RunsTable({
  agentId,
  filter,
  initial,
  renderedAt,
}: {
  agentId: string
  filter: RunFilter
  initial: RunPage
  renderedAt: string
}) {
  const [page, setPage] = useState(initial)
  // The list as last shown, for folding an event in outside React's render (a state updater runs
  // later, during render, so it cannot tell this callback whether the run was listed).
  const shown = useRef(initial)
  shown.current = page
  const [refreshError, setRefreshError] = useState<string | null>(null)
  const now = useNow(renderedAt)
  const read = useCallback(async () => {
    const next = await readRuns(agentId, filter)
    if (next.ok) {
      setRefreshError(null)
      shown.current = next.value
      setPage(next.value)
    } else setRefreshError(next.message)
  }, [agentId, filter])
  // A burst of new runs reads the page once (and once more if events came in meanwhile).
  const refresh = useCoalescedRead(read)
  const status = useLiveSubscription<{ runEvents: RunEvent }>({
    query: EVENTS,
    variables: { a: agentId, domain: filter.domain },
    tokenAgentId: agentId,
    onData: ({ runEvents: event }) => {
      const next = applyRunEvent(shown.current.runs, event, filter)
      if (next.reread) {
        void refresh()
        return
      }
      shown.current = { ...shown.current, runs: next.runs }
      setPage(shown.current)
    },
  })

  return (
    <>
      <LiveStatusLine status={status} />
      {refreshError && (
        <p className="field-error" role="alert">
          {refreshError}
        </p>
      )}
      {page.runs.length === 0 ? (
        <p className="empty" data-testid="runs-empty">
          No runs{Object.values(filter).some(Boolean) ? ' match these filters' : ' yet'}. An acting agent
          registers one with startRun (MCP: start_run) and ends it with completeRun or failRun.
        </p>
      ) : (
        <table className="data" aria-label="Runs">
          <thead>
            <tr>
              <th scope="col">Run</th>
              <th scope="col">Status</th>
              <th scope="col">Goal</th>
              <th scope="col">Domain</th>
              <th scope="col">Where</th>
              <th scope="col">Turns</th>
              <th scope="col">Duration</th>
              <th scope="col">Session</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {page.runs.map((run) => (
              <tr key={run.id} data-testid={`run-${run.id}`}>
                <th scope="row">
                  <Link href={runHref(agentId, run.id)}>{run.id}</Link>
                  {run.kind !== 'START' && (
                    <span className="tag muted-tag" title={`from ${run.parentRunId}`}>
                      {RUN_KIND_LABELS[run.kind] ?? run.kind}
                    </span>
                  )}
                </th>
                <td>
                  <StatusBadge status={run.status} />
                </td>
                <td className="clip-cell">
                  <span className="clip" title={run.goal}>
                    {run.goal}
                  </span>
                  {run.status === 'RUNNING' && run.summary && (
                    <div className="muted" data-testid="run-summary">
                      {run.summary}
                    </div>
                  )}
                  {run.status === 'FAILED' && run.reason && (
                    <div className="bad" data-testid="run-reason">
                      {run.reason}
                    </div>
                  )}
                </td>
                <td>
                  <Link href={domainHref(agentId, run.domain, run.scope)}>{run.domain}</Link>
                </td>
                <td className="clip-cell">
                  <span className="clip short-clip" data-testid="run-where" title={runWhere(run) ?? ''}>
                    {runWhere(run) ?? '—'}
                  </span>
                </td>
                <td className="num" data-testid="run-turns">
                  {run.turnCount}
                </td>
                <td className="num">{formatDuration(runDurationMs(run, now))}</td>
                <td>
                  <code>{run.sessionId}</code>
                </td>
                <td>
                  <TimeAgo date={run.updatedAt} renderedAt={renderedAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {page.totalCount > page.runs.length && (
        <p className="muted">
          Showing the {page.runs.length} most recently updated of {page.totalCount}.
        </p>
      )}
    </>
  )
}

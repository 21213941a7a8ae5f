'use client'

import { useCallback, useState, useTransition } from 'react'
import { LiveStatusLine } from '../../../components/live-status-line'
import { TimeAgo } from '../../../components/time-ago'
import { useCoalescedRead } from '../../../components/use-coalesced-read'
import { useLiveSubscription } from '../../../components/use-live-subscription'
import { formatAverage } from '../../../lib/format'
import {
  CIRCUIT_LABELS,
  EXTRACTOR_LABELS,
  FORMATION_EVENT_FIELDS,
  type FormationEvent,
  type SyncResult,
  WORK_KIND_LABELS,
} from '../../../lib/formation'
import { type ActivityState, readActivity, syncNow } from './actions'

const EVENTS = `subscription($a: ID) { formationActivityEvents(agentId: $a) { ${FORMATION_EVENT_FIELDS} } }`
/** Live events kept on screen. */
const MAX_EVENTS = 20

function duration(ms: number): string {
  return ms >= 1_000 ? `${formatAverage(ms / 1_000)} s` : `${formatAverage(ms)} ms`
}

/**
 * An agent's formation activity: its queue and lag, the counters per kind of work, failures with
 * their reason, the extractor and the model's circuit, and "Sync now". Each live event is shown as
 * it comes and makes the panel read the counters again (they are the server's, not summed here).
 */
export function ActivityPanel({
  agentId,
  initial,
  renderedAt,
}: {
  agentId: string
  initial: ActivityState
  renderedAt: string
}) {
  const [state, setState] = useState(initial)
  const [events, setEvents] = useState<FormationEvent[]>([])
  const [refreshError, setRefreshError] = useState<string | null>(null)
  const [sync, setSync] = useState<{ result?: SyncResult; error?: string } | null>(null)
  const [syncing, startSync] = useTransition()
  const read = useCallback(async () => {
    const next = await readActivity(agentId)
    if ('error' in next) setRefreshError(next.error)
    else {
      setRefreshError(null)
      setState(next)
    }
  }, [agentId])
  // A burst of events reads the counters once (and once more if events came in meanwhile).
  const refresh = useCoalescedRead(read)
  const status = useLiveSubscription<{ formationActivityEvents: FormationEvent }>({
    query: EVENTS,
    variables: { a: agentId },
    tokenAgentId: agentId,
    onData: (data) => {
      setEvents((current) => [data.formationActivityEvents, ...current].slice(0, MAX_EVENTS))
      void refresh()
    },
  })
  const { activity, lag } = state
  const lagOf = (jobKind: string) => lag.find((l) => l.kind === jobKind)
  const failures = [
    ...events
      .filter((e) => e.outcome === 'FAILURE')
      .map((e) => ({ kind: e.kind, at: e.at, reason: e.reason ?? '' })),
    ...activity.work.flatMap((w) => (w.lastFailure ? [{ kind: w.kind, ...w.lastFailure }] : [])),
  ]
    // The latest failure of a kind is both an event and its counter's lastFailure: shown once.
    .filter((f, i, all) => all.findIndex((g) => g.kind === f.kind && g.at === f.at) === i)
    .sort((a, b) => b.at.localeCompare(a.at))

  return (
    <section aria-labelledby="activity-heading">
      <h2 id="activity-heading">Activity</h2>
      <LiveStatusLine status={status} />
      <section className="cards" aria-label="Extractor and circuit">
        <div className="card stat">
          <span className="muted">Extractor</span>
          <strong data-testid="extractor">
            {EXTRACTOR_LABELS[activity.extractor] ?? activity.extractor}
          </strong>
        </div>
        <div className="card stat">
          <span className="muted">Language model circuit</span>
          <strong data-testid="circuit-state">
            {activity.circuitState ? CIRCUIT_LABELS[activity.circuitState] : 'offline extractor, no model'}
          </strong>
        </div>
        <div className="card stat">
          <span className="muted">Queued jobs</span>
          <strong data-testid="queue-pending">{activity.queue.reduce((sum, q) => sum + q.pending, 0)}</strong>
        </div>
      </section>

      <h3>Queue</h3>
      <table className="data" aria-label="Formation queue">
        <thead>
          <tr>
            <th scope="col">Work</th>
            <th scope="col">Pending</th>
            <th scope="col">Running</th>
            <th scope="col">Dead-lettered</th>
            <th
              scope="col"
              title="How long the longest-waiting due job of this kind has been due, all agents"
            >
              Lag (all agents)
            </th>
          </tr>
        </thead>
        <tbody>
          {activity.queue.map((q) => (
            <tr key={q.jobKind} data-testid={`queue-${q.kind}`}>
              <th scope="row">{WORK_KIND_LABELS[q.kind]}</th>
              <td className="num">{q.pending}</td>
              <td className="num">{q.running}</td>
              <td className="num">{q.failed}</td>
              <td className="num">{duration(lagOf(q.jobKind)?.oldestDueAgeMs ?? 0)}</td>
            </tr>
          ))}
        </tbody>
      </table>

      <h3>Statistics</h3>
      <table className="data" aria-label="Formation statistics">
        <thead>
          <tr>
            <th scope="col">Work</th>
            <th scope="col">Calls</th>
            <th scope="col">Successes</th>
            <th scope="col">Failures</th>
            <th scope="col">Average duration</th>
            <th scope="col">Last run</th>
          </tr>
        </thead>
        <tbody>
          {activity.work.map((w) => (
            <tr key={w.kind} data-testid={`stats-${w.kind}`}>
              <th scope="row">{WORK_KIND_LABELS[w.kind]}</th>
              <td className="num" data-testid="calls">
                {w.calls}
              </td>
              <td className="num" data-testid="successes">
                {w.successes}
              </td>
              <td className="num" data-testid="failures">
                {w.failures}
              </td>
              <td className="num">{w.calls > 0 ? duration(w.averageDurationMs) : '—'}</td>
              <td>{w.lastRunAt ? <TimeAgo date={w.lastRunAt} renderedAt={renderedAt} /> : 'never'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="muted">Counted by this API process since it started (a restart starts them at zero).</p>
      {refreshError && (
        <p className="field-error" role="alert">
          {refreshError}
        </p>
      )}

      <h3>Recent failures</h3>
      {failures.length === 0 ? (
        <p className="empty" data-testid="no-failures">
          No failures.
        </p>
      ) : (
        <ul aria-label="Recent failures">
          {failures.map((f) => (
            <li key={`${f.kind}:${f.at}`}>
              <span className="tag warn">{WORK_KIND_LABELS[f.kind]}</span>{' '}
              <TimeAgo date={f.at} renderedAt={renderedAt} />: {f.reason}
            </li>
          ))}
        </ul>
      )}

      <h3>Live events</h3>
      {events.length === 0 ? (
        <p className="muted">Work appears here as it ends.</p>
      ) : (
        <ul aria-label="Live events" data-testid="live-events">
          {events.map((e) => (
            <li key={`${e.at}:${e.kind}:${e.outcome}:${e.durationMs}`}>
              {WORK_KIND_LABELS[e.kind]} {e.outcome === 'SUCCESS' ? 'done' : 'failed'} in{' '}
              {duration(e.durationMs)}, {e.queueDepth} still queued
            </li>
          ))}
        </ul>
      )}

      <div className="card">
        <h3>Sync now</h3>
        <p className="muted">
          Forms now what is pending for this agent: memories from turns not yet extracted, summaries, and the
          profiles that became due.
        </p>
        <button
          type="button"
          disabled={syncing}
          onClick={() =>
            startSync(async () => {
              setSync(null)
              setSync(await syncNow(agentId))
              await refresh()
            })
          }
        >
          {syncing ? 'Syncing…' : 'Sync now'}
        </button>{' '}
        {sync?.error && (
          <span className="field-error" role="alert">
            {sync.error}
          </span>
        )}
        {sync?.result && <SyncSummary result={sync.result} />}
      </div>
    </section>
  )
}

function SyncSummary({ result }: { result: SyncResult }) {
  // Each count with its words for one and for several.
  const counts = [
    ['turns', 'turn read', 'turns read', result.turns],
    ['conversations', 'conversation', 'conversations', result.conversations],
    ['stored', 'memory stored', 'memories stored', result.stored],
    ['duplicates', 'duplicate skipped', 'duplicates skipped', result.duplicates],
    ['superseded', 'superseded', 'superseded', result.superseded],
    ['rejected', 'rejected', 'rejected', result.rejected],
    ['summaries', 'summary', 'summaries', result.summaries],
    ['profileVersions', 'profile version', 'profile versions', result.profileVersions],
  ] as const
  return (
    <span className="ok" role="status" data-testid="sync-result">
      {counts.map(([key, one, many, count], i) => (
        <span key={key}>
          {i > 0 ? ' · ' : ''}
          <strong data-testid={`sync-${key}`}>{count}</strong> {count === 1 ? one : many}
        </span>
      ))}
      {result.extractors.length > 0 &&
        ` (${result.extractors.map((e) => EXTRACTOR_LABELS[e] ?? e.toLowerCase()).join(', ')})`}
    </span>
  )
}

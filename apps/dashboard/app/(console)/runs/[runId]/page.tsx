import Link from 'next/link'
import { notFound } from 'next/navigation'
import { listAgents } from '../../../../lib/api'
import { formatDuration, lineageTree, type RunSession } from '../../../../lib/runs'
import { deleteRun, readLineage, readRun, readRunSessionEntry, readRunTrajectory } from '../actions'
import { ConfirmDelete } from '../confirm-delete'
import { LineageTree, TrajectorySteps } from '../run-parts'
import { RunSummary } from '../run-summary'

export const dynamic = 'force-dynamic'

export default async function RunPage({
  params,
  searchParams,
}: {
  params: Promise<{ runId: string }>
  searchParams: Promise<{ agent?: string }>
}) {
  const { runId: encoded } = await params
  const runId = decodeURIComponent(encoded)
  const { agent } = await searchParams
  const agents = await listAgents()
  const agentId = agent && agents.some((a) => a.id === agent) ? agent : null
  if (!agentId) notFound()
  const read = await readRun(agentId, runId)
  if (!read.ok) throw new Error(read.message)
  const run = read.value
  if (!run) notFound()
  const [lineage, trajectory, session] = await Promise.all([
    readLineage(agentId, runId),
    readRunTrajectory(agentId, runId),
    readRunSessionEntry(agentId, run),
  ])
  if (!lineage.ok) throw new Error(lineage.message)
  if (!trajectory.ok) throw new Error(trajectory.message)
  if (!session.ok) throw new Error(session.message)
  const tree = lineageTree(lineage.value)
  const back = `/runs?agent=${encodeURIComponent(agentId)}`
  return (
    <section aria-labelledby="run-heading">
      <header className="page-header">
        <h1 id="run-heading">
          Run <code>{run.id}</code>
        </h1>
        <Link href={back}>← All runs</Link>
      </header>
      <RunSummary key={run.id} agentId={agentId} initial={run} renderedAt={new Date().toISOString()} />

      <h2 id="lineage-heading">Lineage</h2>
      <p className="muted">
        The resumes (same run session, continuing from the final URL) and forks (a new run session) this run
        belongs to, from the oldest stored ancestor.
      </p>
      {tree ? (
        <LineageTree
          agentId={agentId}
          root={tree}
          currentRunId={run.id}
          parentMissing={lineage.value.parentMissing}
        />
      ) : (
        <p className="empty">The lineage could not be drawn.</p>
      )}
      {lineage.value.truncated && (
        <p className="notice" data-testid="lineage-truncated">
          The lineage holds more runs than are shown.
        </p>
      )}

      <h2 id="trajectory-heading">Trajectory</h2>
      {trajectory.value ? (
        <>
          <p className="muted" data-testid="trajectory-summary">
            {trajectory.value.stepCount} steps, {trajectory.value.verifiedCount} verified,{' '}
            {trajectory.value.turns} turns, {formatDuration(trajectory.value.durationMs)}
            {trajectory.value.outcome ? `: ${trajectory.value.outcome}` : ''}
          </p>
          <TrajectorySteps steps={trajectory.value.steps} label="Trajectory steps" />
        </>
      ) : (
        <p className="empty" data-testid="no-trajectory">
          No trajectory: one is kept when a run completes with steps and its memory is on.
        </p>
      )}

      <h2 id="session-heading">Session history entry</h2>
      {session.value ? (
        <SessionEntry entry={session.value} />
      ) : (
        <p className="empty" data-testid="no-session-entry">
          None: an entry goes into the domain’s history when a run with memory on ends (the last few are
          kept).
        </p>
      )}

      <div className="card">
        <h2>Delete</h2>
        <p className="muted">
          Deletes the run and what it left in memory: its trajectory, its session history entry and the
          confirmations it gave app facts and selectors. Its resumes and forks stay.
        </p>
        <ConfirmDelete
          label={`Delete run ${run.id}`}
          what="this run and what it left in memory"
          action={deleteRun.bind(null, agentId, run.id)}
          then={back}
        />
      </div>
    </section>
  )
}

function SessionEntry({ entry }: { entry: RunSession }) {
  return (
    <dl className="facts card" data-testid="session-entry">
      <dt>Outcome</dt>
      <dd>
        <span className={entry.success ? 'ok' : 'bad'}>{entry.success ? 'success' : 'failure'}</span>:{' '}
        {entry.outcome || '—'}
      </dd>
      <dt>Final URL</dt>
      <dd>{entry.finalUrl ?? '—'}</dd>
      <dt>Turns</dt>
      <dd>{entry.turnsUsed}</dd>
      <dt>Duration</dt>
      <dd>{formatDuration(entry.durationMs)}</dd>
      <dt>Ended</dt>
      <dd>{entry.endedAt.slice(0, 19).replace('T', ' ')} UTC</dd>
    </dl>
  )
}

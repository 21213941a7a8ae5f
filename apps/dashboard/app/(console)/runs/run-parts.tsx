import Link from 'next/link'
import {
  type LineageTreeNode,
  RUN_KIND_LABELS,
  RUN_STATUS_LABELS,
  type Run,
  runHref,
  type TrajectoryStep,
} from '../../../lib/runs'

// Pieces the runs pages share: a run's status badge, its lineage tree and a trajectory's steps.

const STATUS_CLASSES: Record<string, string> = { RUNNING: 'tag', COMPLETED: 'tag ok-tag', FAILED: 'tag bad' }

export function StatusBadge({ status }: { status: string }) {
  return (
    <span className={STATUS_CLASSES[status] ?? 'tag'} data-testid="run-status">
      {status === 'RUNNING' ? '● ' : ''}
      {RUN_STATUS_LABELS[status] ?? status}
    </span>
  )
}

/**
 * The tree of resumes and forks as nested lists (readable by screen readers as a tree of
 * links), the asked run marked. `parentMissing`: the root's own parent was deleted.
 */
export function LineageTree({
  agentId,
  root,
  currentRunId,
  parentMissing,
}: {
  agentId: string
  root: LineageTreeNode
  currentRunId: string
  parentMissing: boolean
}) {
  return (
    <div className="lineage">
      {parentMissing && (
        <p className="muted" data-testid="lineage-parent-missing">
          ↑ parent deleted ({root.run.parentRunId})
        </p>
      )}
      <ul className="lineage-tree" aria-label="Lineage">
        <LineageItem agentId={agentId} node={root} currentRunId={currentRunId} nested={false} />
      </ul>
    </div>
  )
}

function LineageItem({
  agentId,
  node,
  currentRunId,
  nested,
}: {
  agentId: string
  node: LineageTreeNode
  currentRunId: string
  nested: boolean
}) {
  const { run } = node
  const current = run.id === currentRunId
  return (
    <li className="lineage-node">
      {nested && (
        <span className="muted" aria-hidden="true">
          ↳{' '}
        </span>
      )}
      <span className={current ? 'lineage-run current' : 'lineage-run'} data-testid={`lineage-${run.id}`}>
        <span className="tag muted-tag">{RUN_KIND_LABELS[run.kind] ?? run.kind}</span>{' '}
        {current ? (
          <strong aria-current="page">{run.id}</strong>
        ) : (
          <Link href={runHref(agentId, run.id)}>{run.id}</Link>
        )}{' '}
        <StatusBadge status={run.status} /> <span className="muted">{run.goal}</span>
        {run.kind === 'FORK' && <span className="muted"> (session {run.sessionId})</span>}
      </span>
      {node.children.length > 0 && (
        <ul className="lineage-children">
          {node.children.map((child) => (
            <LineageItem
              key={child.run.id}
              agentId={agentId}
              node={child}
              currentRunId={currentRunId}
              nested
            />
          ))}
        </ul>
      )}
    </li>
  )
}

/** A trajectory's steps in order: action, target, value, URL, and ✓ for a verified step. */
export function TrajectorySteps({ steps, label }: { steps: TrajectoryStep[]; label: string }) {
  return (
    <ol className="trajectory-steps" aria-label={label}>
      {/* Steps have no id: a step's place in the sequence is its identity. */}
      {steps
        .map((step, index) => ({ step, position: index + 1 }))
        .map(({ step, position }) => (
          <li
            key={position}
            className="trajectory-step"
            data-testid="trajectory-step"
            data-verified={step.verified === true}
          >
            <code>{step.action}</code>
            {step.selector && (
              <>
                {' '}
                <code className="selector">{step.selector}</code>
              </>
            )}
            {step.value && <span> “{step.value}”</span>}
            {step.url && <span className="muted"> at {step.url}</span>}
            {step.verified === true && (
              <span className="verified" title="Verified: the agent checked its effect">
                {' '}
                ✓ verified
              </span>
            )}
            {step.verified === false && <span className="muted"> (not verified)</span>}
          </li>
        ))}
    </ol>
  )
}

/** Where the run is (or ended): the final URL, else the current one, else where it started. */
export function runWhere(run: Run): string | null {
  return run.finalUrl ?? run.currentUrl ?? run.startUrl
}

'use client'

import { useActionState, useCallback, useState, useTransition } from 'react'
import { TimeAgo } from '../../../components/time-ago'
import { type Snapshot, useLiveSnapshots } from '../../../components/use-live-snapshots'
import { fieldError, formatCount, formatExact, formatPercent } from '../../../lib/format'
import type { SnapshotExplanation } from '../../../lib/snapshots'
import { type ParametersState, runOptimizerNow, saveParameters } from './actions'

export interface Parameters {
  compressionTrigger: number
  fullMessageWindow: number
  minRelevance: number
  targetUsageRatio: number
}

const FIELDS = [
  { name: 'compressionTrigger', label: 'Compression trigger', min: 0.35, max: 0.85, step: 0.01 },
  { name: 'fullMessageWindow', label: 'Full message window', min: 10, max: 50, step: 1 },
  { name: 'minRelevance', label: 'Minimum relevance', min: 0.15, max: 0.7, step: 0.01 },
] as const

export function OptimizerConsole({
  agentId,
  parameters,
  initialSnapshots,
  renderedAt,
}: {
  agentId: string
  parameters: Parameters
  initialSnapshots: Snapshot[]
  renderedAt: string
}) {
  const [snapshots, setSnapshots] = useState(initialSnapshots)
  const [running, setRunning] = useState(false)
  const [runError, setRunError] = useState<string | null>(null)
  const [, startTransition] = useTransition()
  const onSnapshot = useCallback((snapshot: Snapshot) => {
    setSnapshots((current) => (current.some((s) => s.id === snapshot.id) ? current : [...current, snapshot]))
    setRunning(false)
  }, [])
  const status = useLiveSnapshots(agentId, onSnapshot)
  const [state, action, saving] = useActionState<ParametersState, FormData>(saveParameters, {})

  return (
    <>
      <section className="card" aria-labelledby="run-heading">
        <h2 id="run-heading">Run now</h2>
        <p className="muted">
          Analyzes this agent&apos;s memory, applies the actions and records a snapshot. Live feed:{' '}
          <span data-testid="live-status">{status}</span>.
        </p>
        <button
          type="button"
          disabled={running}
          onClick={() => {
            setRunning(true)
            setRunError(null)
            startTransition(async () => {
              const result = await runOptimizerNow(agentId)
              if (result.snapshot) onSnapshot(result.snapshot)
              if (result.error) {
                setRunError(result.error)
                setRunning(false)
              }
            })
          }}
        >
          {running ? 'Running…' : 'Run optimizer'}
        </button>
        {running && (
          <span className="progress" role="status" data-testid="run-progress">
            {' '}
            waiting for the snapshot…
          </span>
        )}
        {runError && <span className="field-error">{runError}</span>}
      </section>

      <form action={action} className="card form-grid" aria-label="Optimizer parameters">
        <h2>Parameters</h2>
        <input type="hidden" name="agentId" value={agentId} />
        {FIELDS.map((f) => (
          <div key={f.name} className="form-row">
            <label htmlFor={f.name}>
              {f.label}{' '}
              <span className="muted">
                ({f.min}–{f.max})
              </span>
            </label>
            <span>
              <input
                id={f.name}
                name={f.name}
                type="number"
                step={f.step}
                defaultValue={parameters[f.name]}
                aria-invalid={!!fieldError(state.issues, f.name)}
              />
              {fieldError(state.issues, f.name) && (
                <span className="field-error" role="alert" data-testid={`error-${f.name}`}>
                  {fieldError(state.issues, f.name)}
                </span>
              )}
            </span>
          </div>
        ))}
        <p className="muted">Target usage ratio: {parameters.targetUsageRatio} (fixed)</p>
        <button type="submit" disabled={saving}>
          {saving ? 'Saving…' : 'Save parameters'}
        </button>
        {state.ok && <span className="ok">{state.message}</span>}
      </form>

      <h2>Snapshot history</h2>
      {snapshots.length === 0 ? (
        <p className="empty">No runs yet for this agent.</p>
      ) : (
        <table className="data" aria-label="Snapshot history" data-testid="snapshot-table">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Tokens before → after</th>
              <th scope="col">Usage</th>
              <th scope="col">Compressed / dropped / promoted</th>
              <th scope="col">Trigger · window · min relevance</th>
              <th scope="col">Why</th>
            </tr>
          </thead>
          <tbody>
            {[...snapshots].reverse().map((s) => (
              <tr key={s.id}>
                <td>
                  <TimeAgo date={s.timestamp} renderedAt={renderedAt} />
                </td>
                <td
                  data-testid="tokens-cell"
                  title={`${formatExact(s.tokensBefore)} → ${formatExact(s.tokensAfter)} tokens (${formatExact(s.tokensSaved)} saved)`}
                >
                  {formatCount(s.tokensBefore)} → {formatCount(s.tokensAfter)}
                  {/* Shortened figures can hide a change (1.2K → 1.2K): the exact ones when they do. */}
                  {formatCount(s.tokensBefore) === formatCount(s.tokensAfter) && s.tokensSaved !== 0 && (
                    <span className="muted exact">
                      {' '}
                      ({formatExact(s.tokensBefore)} → {formatExact(s.tokensAfter)})
                    </span>
                  )}
                </td>
                <td>{formatPercent(s.usageRatio)}</td>
                <td>
                  {s.entriesCompressed} / {s.entriesDropped} / {s.entriesPromoted}
                </td>
                <td>
                  {s.compressionTriggerRatio.toFixed(2)} · {s.fullMessageWindow} ·{' '}
                  {s.minRelevanceScore.toFixed(2)}
                </td>
                <td className="why">
                  <Explanation explanation={s.explanation ?? null} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  )
}

const RULE_LABELS: Record<SnapshotExplanation['rules'][number], string> = {
  OVER_BUDGET: 'over budget: tighten',
  UNDER_BUDGET: 'under budget: relax',
  EMERGENCY: 'emergency: savings too low while over target',
}

const PARAMETER_LABELS: Record<string, string> = {
  compressionTrigger: 'trigger',
  fullMessageWindow: 'window',
  minRelevance: 'min relevance',
}

/** Which rule fired and why, each parameter change, and what was promoted with its key facts. */
function Explanation({ explanation }: { explanation: SnapshotExplanation | null }) {
  if (!explanation) return <span className="muted">not recorded (older run)</span>
  const e = explanation
  return (
    <details data-testid="snapshot-why">
      <summary>
        {e.rules.length === 0
          ? 'no rule: usage within target'
          : e.rules.map((r) => RULE_LABELS[r]).join(' + ')}
      </summary>
      <p>
        Usage {formatPercent(e.usageRatio)} of the budget; target {formatPercent(e.targetUsageRatio)} (tighten
        above {formatPercent(e.overBudgetAbove)}, relax below {formatPercent(e.underBudgetBelow)}). Saved{' '}
        {formatPercent(e.savingsRatio)} of tokens this run.
      </p>
      {e.changes.length > 0 ? (
        <ul className="changes" aria-label="Parameter changes">
          {e.changes.map((c) => (
            <li key={c.parameter}>
              {PARAMETER_LABELS[c.parameter] ?? c.parameter}: {c.from} → {c.to}
            </li>
          ))}
        </ul>
      ) : (
        <p className="muted">No parameter changed.</p>
      )}
      {e.promotionCount > 0 && (
        <>
          <p>
            Promoted {e.promotionCount} to long-term memory (key facts,{' '}
            {e.keyFactMode === 'STRICT' ? 'strict' : 'spec'} mode):
          </p>
          <ul className="promotions" aria-label="Promotions">
            {e.promotions.map((p, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: a snapshot's promotions never reorder
              <li key={i}>
                <q className="clip" title={p.excerpt}>
                  {p.excerpt}
                </q>{' '}
                {p.keyFacts.map((f) => (
                  <span key={f.kind} className="tag" title={f.text}>
                    {f.kind}: {f.text}
                  </span>
                ))}
              </li>
            ))}
          </ul>
          {e.promotionCount > e.promotions.length && (
            <p className="muted">and {e.promotionCount - e.promotions.length} more</p>
          )}
        </>
      )}
    </details>
  )
}

'use client'

import { useRouter } from 'next/navigation'
import { useCallback, useEffect, useRef, useState, useTransition } from 'react'
import { useLiveSubscription } from '../../../components/use-live-subscription'
import { formatPercent } from '../../../lib/format'
import { EMBEDDING_PROGRESS_FIELDS, type EmbeddingProgress } from '../../../lib/memories'
import { embeddingStatus, startReembed } from './actions'

const PROGRESS = `subscription { embeddingProgress { ${EMBEDDING_PROGRESS_FIELDS} } }`
const KIND_LABELS: Record<string, string> = {
  memory: 'Memories',
  message: 'Messages',
  knowledge: 'Knowledge',
}

function describe(progress: EmbeddingProgress): string {
  const counts = `${progress.done} of ${progress.total} embedded${progress.failed ? `, ${progress.failed} failed` : ''}`
  switch (progress.state) {
    case 'IDLE':
      return 'No re-embedding has run since the API started.'
    case 'RUNNING':
      return `Running: ${counts}…`
    case 'DONE': {
      const took =
        progress.startedAt && progress.finishedAt
          ? ` in ${((new Date(progress.finishedAt).getTime() - new Date(progress.startedAt).getTime()) / 1000).toFixed(1)} s`
          : ''
      return progress.total === 0
        ? 'Done: everything already had a vector of this model.'
        : `Done: ${counts}${took}.`
    }
    case 'FAILED':
      return `Failed: ${counts}. ${progress.error ?? ''}`
  }
}

/**
 * The embedding model, this agent's coverage, and re-embedding (for every agent) with live
 * progress from the embeddingProgress subscription.
 */
export function EmbeddingPanel({
  agentId,
  coverage,
  initialProgress,
}: {
  agentId: string
  coverage: { kind: string; total: number; embedded: number; queued: number; failed: number }[]
  initialProgress: EmbeddingProgress
}) {
  const router = useRouter()
  const [progress, setProgress] = useState(initialProgress)
  // Set between the click and the first sign of the new run; the run the click replaced.
  const [awaiting, setAwaiting] = useState<{ previousStart: string | null } | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [, startTransition] = useTransition()
  const awaitingRef = useRef(awaiting)
  awaitingRef.current = awaiting

  const progressRef = useRef(progress)
  progressRef.current = progress

  const onProgress = useCallback(
    (next: EmbeddingProgress) => {
      const waiting = awaitingRef.current
      // The state the mutation found may still be the previous run's: wait for a new one.
      if (waiting && next.state !== 'RUNNING' && next.startedAt === waiting.previousStart) return
      // A run with nothing to do ends at once: its "done" event can arrive before the mutation's
      // own "running" answer, which must not turn a finished run back into a running one.
      const current = progressRef.current
      if (next.state === 'RUNNING' && current.startedAt === next.startedAt && current.state !== 'RUNNING')
        return
      progressRef.current = next
      setProgress(next)
      if (next.state !== 'RUNNING') {
        setAwaiting(null)
        if (next.state === 'DONE' || next.state === 'FAILED') router.refresh()
      } else if (waiting) setAwaiting(null)
    },
    [router],
  )
  const status = useLiveSubscription<{ embeddingProgress: EmbeddingProgress }>({
    query: PROGRESS,
    tokenAgentId: agentId,
    onData: (data) => onProgress(data.embeddingProgress),
  })

  // Without the live feed, ask now and then until the run is over.
  const busy = awaiting !== null || progress.state === 'RUNNING'
  useEffect(() => {
    if (!busy || status === 'live') return
    const timer = setInterval(() => {
      embeddingStatus()
        .then(onProgress)
        .catch(() => {})
    }, 1_000)
    return () => clearInterval(timer)
  }, [busy, status, onProgress])

  const percent =
    progress.total === 0 ? (progress.state === 'DONE' ? 100 : 0) : (progress.done / progress.total) * 100
  return (
    <section className="card" aria-labelledby="embedding-heading">
      <h2 id="embedding-heading">Embeddings</h2>
      <p>
        Model: <code data-testid="embedding-model">{progress.model}</code>{' '}
        <span className="muted">
          · live feed: <span data-testid="embedding-live">{status}</span>
        </span>
      </p>
      <table className="compact" aria-label="Embedding coverage">
        <tbody>
          {coverage.map((c) => {
            const ratio = c.total === 0 ? 1 : c.embedded / c.total
            return (
              <tr key={c.kind} data-testid={`coverage-${c.kind}`}>
                <th scope="row">{KIND_LABELS[c.kind] ?? c.kind}</th>
                <td>
                  <span className="bar" role="img" aria-label={`${c.kind} coverage ${formatPercent(ratio)}`}>
                    <span className="bar-fill" style={{ width: `${Math.round(ratio * 100)}%` }} />
                  </span>
                </td>
                <td>
                  {c.embedded} / {c.total} ({formatPercent(ratio)})
                  {/* The gap, explained: rows on their way (the job queue) and rows it gave up on. */}
                  {c.queued > 0 ? <span className="muted"> · {c.queued} queued</span> : null}
                  {c.failed > 0 ? <span className="muted"> · {c.failed} failed</span> : null}
                </td>
              </tr>
            )
          })}
        </tbody>
      </table>
      <p className="muted">
        Re-embedding gives everything without a vector of this model one (for every agent) and then removes
        vectors of other models.
      </p>
      <div className="toolbar">
        <button
          type="button"
          disabled={busy}
          onClick={() => {
            setError(null)
            setAwaiting({ previousStart: progress.startedAt })
            startTransition(async () => {
              const result = await startReembed()
              if (result.error) {
                setError(result.error)
                setAwaiting(null)
              } else if (result.progress?.state === 'RUNNING') onProgress(result.progress)
            })
          }}
        >
          {busy ? 'Re-embedding…' : 'Re-embed'}
        </button>
        <div
          className="progress-bar"
          role="progressbar"
          aria-label="Re-embedding progress"
          aria-valuemin={0}
          aria-valuemax={100}
          aria-valuenow={Math.round(percent)}
        >
          <span
            className={`progress-fill ${progress.state.toLowerCase()}`}
            style={{ width: `${percent}%` }}
          />
        </div>
        <span
          data-testid="embedding-state"
          data-state={awaiting ? 'STARTING' : progress.state}
          data-done={progress.done}
          data-total={progress.total}
          aria-live="polite"
        >
          {awaiting ? 'Starting…' : describe(progress)}
        </span>
      </div>
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
    </section>
  )
}

'use client'

import { useState, useTransition } from 'react'
import { clearWorkingContext, flushWorkingContext, type WorkingContextActionResult } from './actions'

/** Flush and clear: clearing loses what was not flushed, so it asks first. */
export function ContextActions({ agentId, empty }: { agentId: string; empty: boolean }) {
  const [pending, startTransition] = useTransition()
  const [outcome, setOutcome] = useState<WorkingContextActionResult | null>(null)
  const run = (action: (agentId: string) => Promise<WorkingContextActionResult>) =>
    startTransition(async () => {
      setOutcome(null)
      setOutcome(await action(agentId))
    })
  return (
    <p className="actions">
      <button type="button" disabled={pending || empty} onClick={() => run(flushWorkingContext)}>
        Flush to conversation
      </button>{' '}
      <button
        type="button"
        className="secondary"
        disabled={pending}
        onClick={() => {
          if (window.confirm('Clear the working context? What was not flushed is lost.'))
            run(clearWorkingContext)
        }}
      >
        Clear
      </button>{' '}
      {outcome?.message && (
        <span className="ok" role="status" data-testid="context-action">
          {outcome.message}
        </span>
      )}
      {outcome?.error && (
        <span className="field-error" role="alert">
          {outcome.error}
        </span>
      )}
    </p>
  )
}

'use client'

import { useState, useTransition } from 'react'
import { regenerateProfile } from './actions'

/** "Regenerate now": a new version from the current memories; the page then shows it. */
export function RegenerateButton({ agentId, userId }: { agentId: string; userId: string | null }) {
  const [pending, startTransition] = useTransition()
  const [outcome, setOutcome] = useState<{ version?: number; error?: string } | null>(null)
  return (
    <span>
      <button
        type="button"
        disabled={pending}
        onClick={() =>
          startTransition(async () => {
            setOutcome(null)
            setOutcome(await regenerateProfile(agentId, userId))
          })
        }
      >
        {pending ? 'Regenerating…' : 'Regenerate now'}
      </button>{' '}
      {outcome?.version != null && (
        <span className="ok" role="status" data-testid="regenerated">
          Version {outcome.version} written.
        </span>
      )}
      {outcome?.error && (
        <span className="field-error" role="alert">
          {outcome.error}
        </span>
      )}
    </span>
  )
}

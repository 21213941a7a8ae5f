'use client'

import { useActionState, useState, useTransition } from 'react'
import { fieldError } from '../../../lib/format'
import { type RetentionState, runMaintenanceNow, setRetention } from './actions'

/** Run now, or dry-run first: the result line says what was (or would be) removed. */
export function RunButtons() {
  const [pending, startTransition] = useTransition()
  const [message, setMessage] = useState<string | null>(null)
  const run = (dryRun: boolean) =>
    startTransition(async () => {
      const result = await runMaintenanceNow(dryRun)
      setMessage(result.message ?? null)
    })
  return (
    <section className="card" aria-label="Run maintenance">
      <h2>Run now</h2>
      <p>
        A dry run counts what retention would remove and removes nothing; a run removes it and compacts the
        store.
      </p>
      <button type="button" className="secondary" disabled={pending} onClick={() => run(true)}>
        {pending ? 'Running…' : 'Dry run'}
      </button>{' '}
      <button type="button" disabled={pending} onClick={() => run(false)}>
        {pending ? 'Running…' : 'Run now'}
      </button>
      {message && (
        <p role="status" data-testid="run-result">
          {message}
        </p>
      )}
    </section>
  )
}

export interface AgentRetention {
  agentId: string
  retentionDays: number | null
  effectiveRetentionDays: number
}

/** An agent's own retention (days); empty follows the server's ENGRAM_RETENTION_DAYS. */
export function RetentionForm({ agents }: { agents: AgentRetention[] }) {
  const [state, action, pending] = useActionState<RetentionState, FormData>(setRetention, {})
  if (agents.length === 0) return null
  return (
    <form action={action} className="card form-grid" aria-label="Agent retention">
      <h2>Retention per agent</h2>
      <label htmlFor="retention-agent">Agent</label>
      <select id="retention-agent" name="agentId">
        {agents.map((a) => (
          <option key={a.agentId} value={a.agentId}>
            {a.agentId} ({a.retentionDays === null ? `server: ${a.effectiveRetentionDays}` : a.retentionDays}{' '}
            days)
          </option>
        ))}
      </select>
      <label htmlFor="retention-days">Days</label>
      <span>
        <input
          id="retention-days"
          name="retentionDays"
          type="number"
          min={1}
          max={36500}
          placeholder="server's"
        />
        {fieldError(state.issues, 'retentionDays') && (
          <span className="field-error" role="alert">
            {fieldError(state.issues, 'retentionDays')}
          </span>
        )}
      </span>
      <span />
      <button type="submit" disabled={pending}>
        {pending ? 'Saving…' : 'Save retention'}
      </button>
      {state.message && !state.issues && <p role="status">{state.message}</p>}
    </form>
  )
}

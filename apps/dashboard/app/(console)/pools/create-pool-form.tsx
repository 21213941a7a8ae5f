'use client'

import Link from 'next/link'
import { useActionState } from 'react'
import { FieldError, FormError } from '../../../components/form-fields'
import { POOL_ROLE_LABELS, poolHref } from '../../../lib/pools'
import { type CreatePoolState, createPool } from './actions'

/**
 * Creates a pool: a name, an optional description, and a role per agent (none, Reader or
 * Contributor), so the members are chosen from the agents that exist rather than typed.
 */
export function CreatePoolForm({ agents }: { agents: { id: string; name: string }[] }) {
  const [state, action, pending] = useActionState<CreatePoolState, FormData>(createPool, {})
  const values = state.values ?? {}
  return (
    <form
      action={action}
      className="card form-grid"
      aria-label="Create a pool"
      // React resets a form after its action; a refused one comes back with what was typed.
      key={JSON.stringify(values)}
    >
      <h2>Create a pool</h2>
      <label htmlFor="pool-name">Name</label>
      <span>
        <input
          id="pool-name"
          name="name"
          required
          placeholder="support-knowledge"
          defaultValue={values.name ?? ''}
        />
        <FieldError state={state} field="name" />
      </span>
      <label htmlFor="pool-description">Description</label>
      <span>
        <input
          id="pool-description"
          name="description"
          placeholder="what the agents share here"
          defaultValue={values.description ?? ''}
        />
        <FieldError state={state} field="description" />
      </span>
      <span>Members</span>
      {agents.length === 0 ? (
        <p className="muted">No agents yet: a pool can start empty and get members later.</p>
      ) : (
        <fieldset className="plain-list" aria-label="Members">
          {agents.map((agent) => (
            <label key={agent.id} className="inline-field">
              <select
                name={`role:${agent.id}`}
                aria-label={`Role of ${agent.id}`}
                defaultValue={values[`role:${agent.id}`] ?? ''}
              >
                <option value="">Not a member</option>
                {Object.entries(POOL_ROLE_LABELS).map(([value, label]) => (
                  <option key={value} value={value}>
                    {label}
                  </option>
                ))}
              </select>{' '}
              {agent.name === agent.id ? agent.id : `${agent.name} (${agent.id})`}
            </label>
          ))}
          <FieldError state={state} field="members" />
        </fieldset>
      )}
      <span />
      <span>
        <button type="submit" disabled={pending}>
          {pending ? 'Creating…' : 'Create pool'}
        </button>{' '}
        <FormError state={state} />
      </span>
      {state.created && (
        <p className="span-all" role="status">
          Created <Link href={poolHref(state.created.id)}>{state.created.name}</Link>.
        </p>
      )}
    </form>
  )
}

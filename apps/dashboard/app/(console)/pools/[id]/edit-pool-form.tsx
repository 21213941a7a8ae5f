'use client'

import { useActionState } from 'react'
import { FieldError, FormError } from '../../../../components/form-fields'
import { type UpdatePoolState, updatePool } from '../actions'

/** Renames the pool or changes its description (a blank description clears it). */
export function EditPoolForm({ pool }: { pool: { id: string; name: string; description: string | null } }) {
  const [state, action, pending] = useActionState<UpdatePoolState, FormData>(updatePool, {})
  const values = state.values ?? {}
  return (
    <details className="card">
      <summary>Rename or describe</summary>
      <form
        action={action}
        className="form-grid"
        aria-label="Edit the pool"
        // A refused edit keeps what was typed; a saved one shows the pool as it is now.
        key={JSON.stringify([values, pool.name, pool.description])}
      >
        <input type="hidden" name="poolId" value={pool.id} />
        <label htmlFor="edit-pool-name">Name</label>
        <span>
          <input id="edit-pool-name" name="name" required defaultValue={values.name ?? pool.name} />
          <FieldError state={state} field="name" />
        </span>
        <label htmlFor="edit-pool-description">Description</label>
        <span>
          <input
            id="edit-pool-description"
            name="description"
            defaultValue={values.description ?? pool.description ?? ''}
          />
          <FieldError state={state} field="description" />
        </span>
        <button type="submit" disabled={pending}>
          {pending ? 'Saving…' : 'Save'}
        </button>
        <FormError state={state} />
        {state.saved && (
          <p className="span-all" role="status" data-testid="pool-saved">
            Saved.
          </p>
        )}
      </form>
    </details>
  )
}

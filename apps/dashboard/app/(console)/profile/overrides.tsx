'use client'

import Link from 'next/link'
import { useActionState, useState, useTransition } from 'react'
import { FieldError, FormError, LabelledSelect } from '../../../components/form-fields'
import { MEMORY_CATEGORY_LABELS, memoryHref } from '../../../lib/memories'
import { addOverride, type OverrideFormState, removeOverride } from './actions'

export interface Override {
  id: string
  content: string
  category: string
  createdAt: string
}

/**
 * The user's overrides (pinned memories), which the profile shows first and whole and never
 * rewrites: remove one (it is unpinned, not deleted) or add one for this user.
 */
export function Overrides({
  agentId,
  userId,
  overrides,
  inProfile,
}: {
  agentId: string
  userId: string | null
  overrides: Override[]
  /** The overrides the current version shows: a new one waits for the next version. */
  inProfile: string[]
}) {
  const [removing, startRemove] = useTransition()
  const [removeError, setRemoveError] = useState<string | null>(null)
  const [state, action, adding] = useActionState<OverrideFormState, FormData>(addOverride, {})
  return (
    <section aria-labelledby="overrides-heading">
      <h2 id="overrides-heading">Overrides</h2>
      {overrides.length === 0 ? (
        <p className="empty" data-testid="no-overrides">
          No overrides: pin a memory of this user, or add one below.
        </p>
      ) : (
        <table className="data" aria-label="Overrides">
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Override</th>
              <th scope="col">Category</th>
              <th scope="col">In the current version</th>
              <th scope="col" />
            </tr>
          </thead>
          <tbody>
            {overrides.map((o) => (
              <tr key={o.id} data-testid="override-row">
                <td>
                  <Link href={memoryHref(agentId, o.id, o.content)} prefetch={false}>
                    #{o.id}
                  </Link>
                </td>
                <td className="value-cell">{o.content}</td>
                <td>{MEMORY_CATEGORY_LABELS[o.category] ?? o.category}</td>
                <td>{inProfile.includes(o.id) ? 'yes' : 'not yet (the next version shows it)'}</td>
                <td>
                  <button
                    type="button"
                    className="secondary"
                    disabled={removing}
                    aria-label={`Remove override #${o.id}`}
                    onClick={() =>
                      startRemove(async () => {
                        setRemoveError((await removeOverride(agentId, o.id)).error ?? null)
                      })
                    }
                  >
                    Remove
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {removeError && (
        <p className="field-error" role="alert">
          {removeError}
        </p>
      )}
      {/* A key remounts the form after a save, which empties it; a refusal keeps what was typed. */}
      <form
        key={state.ok ? state.message : 'form'}
        action={action}
        className="card form-grid"
        aria-label="Add an override"
      >
        <h2>Add an override</h2>
        <input type="hidden" name="agentId" value={agentId} />
        <input type="hidden" name="userId" value={userId ?? ''} />
        <label htmlFor="override-content">Content</label>
        <span>
          <textarea
            id="override-content"
            name="content"
            required
            rows={2}
            maxLength={10_000}
            defaultValue={state.ok ? '' : (state.values?.content ?? '')}
          />
          <FieldError state={state} field="content" />
        </span>
        <label htmlFor="override-category">Category</label>
        <span>
          <LabelledSelect
            id="override-category"
            name="category"
            labels={MEMORY_CATEGORY_LABELS}
            defaultValue={state.ok ? 'FACT' : (state.values?.category ?? 'FACT')}
          />
          <FieldError state={state} field="category" />
        </span>
        <span />
        <span>
          <button type="submit" disabled={adding}>
            {adding ? 'Saving…' : 'Add override'}
          </button>{' '}
          {state.ok && (
            <span className="ok" role="status" data-testid="override-added">
              {state.message}
            </span>
          )}
          <FormError state={state} />
        </span>
      </form>
    </section>
  )
}

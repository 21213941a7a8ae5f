'use client'

import { useRouter } from 'next/navigation'
import { useState, useTransition } from 'react'
import { ConfirmActions } from '../../../components/confirm-actions'

/**
 * A delete button asking first ("Delete" → "Confirm delete" / "Cancel"). `action` is a server
 * action bound to what it deletes; on success the page reads the API again (or goes to `then`),
 * on a refusal its message is shown in place.
 */
export function ConfirmDelete({
  label,
  what,
  action,
  then,
}: {
  /** The button's accessible name, e.g. "Delete fact wait_after_search". */
  label: string
  /** What the confirmation names: "this fact", "the run and what it left in memory". */
  what: string
  action: () => Promise<{ ok: true } | { ok: false; message: string }>
  then?: string
}) {
  const router = useRouter()
  const [asking, setAsking] = useState(false)
  const [error, setError] = useState<string | null>(null)
  const [pending, startTransition] = useTransition()
  if (!asking)
    return (
      <button type="button" className="secondary" aria-label={label} onClick={() => setAsking(true)}>
        Delete
      </button>
    )
  return (
    <span>
      <ConfirmActions
        prompt={<span>Delete {what}?</span>}
        confirmLabel={pending ? 'Deleting…' : 'Confirm delete'}
        disabled={pending}
        onCancel={() => {
          setAsking(false)
          setError(null)
        }}
        onConfirm={() =>
          startTransition(async () => {
            const result = await action()
            if (!result.ok) {
              setError(result.message)
              return
            }
            setAsking(false)
            if (then) router.push(then)
            else router.refresh()
          })
        }
      />
      {error && (
        <span className="field-error" role="alert">
          {' '}
          {error}
        </span>
      )}
    </span>
  )
}

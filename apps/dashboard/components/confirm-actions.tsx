'use client'

import type { ReactNode } from 'react'

/** The second step of a destructive action: "Confirm …" or "Cancel". */
export function ConfirmActions({
  prompt,
  confirmLabel,
  onConfirm,
  onCancel,
  disabled,
}: {
  prompt?: ReactNode
  confirmLabel: string
  onConfirm: () => void
  onCancel: () => void
  disabled?: boolean
}) {
  return (
    <>
      {prompt}
      {prompt ? ' ' : null}
      <button type="button" className="danger" disabled={disabled} onClick={onConfirm}>
        {confirmLabel}
      </button>{' '}
      <button type="button" className="secondary" onClick={onCancel}>
        Cancel
      </button>
    </>
  )
}

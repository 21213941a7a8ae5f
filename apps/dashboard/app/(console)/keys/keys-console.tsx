'use client'

import { useActionState, useState, useTransition } from 'react'
import { ConfirmActions } from '../../../components/confirm-actions'
import { TimeAgo } from '../../../components/time-ago'
import { fieldError } from '../../../lib/format'
import { type CreateKeyState, createKey, revokeKey } from './actions'

export interface KeyRow {
  id: string
  agentId: string | null
  role: string
  label: string
  keyPrefix: string
  createdAt: string
  revokedAt: string | null
}

export function CreateKeyForm() {
  const [state, action, pending] = useActionState<CreateKeyState, FormData>(createKey, {})
  const [copied, setCopied] = useState(false)
  return (
    <form action={action} className="card form-grid" aria-label="Create an agent key">
      <h2>Create an agent key</h2>
      <label htmlFor="agentId">Agent id</label>
      <span>
        <input
          id="agentId"
          name="agentId"
          required
          placeholder="browser-agent"
          // Browsers compile `pattern` with the v flag, where a bare "-" in a class is a syntax
          // error (the attribute was ignored, with a console error): escape it.
          pattern="[a-z0-9][a-z0-9_\-]{0,63}"
          title="1 to 64 characters: lowercase letters, digits, _ and -, starting with a letter or digit"
        />
        {fieldError(state.issues, 'agentId') && (
          <span className="field-error" role="alert">
            {fieldError(state.issues, 'agentId')}
          </span>
        )}
      </span>
      <label htmlFor="label">Label</label>
      <input id="label" name="label" placeholder="production" maxLength={200} />
      <span />
      <button type="submit" disabled={pending}>
        {pending ? 'Creating…' : 'Create key'}
      </button>
      {state.key && (
        <div className="new-key" role="status">
          <p>
            Key for <strong>{state.agentId}</strong>. It is shown only now: copy it.
          </p>
          <code data-testid="new-key">{state.key}</code>{' '}
          <button
            type="button"
            onClick={async () => {
              await navigator.clipboard?.writeText(state.key as string).catch(() => {})
              setCopied(true)
            }}
          >
            {copied ? 'Copied' : 'Copy'}
          </button>
        </div>
      )}
    </form>
  )
}

export function KeyList({
  keys,
  renderedAt,
  signedInKeyId,
}: {
  keys: KeyRow[]
  renderedAt: string
  /** The admin key this dashboard session signed in with: revoking it locks the operator out. */
  signedInKeyId: string | null
}) {
  const [pending, startTransition] = useTransition()
  const [confirming, setConfirming] = useState<string | null>(null)
  const [error, setError] = useState<string | null>(null)
  return (
    <>
      {error && <p className="field-error">{error}</p>}
      <table className="data" aria-label="API keys">
        <thead>
          <tr>
            <th scope="col">Key</th>
            <th scope="col">Role</th>
            <th scope="col">Agent</th>
            <th scope="col">Label</th>
            <th scope="col">Created</th>
            <th scope="col">Status</th>
          </tr>
        </thead>
        <tbody>
          {keys.map((k) => (
            <tr key={k.id} data-testid={`key-${k.keyPrefix}`}>
              <td>
                <code>{k.keyPrefix}…</code>
              </td>
              <td>{k.role.toLowerCase()}</td>
              <td>{k.agentId ?? '—'}</td>
              <td>{k.label}</td>
              <td>
                <TimeAgo date={k.createdAt} renderedAt={renderedAt} />
              </td>
              <td>
                {k.revokedAt ? (
                  <span className="tag bad">
                    revoked <TimeAgo date={k.revokedAt} renderedAt={renderedAt} />
                  </span>
                ) : confirming === k.id ? (
                  <ConfirmActions
                    prompt={
                      k.id === signedInKeyId ? (
                        <strong className="field-error" role="alert" data-testid="self-revoke-warning">
                          This is the key you are signed in with: revoking it signs you out and locks you out
                          of this dashboard until you sign in with another admin key.
                        </strong>
                      ) : undefined
                    }
                    confirmLabel={k.id === signedInKeyId ? 'Revoke and lock me out' : 'Confirm revoke'}
                    disabled={pending}
                    onCancel={() => setConfirming(null)}
                    onConfirm={() =>
                      startTransition(async () => {
                        setError(await revokeKey(k.id))
                        setConfirming(null)
                      })
                    }
                  />
                ) : (
                  <button type="button" className="danger" onClick={() => setConfirming(k.id)}>
                    Revoke
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  )
}

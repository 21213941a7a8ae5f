'use client'

import { useActionState } from 'react'
import { type SignInState, signIn } from './actions'

export function SignInForm({ notice }: { notice?: string }) {
  const [state, action, pending] = useActionState<SignInState, FormData>(signIn, {})
  return (
    <form action={action} className="card narrow" aria-describedby="sign-in-help">
      <h1>Sign in</h1>
      <p id="sign-in-help" className="muted">
        Use an admin API key: the one the API printed on its first start, or <code>ENGRAM_ADMIN_KEY</code>.
      </p>
      {notice && <p className="notice">{notice}</p>}
      <label htmlFor="key">Admin API key</label>
      <input id="key" name="key" type="password" autoComplete="off" required aria-invalid={!!state.error} />
      {state.error && (
        <p className="field-error" role="alert">
          {state.error}
        </p>
      )}
      <button type="submit" disabled={pending}>
        {pending ? 'Checking…' : 'Sign in'}
      </button>
    </form>
  )
}

'use server'

import { cookies } from 'next/headers'
import { redirect } from 'next/navigation'
import { ADMIN_COOKIE, ApiError, apiBaseUrl } from '../../lib/api'

export interface SignInState {
  error?: string
}

/** Only admin keys open the dashboard: the key is checked against the API, then kept httpOnly. */
export async function signIn(_previous: SignInState, form: FormData): Promise<SignInState> {
  const key = String(form.get('key') ?? '').trim()
  if (!key) return { error: 'Enter an admin API key.' }
  let role: string
  try {
    const response = await fetch(`${apiBaseUrl()}/graphql`, {
      method: 'POST',
      cache: 'no-store',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query: '{ viewer { role } }' }),
    })
    if (response.status === 401) return { error: 'This key is not valid (or was revoked).' }
    role = ((await response.json()) as { data?: { viewer?: { role?: string } } }).data?.viewer?.role ?? ''
  } catch (error) {
    return { error: error instanceof ApiError ? error.message : 'The API is unreachable. Is it running?' }
  }
  if (role !== 'ADMIN') return { error: 'Agent keys cannot sign in: the dashboard needs an admin key.' }
  ;(await cookies()).set(ADMIN_COOKIE, key, {
    httpOnly: true,
    sameSite: 'strict',
    secure: process.env.ENGRAM_SECURE_COOKIES === '1',
    path: '/',
    maxAge: 60 * 60 * 12,
  })
  redirect('/')
}

export async function signOut(): Promise<void> {
  ;(await cookies()).delete(ADMIN_COOKIE)
  redirect('/sign-in')
}

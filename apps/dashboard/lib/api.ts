import { cookies } from 'next/headers'
import { redirect } from 'next/navigation'

export const ADMIN_COOKIE = 'engram_admin_key'

/** Where the API is, from the dashboard server: ENGRAM_API_URL, or the local API on its port. */
export function apiBaseUrl(): string {
  return (process.env.ENGRAM_API_URL ?? `http://127.0.0.1:${process.env.API_PORT ?? 4000}`).replace(/\/$/, '')
}

export interface ApiHealth {
  status: string
  version: string
  database: string
}

export type HealthResult =
  | { reachable: true; health: ApiHealth }
  | { reachable: false; url: string; reason: string }

export async function fetchHealth(): Promise<HealthResult> {
  const url = `${apiBaseUrl()}/health`
  try {
    const response = await fetch(url, { cache: 'no-store', signal: AbortSignal.timeout(3_000) })
    return { reachable: true, health: (await response.json()) as ApiHealth }
  } catch (error) {
    // fetch reports "fetch failed"; the cause says why (refused, bad port, DNS).
    const cause = error instanceof Error ? (error.cause as Error | undefined)?.message : undefined
    return {
      reachable: false,
      url,
      reason: [error instanceof Error ? error.message : String(error), cause].filter(Boolean).join(': '),
    }
  }
}

export class ApiError extends Error {}

/** One GraphQL call with a key; transport and GraphQL errors become ApiError. */
export async function gqlWithKey<T>(
  key: string,
  query: string,
  variables: Record<string, unknown> = {},
): Promise<T> {
  let response: Response
  try {
    response = await fetch(`${apiBaseUrl()}/graphql`, {
      method: 'POST',
      cache: 'no-store',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query, variables }),
    })
  } catch (error) {
    throw new ApiError(
      `The API at ${apiBaseUrl()} is unreachable: ${error instanceof Error ? error.message : String(error)}`,
    )
  }
  if (response.status === 401) redirect('/sign-in?expired=1')
  const body = (await response.json()) as { data?: T; errors?: { message: string }[] }
  if (body.errors?.length) throw new ApiError(body.errors.map((e) => e.message).join('; '))
  return body.data as T
}

/** The signed-in operator's admin key; pages without one go to sign-in. */
export async function adminKey(): Promise<string> {
  const key = (await cookies()).get(ADMIN_COOKIE)?.value
  if (!key) redirect('/sign-in')
  return key
}

/** A GraphQL call as the signed-in operator. */
export async function gql<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  return gqlWithKey<T>(await adminKey(), query, variables)
}

export interface AgentSummary {
  id: string
  name: string
}

export async function listAgents(): Promise<AgentSummary[]> {
  return (await gql<{ agents: AgentSummary[] }>(`{ agents { id name } }`)).agents
}

/** Typed errors come back as data: the fields a form shows next to its inputs. */
export interface ErrorPayload {
  __typename: string
  message?: string
  issues?: { field: string; message: string; limit: string | null }[]
}

export const ERROR_FIELDS = `... on Error { message } ... on ValidationError { issues { field message limit } }`

/** For route handlers: the signed-in operator's key, or null (they answer 401 rather than redirect). */
export async function adminKeyOrNull(): Promise<string | null> {
  return (await cookies()).get(ADMIN_COOKIE)?.value ?? null
}

/**
 * A GraphQL call from a route handler, as the operator: never throws or redirects, so the handler
 * can answer the browser's fetch with JSON. Long error texts (which may echo the request) are cut.
 */
export async function forwardGql<T>(
  key: string,
  body: string,
): Promise<{ ok: true; data: T } | { ok: false; status: number; error: string }> {
  let response: Response
  try {
    response = await fetch(`${apiBaseUrl()}/graphql`, {
      method: 'POST',
      cache: 'no-store',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body,
    })
  } catch (error) {
    return {
      ok: false,
      status: 502,
      error: `The API at ${apiBaseUrl()} is unreachable: ${error instanceof Error ? error.message : String(error)}`,
    }
  }
  if (response.status === 401) return { ok: false, status: 401, error: 'Signed out: sign in again.' }
  const parsed = (await response.json().catch(() => null)) as {
    data?: T
    errors?: { message: string }[]
  } | null
  if (!parsed || parsed.errors?.length || !parsed.data) {
    const message = parsed?.errors?.map((e) => e.message).join('; ') || `the API answered ${response.status}`
    return {
      ok: false,
      status: response.status === 413 ? 413 : 502,
      error: message.length > 400 ? `${message.slice(0, 400)}…` : message,
    }
  }
  return { ok: true, data: parsed.data }
}

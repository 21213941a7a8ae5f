import { cookies } from 'next/headers'
import { NextResponse } from 'next/server'
import { ADMIN_COOKIE, apiBaseUrl } from '../../../lib/api'

// The browser never sees the admin key: it gets a 10-minute token that can only subscribe.
export async function GET(request: Request) {
  const key = (await cookies()).get(ADMIN_COOKIE)?.value
  if (!key) return NextResponse.json({ error: 'not signed in' }, { status: 401 })
  const agentId = new URL(request.url).searchParams.get('agent') || null
  const response = await fetch(`${apiBaseUrl()}/graphql`, {
    method: 'POST',
    cache: 'no-store',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({
      query:
        'mutation($a: ID) { createLiveToken(agentId: $a) { __typename ... on LiveToken { token expiresAt } ... on Error { message } } }',
      variables: { a: agentId },
    }),
  })
  const body = (await response.json()) as {
    data?: { createLiveToken?: { token?: string; expiresAt?: string; message?: string } }
  }
  const result = body.data?.createLiveToken
  if (!result?.token) return NextResponse.json({ error: result?.message ?? 'no token' }, { status: 502 })
  return NextResponse.json({
    token: result.token,
    expiresAt: result.expiresAt,
    url: publicWebSocketUrl(request),
  })
}

/** Where the browser reaches the API: ENGRAM_PUBLIC_API_URL, else this host on the API's port. */
function publicWebSocketUrl(request: Request): string {
  const configured = process.env.ENGRAM_PUBLIC_API_URL
  if (configured) return `${configured.replace(/^http/, 'ws').replace(/\/$/, '')}/graphql`
  const host = request.headers.get('x-forwarded-host') ?? request.headers.get('host') ?? 'localhost'
  const hostname = host.replace(/:\d+$/, '')
  const apiPort = new URL(apiBaseUrl()).port || process.env.API_PORT || '4000'
  const secure = (request.headers.get('x-forwarded-proto') ?? new URL(request.url).protocol).startsWith(
    'https',
  )
  return `${secure ? 'wss' : 'ws'}://${hostname}:${apiPort}/graphql`
}

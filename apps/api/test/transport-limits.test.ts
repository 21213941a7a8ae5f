import http from 'node:http'
import { createClient } from 'graphql-ws'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { listen, type RunningServer } from '../src/server.ts'
import { ADMIN_KEY, createAgentKey, createTestApp, publishUntil, type TestApp } from './helpers.ts'

// What reaches the real HTTP and WebSocket server, not yoga.fetch: bodies and sockets.
describe('transport limits', () => {
  let t: TestApp
  let server: RunningServer
  const logged: unknown[][] = []
  const MAX_BYTES = 4_096
  beforeAll(async () => {
    t = await createTestApp({ log: { info() {}, warn() {}, error: (...args) => logged.push(args) } })
    server = await listen(t.app, 0, '127.0.0.1', MAX_BYTES)
    await createAgentKey(t, 'agent-t')
  })
  afterAll(async () => {
    await server.close()
    await t.close()
  })

  /** POSTs a body sent in chunks with no Content-Length (Transfer-Encoding: chunked). */
  function postChunked(chunks: string[]): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const request = http.request(
        {
          host: '127.0.0.1',
          port: server.port,
          path: '/graphql',
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${ADMIN_KEY}` },
        },
        (response) => {
          let body = ''
          response.on('data', (chunk) => {
            body += chunk
          })
          response.on('end', () => resolve({ status: response.statusCode ?? 0, body }))
        },
      )
      request.on('error', reject)
      for (const chunk of chunks) request.write(chunk)
      request.end()
    })
  }

  it('enforces ENGRAM_MAX_REQUEST_BYTES on the bytes of a chunked body, not only a declared length', async () => {
    const query = JSON.stringify({ query: '{ agents { id } }' })
    const ok = await postChunked([query.slice(0, 5), query.slice(5)])
    expect(ok.status).toBe(200)
    expect(JSON.parse(ok.body).data.agents.map((a: { id: string }) => a.id)).toContain('agent-t')

    const padding = 'x'.repeat(1_000)
    const big = JSON.stringify({ query: '{ agents { id } }', variables: { padding: padding.repeat(8) } })
    const refused = await postChunked(
      Array.from({ length: Math.ceil(big.length / 1_000) }, (_, i) => big.slice(i * 1_000, (i + 1) * 1_000)),
    )
    expect(refused.status).toBe(413)
    expect(JSON.parse(refused.body).errors[0]).toMatchObject({
      extensions: { code: 'PAYLOAD_TOO_LARGE', limit: MAX_BYTES },
    })
  })

  it('refuses one operation on a graphql-ws socket and keeps the socket and its subscriptions', async () => {
    const token = (
      await t.gql(`mutation { createLiveToken(agentId: "agent-t") { ... on LiveToken { token } } }`)
    ).data.createLiveToken.token as string
    let closed: number | null = null
    const client = createClient({
      url: `ws://127.0.0.1:${server.port}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${token}` },
      retryAttempts: 0,
      on: { closed: (event) => (closed = (event as { code: number }).code) },
    })
    const received: string[] = []
    client.subscribe(
      { query: 'subscription { optimizerSnapshots { agentId } }' },
      {
        next: (v) => received.push((v.data as any).optimizerSnapshots.agentId),
        error: () => {},
        complete: () => {},
      },
    )
    // A live token may not query: this operation is refused with a typed error, alone.
    const refusal = await new Promise<unknown>((resolve) => {
      client.subscribe({ query: '{ agents { id } }' }, { next: () => {}, error: resolve, complete: () => {} })
    })
    expect(refusal).toEqual([
      expect.objectContaining({
        message: 'A live token can only subscribe.',
        extensions: { code: 'FORBIDDEN' },
      }),
    ])
    // So is a document past the nesting limit, before the parser sees it.
    const nested = await new Promise<unknown>((resolve) => {
      client.subscribe(
        { query: `subscription { optimizerSnapshots(x: ${'['.repeat(100)}) { agentId } }` },
        { next: () => {}, error: resolve, complete: () => {} },
      )
    })
    expect(nested).toEqual([
      expect.objectContaining({ extensions: expect.objectContaining({ code: 'QUERY_TOO_NESTED' }) }),
    ])
    await publishUntil(
      () => received.length > 0,
      () => t.gql(`mutation { runOptimizer(agentId: "agent-t") { __typename } }`),
    )
    expect(received).toContain('agent-t')
    expect(closed).toBeNull()
    await client.dispose()
    expect(logged).toEqual([])
  })
})

import { createClient } from 'graphql-ws'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { listen, type RunningServer } from '../src/server.ts'
import { createAgentKey, createTestApp, publishUntil, type TestApp } from './helpers.ts'

// Browsers get a short-lived token that can subscribe and nothing else.
describe('live tokens', () => {
  let t: TestApp
  let server: RunningServer
  let keyA: string
  beforeAll(async () => {
    t = await createTestApp()
    server = await listen(t.app, 0, '127.0.0.1')
    keyA = await createAgentKey(t, 'agent-a')
    await createAgentKey(t, 'agent-b')
  })
  afterAll(async () => {
    await server.close()
    await t.close()
  })

  const issue = async (agentId?: string) => {
    const r = await t.gql(
      `mutation($a: ID) { createLiveToken(agentId: $a) { ... on LiveToken { token expiresAt } } }`,
      { a: agentId },
    )
    return r.data.createLiveToken as { token: string; expiresAt: string }
  }

  it('is valid for ten minutes', async () => {
    const { token, expiresAt } = await issue()
    expect(token).toMatch(/^live_/)
    expect(new Date(expiresAt).getTime() - t.clock.now().getTime()).toBe(600_000)
  })

  it('cannot run queries or mutations', async () => {
    const { token } = await issue()
    const query = await t.gql(`{ agents { id } }`, {}, token)
    expect(query.status).toBe(403)
    const mutation = await t.gql(`mutation { createApiKey(agentId: "x") { __typename } }`, {}, token)
    expect(mutation.status).toBe(403)
  })

  it('is refused once expired or tampered with', async () => {
    const { token } = await issue()
    const tampered = `${token.slice(0, -2)}xx`
    expect((await t.gql(`subscription { optimizerSnapshots { id } }`, {}, tampered)).status).toBe(401)
    t.clock.advance(600_001)
    expect((await t.gql(`subscription { optimizerSnapshots { id } }`, {}, token)).status).toBe(401)
    t.clock.advance(-600_001)
  })

  it('subscribes over graphql-ws to its agent only', async () => {
    const { token } = await issue('agent-a')
    const client = createClient({
      url: `ws://127.0.0.1:${server.port}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${token}` },
      retryAttempts: 0,
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
    await publishUntil(
      () => received.length > 0,
      async () => {
        await t.gql(`mutation { runOptimizer(agentId: "agent-b") { __typename } }`)
        await t.gql(`mutation { runOptimizer { __typename } }`, {}, keyA)
      },
    )
    await client.dispose()
    expect(received.length).toBeGreaterThan(0)
    expect(new Set(received)).toEqual(new Set(['agent-a']))
  })
})

import { createClient } from 'graphql-ws'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { listen, type RunningServer } from '../src/server.ts'
import { ADMIN_KEY, createAgentKey, createTestApp, type TestApp } from './helpers.ts'

const SUBSCRIPTION = `subscription { optimizerSnapshots { id agentId tokensBefore tokensAfter entriesCompressed fullMessageWindow } }`

// A real HTTP server on an ephemeral port: graphql-ws and SSE on the same /graphql path.
describe('optimizer snapshots are pushed to subscribers', () => {
  let t: TestApp
  let server: RunningServer
  let keyA: string
  let keyB: string

  beforeAll(async () => {
    t = await createTestApp()
    server = await listen(t.app, 0, '127.0.0.1')
    keyA = await createAgentKey(t, 'agent-a')
    keyB = await createAgentKey(t, 'agent-b')
    for (const key of [keyA, keyB]) {
      await t.gql(
        `mutation { addMessage(input: { conversationId: "c", role: USER, content: "ok" }) { __typename } }`,
        {},
        key,
      )
    }
  })
  afterAll(async () => {
    await server.close()
    await t.close()
  })

  const runOptimizer = (key: string) =>
    t.gql(`mutation { runOptimizer { ... on OptimizationSnapshot { id } } }`, {}, key)

  it('over graphql-ws, with the key in the connection payload, scoped to the agent', async () => {
    const client = createClient({
      url: `ws://127.0.0.1:${server.port}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${keyA}` },
      retryAttempts: 0,
    })
    const received: any[] = []
    const done = new Promise<void>((resolve, reject) => {
      const unsubscribe = client.subscribe(
        { query: SUBSCRIPTION },
        {
          next: (value) => {
            received.push(value.data?.optimizerSnapshots)
            unsubscribe()
            resolve()
          },
          error: reject,
          complete: () => resolve(),
        },
      )
    })
    // Let the subscription register before publishing; then B's run must not reach A.
    await waitFor(() => t.app.services.pubsub !== undefined)
    await new Promise((r) => setTimeout(r, 100))
    await runOptimizer(keyB)
    const mine = await runOptimizer(keyA)
    await done
    await client.dispose()
    expect(received).toHaveLength(1)
    expect(received[0]).toMatchObject({
      id: mine.data.runOptimizer.id,
      agentId: 'agent-a',
      entriesCompressed: 1,
    })
  })

  it('refuses a graphql-ws subscription without a valid key', async () => {
    const client = createClient({
      url: `ws://127.0.0.1:${server.port}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: 'Bearer engram_wrong' },
      retryAttempts: 0,
    })
    const outcome = await new Promise<unknown>((resolve) => {
      client.subscribe(
        { query: SUBSCRIPTION },
        { next: () => resolve('next'), error: resolve, complete: () => resolve('complete') },
      )
    })
    await client.dispose()
    expect((outcome as { code?: number }).code).toBe(4403)
  })

  it('over SSE, with the key in the Authorization header', async () => {
    const controller = new AbortController()
    const response = await fetch(`http://127.0.0.1:${server.port}/graphql`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        authorization: `Bearer ${ADMIN_KEY}`,
      },
      body: JSON.stringify({
        query: SUBSCRIPTION.replace('optimizerSnapshots {', 'optimizerSnapshots(agentId: "agent-b") {'),
      }),
      signal: controller.signal,
    })
    expect(response.headers.get('content-type')).toMatch(/text\/event-stream/)
    const reader = response.body!.getReader()
    const decoder = new TextDecoder()
    setTimeout(() => void runOptimizer(keyA).then(() => runOptimizer(keyB)), 100)
    let text = ''
    while (!/"optimizerSnapshots"/.test(text)) {
      const { value, done } = await reader.read()
      if (done) break
      text += decoder.decode(value)
    }
    controller.abort()
    const line = text.split('\n').find((l) => l.startsWith('data: ') && l.includes('"optimizerSnapshots"'))
    const event = JSON.parse((line as string).slice('data: '.length))
    expect(event.data.optimizerSnapshots.agentId).toBe('agent-b')
  })
})

async function waitFor(check: () => boolean) {
  for (let i = 0; i < 50 && !check(); i++) await new Promise((r) => setTimeout(r, 10))
}

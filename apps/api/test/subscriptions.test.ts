import { createClient } from 'graphql-ws'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { listen, type RunningServer } from '../src/server.ts'
import {
  ADMIN_KEY,
  createAgentKey,
  createTestApp,
  publishUntil,
  readEventStream,
  type TestApp,
} from './helpers.ts'

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
    const mine: string[] = []
    client.subscribe(
      { query: SUBSCRIPTION },
      { next: (value) => received.push(value.data?.optimizerSnapshots), error: () => {}, complete: () => {} },
    )
    // Publish until the subscription is registered; B's runs in between must never reach A.
    await publishUntil(
      () => received.length > 0,
      async () => {
        await runOptimizer(keyB)
        mine.push((await runOptimizer(keyA)).data.runOptimizer.id)
      },
    )
    await client.dispose()
    expect(received.length).toBeGreaterThan(0)
    expect(received.every((snapshot) => snapshot.agentId === 'agent-a')).toBe(true)
    expect(mine).toContain(received[0].id)
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
    const stream = readEventStream(response)
    await publishUntil(
      () => /"optimizerSnapshots"/.test(stream.text()),
      async () => {
        await runOptimizer(keyA)
        await runOptimizer(keyB)
      },
    )
    controller.abort()
    await stream.close()
    const events = stream
      .text()
      .split('\n')
      .filter((l) => l.startsWith('data: ') && l.includes('"optimizerSnapshots"'))
      .map((l) => JSON.parse(l.slice('data: '.length)))
    expect(events.length).toBeGreaterThan(0)
    expect(events.every((e) => e.data.optimizerSnapshots.agentId === 'agent-b')).toBe(true)
  })
})

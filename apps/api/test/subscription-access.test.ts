import { randomUUID } from 'node:crypto'
import { generateApiKey, hashApiKey, keyPrefix } from '@engram/engine'
import { type Client, createClient } from 'graphql-ws'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import WebSocket from 'ws'
import { listen, type RunningServer } from '../src/server.ts'
import { ADMIN_KEY, createAgentKey, createTestApp, publishUntil, type TestApp } from './helpers.ts'

const SUBSCRIPTION = `subscription($a: ID) { optimizerSnapshots(agentId: $a) { id agentId } }`

interface Watcher {
  /** The ids of the snapshots delivered. */
  snapshots: string[]
  /** Error codes delivered as events (the subscription's last one when access ends). */
  errors: string[]
  completed: boolean
  stop(): Promise<void>
}

/** Waits (in 10 ms steps, at most ~2 s) until the condition holds. */
async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 10))
}

type Result = { data?: { optimizerSnapshots?: { id: string } } | null; errors?: any[] }

function record(watcher: Watcher, result: Result) {
  if (result.data?.optimizerSnapshots) watcher.snapshots.push(result.data.optimizerSnapshots.id)
  for (const error of result.errors ?? []) watcher.errors.push(error.extensions?.code ?? error.message)
}

// Issue 10: "Open subscriptions outlive revocation, expiry and deletion (graphql-ws and SSE)".
describe('a subscription ends with its key, its live token or its agent', () => {
  let t: TestApp
  let server: RunningServer
  const clients: Client[] = []

  beforeAll(async () => {
    t = await createTestApp()
    server = await listen(t.app, 0, '127.0.0.1')
  })
  afterAll(async () => {
    for (const client of clients) await client.dispose()
    await server.close()
    await t.close()
  })

  const runOptimizer = (agentId: string) =>
    t.gql(
      `mutation($a: ID) { runOptimizer(agentId: $a) { __typename ... on OptimizationSnapshot { id } } }`,
      {
        a: agentId,
      },
    )

  async function agentWithMessage(agentId: string): Promise<string> {
    const key = await createAgentKey(t, agentId)
    await t.gql(
      `mutation { addMessage(input: { conversationId: "c", role: USER, content: "ok" }) { __typename } }`,
      {},
      key,
    )
    return key
  }

  const keyIdOf = async (agentId: string) => (await t.db.apiKey.findFirstOrThrow({ where: { agentId } })).id

  function overWebSocket(credential: string, agentId?: string): Watcher {
    const client = createClient({
      url: `ws://127.0.0.1:${server.port}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${credential}` },
      retryAttempts: 0,
      lazy: true,
    })
    clients.push(client)
    const watcher: Watcher = {
      snapshots: [],
      errors: [],
      completed: false,
      stop: async () => client.dispose(),
    }
    client.subscribe(
      { query: SUBSCRIPTION, variables: agentId ? { a: agentId } : {} },
      {
        next: (result) => record(watcher, result as Result),
        error: (error) =>
          watcher.errors.push(`socket: ${String((error as { code?: number }).code ?? error)}`),
        complete: () => {
          watcher.completed = true
        },
      },
    )
    return watcher
  }

  function overSse(credential: string, agentId?: string): Watcher {
    const controller = new AbortController()
    const watcher: Watcher = {
      snapshots: [],
      errors: [],
      completed: false,
      stop: async () => controller.abort(),
    }
    void (async () => {
      const response = await fetch(`http://127.0.0.1:${server.port}/graphql`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'text/event-stream',
          authorization: `Bearer ${credential}`,
        },
        body: JSON.stringify({ query: SUBSCRIPTION, variables: agentId ? { a: agentId } : {} }),
        signal: controller.signal,
      })
      const reader = response.body!.getReader()
      const decoder = new TextDecoder()
      let buffered = ''
      for (;;) {
        const { value, done } = await reader.read()
        if (done) break
        buffered += decoder.decode(value)
        const lines = buffered.split('\n')
        buffered = lines.pop() ?? ''
        for (const line of lines)
          if (line.startsWith('data: {')) record(watcher, JSON.parse(line.slice('data: '.length)))
          else if (line.startsWith('event: complete')) watcher.completed = true
      }
      watcher.completed = true
    })().catch(() => {})
    return watcher
  }

  /** Publishes the agent's snapshots until every watcher has one: they are registered. */
  async function registered(agentId: string, watchers: Watcher[]) {
    await publishUntil(
      () => watchers.every((w) => w.snapshots.length > 0),
      () => runOptimizer(agentId),
    )
    for (const w of watchers) expect(w.snapshots.length).toBeGreaterThan(0)
    // A snapshot published before the last watcher registered may still be on its way to the
    // others; one more that every watcher receives settles them (each stream is in order), so
    // the counts taken next are final.
    const last = (await runOptimizer(agentId)).data.runOptimizer.id as string
    await until(() => watchers.every((w) => w.snapshots.includes(last)))
    for (const w of watchers) expect(w.snapshots).toContain(last)
  }

  /** Access ended: one typed error as the last event, then the stream completes; no snapshot after. */
  async function expectEnded(watchers: Watcher[], publish: () => Promise<unknown>, delivered: number[]) {
    await until(() => watchers.every((w) => w.completed))
    await publish()
    await publish()
    for (const [i, w] of watchers.entries()) {
      expect(w.completed).toBe(true)
      expect(w.errors).toEqual(['FORBIDDEN'])
      expect(w.snapshots.length).toBe(delivered[i])
    }
  }

  it('revokeApiKey ends graphql-ws and SSE subscriptions opened with the key', async () => {
    const key = await agentWithMessage('sub-revoke')
    const watchers = [overWebSocket(key), overSse(key)]
    await registered('sub-revoke', watchers)
    const delivered = watchers.map((w) => w.snapshots.length)
    const revoked = await t.gql(`mutation($id: ID!) { revokeApiKey(id: $id) { __typename } }`, {
      id: await keyIdOf('sub-revoke'),
    })
    expect(revoked.data.revokeApiKey.__typename).toBe('ApiKey')
    await expectEnded(watchers, () => runOptimizer('sub-revoke'), delivered)
  })

  it('a key revoked behind the server (another process) ends them at the next event', async () => {
    const key = await agentWithMessage('sub-revoke-db')
    const watchers = [overWebSocket(key), overSse(key)]
    await registered('sub-revoke-db', watchers)
    const delivered = watchers.map((w) => w.snapshots.length)
    // No access:changed event in this process: only the check at the next event can tell.
    await t.db.apiKey.updateMany({ where: { agentId: 'sub-revoke-db' }, data: { revokedAt: new Date() } })
    await runOptimizer('sub-revoke-db')
    await expectEnded(watchers, () => runOptimizer('sub-revoke-db'), delivered)
  })

  it('an expired live token receives no event: its subscription ends with a typed error', async () => {
    await agentWithMessage('sub-live')
    const issued = await t.gql(
      `mutation { createLiveToken(agentId: "sub-live") { ... on LiveToken { token } } }`,
    )
    const token = issued.data.createLiveToken.token as string
    const watchers = [overWebSocket(token), overSse(token)]
    await registered('sub-live', watchers)
    const delivered = watchers.map((w) => w.snapshots.length)
    t.clock.advance(600_001)
    try {
      await runOptimizer('sub-live')
      await expectEnded(watchers, () => runOptimizer('sub-live'), delivered)
    } finally {
      t.clock.advance(-600_001)
    }
  })

  it('deleteAgent and a new owner of the id: the old subscribers receive nothing of the new owner', async () => {
    const oldKey = await agentWithMessage('live2')
    const issued = await t.gql(
      `mutation { createLiveToken(agentId: "live2") { ... on LiveToken { token } } }`,
    )
    const token = issued.data.createLiveToken.token as string
    const watchers = [
      overWebSocket(oldKey),
      overSse(oldKey),
      overWebSocket(token),
      overSse(token),
      // An operator watching that one agent: it is another agent afterwards.
      overWebSocket(ADMIN_KEY, 'live2'),
    ]
    await registered('live2', watchers)
    const delivered = watchers.map((w) => w.snapshots.length)
    expect(
      (await t.gql(`mutation { deleteAgent(id: "live2") { __typename } }`)).data.deleteAgent.__typename,
    ).toBe('Agent')
    await agentWithMessage('live2')
    await expectEnded(watchers, () => runOptimizer('live2'), delivered)
    // The old live token opens nothing for the new owner either.
    const again = await t.gql(`subscription { optimizerSnapshots { id } }`, {}, token)
    expect(again.status).toBe(401)
    // A new subscription of the new owner works.
    const fresh = overWebSocket(ADMIN_KEY, 'live2')
    await registered('live2', [fresh])
    expect(fresh.errors).toEqual([])
  })

  it('embeddingProgress ends when the admin key it was opened with is revoked', async () => {
    // A second admin key, revoked while its subscription is open.
    const adminKey = generateApiKey()
    const id = randomUUID()
    await t.db.apiKey.create({
      data: {
        id,
        role: 'ADMIN',
        label: 'second',
        keyHash: hashApiKey(adminKey),
        keyPrefix: keyPrefix(adminKey),
      },
    })
    const client = createClient({
      url: `ws://127.0.0.1:${server.port}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { authorization: `Bearer ${adminKey}` },
      retryAttempts: 0,
    })
    clients.push(client)
    const events: Result[] = []
    let completed = false
    client.subscribe(
      { query: 'subscription { embeddingProgress { state } }' },
      { next: (r) => events.push(r as Result), error: () => {}, complete: () => (completed = true) },
    )
    await publishUntil(
      () => events.length > 0,
      async () => t.app.services.pubsub.publish('embedding:progress', t.app.services.embeddings.progress),
    )
    expect(events.length).toBeGreaterThan(0)
    await t.gql(`mutation($id: ID!) { revokeApiKey(id: $id) { __typename } }`, { id })
    await until(() => completed)
    expect(completed).toBe(true)
    expect(events.at(-1)?.errors?.map((e) => e.extensions?.code)).toEqual(['FORBIDDEN'])
  })
})

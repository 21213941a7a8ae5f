import { createOpenAiCompatibleLlm } from '@engram/providers'
import { loopbackOnlyFetch, startChatServer } from '@engram/providers/testing'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, publishUntil, readEventStream, type TestApp } from './helpers.ts'

const ACTIVITY = `query($agentId: ID) { formationActivity(agentId: $agentId) { __typename
  ... on FormationActivity { agentId extractor circuitState
    work { kind calls successes failures successRate averageDurationMs lastRunAt lastFailure { reason at } }
    queue { kind jobKind pending running failed } }
  ... on Error { message } } }`

const say = (t: TestApp, key: string, content: string, conversationId = 'c') =>
  t.gql(
    `mutation($c: String!, $t: String!) { addMessage(input: { conversationId: $c, role: USER, speaker: "dana", content: $t }) { __typename } }`,
    { c: conversationId, t: content },
    key,
  )

const sync = (t: TestApp, key: string) =>
  t.gql(`mutation { syncMemory { __typename ... on SyncMemoryPayload { turns summaries } } }`, {}, key)

describe('formationActivity (offline extractor)', () => {
  let t: TestApp
  let keyA: string
  let keyB: string

  beforeAll(async () => {
    t = await createTestApp()
    keyA = await createAgentKey(t, 'agent-a')
    keyB = await createAgentKey(t, 'agent-b')
  })
  afterAll(() => t.close())

  it('starts at zero, with the queue per kind and no circuit without a model', async () => {
    const result = await t.gql(ACTIVITY, {}, keyA)
    expect(result.errors).toBeUndefined()
    const activity = result.data.formationActivity
    expect(activity).toMatchObject({ agentId: 'agent-a', extractor: 'OFFLINE', circuitState: null })
    expect(activity.work.map((w: any) => [w.kind, w.calls, w.successRate])).toEqual([
      ['EXTRACTION', 0, null],
      ['SUMMARY', 0, null],
      ['PROFILE', 0, null],
    ])
    expect(activity.queue.map((q: any) => q.jobKind)).toEqual(['extract', 'summarize', 'profile'])
  })

  it('counts the extraction and summary a syncMemory ran, and queued work, for that agent only', async () => {
    await say(t, keyA, 'I work at Acme in Berlin. Remember that my sister is called Lena.')
    // Queued by the turn (debounced): the agent's extraction is pending before the sync.
    const before = (await t.gql(ACTIVITY, {}, keyA)).data.formationActivity
    expect(before.queue.find((q: any) => q.kind === 'EXTRACTION').pending).toBe(1)
    const synced = await sync(t, keyA)
    expect(synced.data.syncMemory).toMatchObject({ __typename: 'SyncMemoryPayload', turns: 1, summaries: 1 })
    const activity = (await t.gql(ACTIVITY, {}, keyA)).data.formationActivity
    const extraction = activity.work.find((w: any) => w.kind === 'EXTRACTION')
    expect(extraction).toMatchObject({
      calls: 1,
      successes: 1,
      failures: 0,
      successRate: 1,
      lastFailure: null,
    })
    expect(extraction.lastRunAt).not.toBeNull()
    expect(activity.work.find((w: any) => w.kind === 'SUMMARY')).toMatchObject({ calls: 1, successes: 1 })
    // B did nothing: none of A's work shows in B's statistics.
    const other = (await t.gql(ACTIVITY, {}, keyB)).data.formationActivity
    expect(other.work.every((w: any) => w.calls === 0)).toBe(true)
    expect(other.queue.every((q: any) => q.pending === 0)).toBe(true)
  })

  it('lets an admin name an agent, and refuses an agent key naming another', async () => {
    const admin = await t.gql(ACTIVITY, { agentId: 'agent-a' })
    expect(admin.data.formationActivity.agentId).toBe('agent-a')
    const refused = await t.gql(ACTIVITY, { agentId: 'agent-a' }, keyB)
    expect(refused.data.formationActivity.__typename).toBe('ForbiddenError')
  })

  it("delivers each unit of work to a subscriber of that agent, never another agent's", async () => {
    const controller = new AbortController()
    const response = await t.app.yoga.fetch('http://yoga/graphql', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        authorization: `Bearer ${keyA}`,
      },
      body: JSON.stringify({
        query: `subscription { formationActivityEvents { agentId kind outcome reason durationMs at queueDepth } }`,
      }),
      signal: controller.signal,
    })
    expect(response.headers.get('content-type')).toMatch(/text\/event-stream/)
    const stream = readEventStream(response)
    let turn = 0
    // B's work happens before A's each time: had B's events leaked, one would be in the stream.
    await publishUntil(
      () => /"formationActivityEvents"/.test(stream.text()),
      async () => {
        turn++
        await say(t, keyB, `I moved to Lisbon in ${2000 + turn}.`, 'b')
        await sync(t, keyB)
        await say(t, keyA, `I adopted a cat called Miso number ${turn}.`, 'a')
        await sync(t, keyA)
      },
    )
    controller.abort()
    await stream.close()
    const events = stream
      .text()
      .split('\n')
      .filter((line) => line.startsWith('data: ') && line.includes('"formationActivityEvents"'))
      .map((line) => JSON.parse(line.slice('data: '.length)).data.formationActivityEvents)
    expect(events.length).toBeGreaterThan(0)
    expect(events.every((e) => e.agentId === 'agent-a')).toBe(true)
    expect(events.map((e) => e.kind)).toContain('EXTRACTION')
    expect(events.every((e) => e.outcome === 'SUCCESS' && e.reason === null)).toBe(true)
  })
})

describe('formationActivity with a failing model', () => {
  it('shows the failures with their reason and the circuit opening', async () => {
    // Every answer a 503: each extraction fails until the breaker opens (5 in a row), then the
    // offline extractor runs while it is open.
    const server = await startChatServer(() => ({ status: 503, json: { error: { message: 'overloaded' } } }))
    const llm = createOpenAiCompatibleLlm({
      baseUrl: server.baseUrl,
      model: 'scripted',
      retryDelaysMs: [],
      fetch: loopbackOnlyFetch,
    })
    const t = await createTestApp({ llm })
    try {
      const key = await createAgentKey(t, 'agent-a')
      await say(t, key, 'I prefer green tea in the morning.')
      const closed = (await t.gql(ACTIVITY, {}, key)).data.formationActivity
      expect(closed).toMatchObject({ extractor: 'LLM', circuitState: 'CLOSED' })
      for (let attempt = 0; attempt < 5; attempt++)
        await expect(t.app.services.engine.syncMemory('agent-a')).rejects.toThrow()
      const open = (await t.gql(ACTIVITY, {}, key)).data.formationActivity
      expect(open.circuitState).toBe('OPEN')
      const extraction = open.work.find((w: any) => w.kind === 'EXTRACTION')
      expect(extraction).toMatchObject({ calls: 5, successes: 0, failures: 5, successRate: 0 })
      expect(extraction.lastFailure.reason).toMatch(/503/)
      expect(server.requests).toHaveLength(5)
      // Open: the offline extractor forms the memory, and the call counts as a success.
      const formed = await t.app.services.engine.syncMemory('agent-a')
      expect(formed.extractors).toEqual(['offline-fallback'])
      const after = (await t.gql(ACTIVITY, {}, key)).data.formationActivity
      expect(after.work.find((w: any) => w.kind === 'EXTRACTION')).toMatchObject({
        calls: 6,
        successes: 1,
        failures: 5,
      })
      expect(server.requests).toHaveLength(5)
    } finally {
      await t.close()
      await server.close()
    }
  })
})

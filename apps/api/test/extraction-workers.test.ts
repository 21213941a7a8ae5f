import { createTokenCounter, writeOfflineSummary } from '@engram/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

const ADD_MANY = `mutation($c: String!, $m: [MessageInput!]!) {
  addMessages(input: { conversationId: $c, messages: $m }) {
    __typename ... on AddMessagesPayload { messages { id } } ... on Error { message } } }`
const SEARCH = `query($q: String!) { search(input: { query: $q }) { __typename ... on SearchResult { hits { score } } } }`
const STATS = `{ jobQueueStats { kind pending running oldestPendingAgeMs oldestDueAgeMs } }`

const SAID = [
  'I work at Acme as a data engineer.',
  'My sister Maya lives in Lisbon since 2019.',
  'I prefer tea over coffee in the morning.',
  'We decided to move the launch to Friday.',
  'I will send the report to Priya tomorrow.',
]

// Issue 13 §2: extraction runs on worker threads below request priority, so a backlog of it never
// blocks /health or requests. Asserted: they answer while the backlog is still running (order,
// not speed: the machine may be loaded).
describe('with the extraction pool, requests answer while a backlog of extraction runs', () => {
  let t: TestApp
  let key: string
  beforeAll(async () => {
    t = await createTestApp({ env: { ENGRAM_EXTRACTION: 'auto', ENGRAM_EXTRACTION_WORKERS: 1 } })
    key = await createAgentKey(t, 'agent-w')
  }, 30_000)
  afterAll(() => t.close())

  it('answers /health and a query while 500 messages are extracted on the pool', {
    timeout: 120_000,
  }, async () => {
    const pool = t.app.extractionPool
    expect(pool).not.toBeNull()
    for (let c = 0; c < 5; c++) {
      const messages = Array.from({ length: 100 }, (_, i) => ({
        role: 'USER',
        speaker: `user${c}`,
        content: `${SAID[i % SAID.length]} (note ${c}-${i})`,
      }))
      const r = await t.gql(ADD_MANY, { c: `conversation-${c}`, m: messages }, key)
      expect(r.data.addMessages.__typename).toBe('AddMessagesPayload')
    }
    t.clock.advance(10_000)
    const pending = (await t.gql(STATS)).data.jobQueueStats.find(
      (s: { kind: string }) => s.kind === 'extract',
    )
    expect(pending).toMatchObject({ pending: 5 })
    // The lag is reported: the oldest pending extraction has waited as long as the clock moved.
    expect(pending.oldestPendingAgeMs).toBeGreaterThanOrEqual(10_000)
    // Due since the 5 s debounce ended: that is how far behind the workers are.
    expect(pending.oldestDueAgeMs).toBe(5_000)

    let backlogDone = false
    const backlog = t.app.services.jobs.runDue().then((ran) => {
      backlogDone = true
      return ran
    })
    // Requests made once the backlog is under way (the first extractor call is on the thread).
    for (let i = 0; i < 1_000 && (pool?.stats().busy ?? 0) === 0 && !backlogDone; i++)
      await new Promise((resolve) => setImmediate(resolve))
    const health = await t.app.yoga.fetch('http://yoga/health')
    expect(health.status).toBe(200)
    expect(await health.json()).toMatchObject({ status: 'ok' })
    const search = await t.gql(SEARCH, { q: 'Lisbon' }, key)
    expect(search.errors).toBeUndefined()
    expect(search.data.search.__typename).toBe('SearchResult')
    expect(backlogDone).toBe(false)

    expect(await backlog).toBeGreaterThanOrEqual(5)
    // The calls went through the pool: 500 turns in calls of 20.
    expect(pool?.stats().completed).toBeGreaterThanOrEqual(25)
    const memories = await t.gql(`query { memories(first: 5) { __typename } }`, {}, key)
    expect(memories.errors).toBeUndefined()
    expect(await t.db.memoryItem.count({ where: { agentId: 'agent-w' } })).toBeGreaterThan(0)
  })
})

// Issue 13 §3: summaries written without a model run on the same pool, off the request thread.
describe('with the extraction pool, automatic summaries are written on its threads', () => {
  let t: TestApp
  let key: string
  beforeAll(async () => {
    t = await createTestApp({ env: { ENGRAM_EXTRACTION: 'off', ENGRAM_EXTRACTION_WORKERS: 1 } })
    key = await createAgentKey(t, 'agent-s')
  }, 30_000)
  afterAll(() => t.close())

  it('a due summary goes to the pool, and reads exactly as the in-process one', {
    timeout: 60_000,
  }, async () => {
    const pool = t.app.extractionPool
    const messages = Array.from({ length: 40 }, (_, i) => ({
      role: 'USER',
      speaker: 'dana',
      content: `${SAID[i % SAID.length]} (note ${i})`,
    }))
    expect((await t.gql(ADD_MANY, { c: 'long-chat', m: messages }, key)).data.addMessages.__typename).toBe(
      'AddMessagesPayload',
    )
    await t.app.services.summaries.updateSettings('agent-s', {
      strategy: 'hierarchical',
      summaryMaxTokens: 80,
    })
    const before = pool?.stats().completedByTask.summarize ?? 0
    // Past the 60 s debounce: the summary job is due and the worker runs it.
    t.clock.advance(61_000)
    await t.app.services.jobs.runDue()
    const [summary] = await t.app.services.summaries.list('agent-s', { conversationId: 'long-chat' })
    expect(summary).toMatchObject({ strategy: 'hierarchical', writer: 'extractive', trigger: 'debounce' })
    // One call: hierarchical over 40 turns (four chunk summaries, then theirs) all on the thread.
    expect((pool?.stats().completedByTask.summarize ?? 0) - before).toBe(1)
    const counter = createTokenCounter('o200k_base')
    const expected = await writeOfflineSummary(
      messages.map((m) => ({ speaker: m.speaker, content: m.content })),
      { strategy: 'hierarchical', maxTokens: 80, countTokens: (text) => counter.count(text) },
    )
    expect(summary?.content).toBe(expected)
  })
})

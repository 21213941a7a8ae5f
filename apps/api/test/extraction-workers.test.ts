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

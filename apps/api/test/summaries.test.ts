import { createHashingEmbedder } from '@engram/core'
import { loadWordNetLexicon } from '@engram/providers'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

const ADD = `mutation($c: String!, $t: String!) {
  addMessage(input: { conversationId: $c, role: USER, content: $t }) { __typename } }`
const SUMMARIZE = `mutation($c: String!, $s: SummaryStrategy) { summarize(conversationId: $c, strategy: $s) {
  __typename ... on SummarizePayload { summary { id conversationId content strategy writer trigger messageCount createdAt } }
  ... on ValidationError { issues { field limit } } } }`
const SUMMARIES = `query($c: String, $l: Int) { summaries(conversationId: $c, limit: $l) {
  __typename ... on QuerySummariesSuccess { data { id conversationId strategy } }
  ... on ValidationError { issues { field limit } } } }`

// Issue 13 §3: summaries through GraphQL (they also form on their own; see the engine's tests).
describe('summaries through GraphQL', () => {
  let t: TestApp
  let key: string
  beforeAll(async () => {
    t = await createTestApp()
    key = await createAgentKey(t, 'agent-sum')
  })
  afterAll(() => t.close())

  it('summarize now, then list; nothing new answers a null summary', async () => {
    for (const text of ['We decided to move the launch to March.', 'Ravi will write the release notes.'])
      expect((await t.gql(ADD, { c: 'launch', t: text }, key)).data.addMessage.__typename).toBe('Message')
    const made = (await t.gql(SUMMARIZE, { c: 'launch', s: 'MAP_REDUCE' }, key)).data.summarize
    expect(made.summary).toMatchObject({
      conversationId: 'launch',
      strategy: 'MAP_REDUCE',
      writer: 'EXTRACTIVE',
      trigger: 'REQUEST',
      messageCount: 2,
    })
    expect(made.summary.content).toMatch(/March|release notes/)
    expect((await t.gql(SUMMARIZE, { c: 'launch' }, key)).data.summarize).toEqual({
      __typename: 'SummarizePayload',
      summary: null,
    })
    const listed = (await t.gql(SUMMARIES, { c: 'launch' }, key)).data.summaries
    expect(listed.data).toEqual([{ id: made.summary.id, conversationId: 'launch', strategy: 'MAP_REDUCE' }])
    expect((await t.gql(SUMMARIES, { c: 'elsewhere' }, key)).data.summaries.data).toEqual([])

    // One by id: the same summary; an id the agent has none of is NotFoundError.
    const ONE = `query($id: ID!) { summary(id: $id) { __typename
      ... on Summary { id conversationId content strategy writer trigger messageCount createdAt }
      ... on NotFoundError { resource } } }`
    const one = (await t.gql(ONE, { id: made.summary.id }, key)).data.summary
    expect(one).toEqual({ __typename: 'Summary', ...made.summary })
    expect((await t.gql(ONE, { id: '987654' }, key)).data.summary).toEqual({
      __typename: 'NotFoundError',
      resource: 'Summary',
    })
  })

  it('a limit out of range names the field and the limit; an unknown strategy is refused by GraphQL', async () => {
    expect((await t.gql(SUMMARIES, { l: 500 }, key)).data.summaries).toEqual({
      __typename: 'ValidationError',
      issues: [{ field: 'limit', limit: '100' }],
    })
    const unknown = await t.gql(SUMMARIZE, { c: 'launch', s: 'BULLETS' }, key)
    expect(unknown.errors?.[0]?.message).toMatch(/\$s|BULLETS/)
  })
})

const SEMANTIC = `query($q: String!) { search(input: { query: $q, scopes: [SUMMARIES], weights: { bm25: 0, vector: 1, context: 0 } }) {
  __typename ... on SearchResult { hits { id text components { bm25 vector } } } } }`
const COVERAGE = `query { memoryStats { __typename ... on MemoryStats { coverage { kind total embedded } } } }`

// Issue 13 §3: summaries have vectors like memories, so the SUMMARIES scope is hybrid: a query that
// shares no word with a summary finds it by meaning (the offline embedder with WordNet's synonyms).
describe('summary vectors through GraphQL', () => {
  let t: TestApp
  let key: string
  beforeAll(async () => {
    t = await createTestApp({ embedder: createHashingEmbedder({ lexicon: loadWordNetLexicon() }) })
    key = await createAgentKey(t, 'agent-vec')
  })
  afterAll(() => t.close())

  it('finds a summary by a query that shares no word with it, through its vector', async () => {
    for (const [c, text] of [
      ['trip', 'The automobile broke down on the highway'],
      ['camp', 'We went camping by the lake last summer'],
      ['work', 'The quarterly report is due on Friday'],
    ] as const) {
      expect((await t.gql(ADD, { c, t: text }, key)).data.addMessage.__typename).toBe('Message')
      expect((await t.gql(SUMMARIZE, { c }, key)).data.summarize.summary.content).toContain(text)
    }
    const trip = (await t.gql(SUMMARIES, { c: 'trip' }, key)).data.summaries.data[0]
    const hits = (await t.gql(SEMANTIC, { q: 'my car stopped working' }, key)).data.search.hits
    expect(hits[0]).toMatchObject({ id: `summary:${trip.id}`, components: { bm25: 0 } })
    expect(hits[0].components.vector).toBeGreaterThan(0.05)
    // Each summary has its vector of the current model, counted with the other kinds.
    const coverage = (await t.gql(COVERAGE, {}, key)).data.memoryStats.coverage
    expect(coverage).toContainEqual({ kind: 'summary', total: 3, embedded: 3 })
  })
})

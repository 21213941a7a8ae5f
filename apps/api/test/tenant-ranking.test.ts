// One agent's data must not change another agent's ranking (issue 10): BM25's word rarity and
// average document length come from the agent's own documents, not from the shared FTS5 index.
import { afterEach, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, TEST_BACKEND, type TestApp } from './helpers.ts'

const SEARCH = `query($input: SearchInput!) { search(input: $input) { __typename ... on SearchResult { hits { score components { bm25 vector } message { id content } } } ... on Error { message } } }`
const BATCH = `mutation($c: String!, $m: [MessageInput!]!) { addMessages(input: { conversationId: $c, messages: $m }) { __typename ... on Error { message } } }`

const A_MESSAGES = [
  'The deploy pipeline failed on the staging cluster last night',
  'Rollback the deploy if the pipeline turns red again',
  'Lunch order: two pizzas and a salad for the team',
  'The staging cluster needs a bigger disk before Friday',
  'Pipeline logs are kept for thirty days in the bucket',
  'Deploy windows are Tuesday and Thursday mornings',
  'Remember to rotate the database credentials monthly',
  'A long note about the deploy: first build, then test, then deploy, then watch the pipeline dashboards',
]
// The other tenant writes A's query words over and over, in long and short messages.
const B_MESSAGES = Array.from({ length: 120 }, (_, i) =>
  i % 3 === 0
    ? `deploy deploy pipeline staging ${'filler words '.repeat(i % 7)}`
    : `deploy pipeline note ${i} about the staging cluster and credentials`,
)

const QUERIES = ['deploy pipeline staging', 'staging cluster disk', 'rotate credentials', 'pipeline']

const apps: TestApp[] = []
afterEach(async () => {
  for (const t of apps.splice(0)) await t.close()
})

async function load(t: TestApp, agentId: string, messages: string[]) {
  const key = await createAgentKey(t, agentId)
  const r = await t.gql(BATCH, { c: 'main', m: messages.map((content) => ({ role: 'USER', content })) }, key)
  expect(r.data.addMessages.__typename).toBe('AddMessagesPayload')
  return key
}

/** A's results as text and score (ids differ between databases). */
async function ranking(t: TestApp, key: string, strategy: 'LEXICAL' | 'HYBRID') {
  const out: { query: string; hits: { content: string; score: number; bm25: number }[] }[] = []
  for (const query of QUERIES) {
    const r = await t.gql(SEARCH, { input: { query, strategy, limit: 10 } }, key)
    out.push({
      query,
      hits: r.data.search.hits.map((h: any) => ({
        content: h.message.content,
        score: h.score,
        bm25: h.components.bm25,
      })),
    })
  }
  return out
}

describe('tenant isolation of lexical ranking', () => {
  it('gives agent A the same ranking and scores whatever agent B stores, and in whichever order they were loaded', async () => {
    const alone = await createTestApp()
    apps.push(alone)
    const aliceAlone = await load(alone, 'alice', A_MESSAGES)

    const aFirst = await createTestApp()
    apps.push(aFirst)
    const aliceFirst = await load(aFirst, 'alice', A_MESSAGES)
    const beforeB = await ranking(aFirst, aliceFirst, 'LEXICAL')
    await load(aFirst, 'bob', B_MESSAGES)

    const bFirst = await createTestApp()
    apps.push(bFirst)
    await load(bFirst, 'bob', B_MESSAGES)
    const aliceSecond = await load(bFirst, 'alice', A_MESSAGES)

    for (const strategy of ['LEXICAL', 'HYBRID'] as const) {
      const reference = await ranking(alone, aliceAlone, strategy)
      expect(reference.every((q) => q.hits.length > 0)).toBe(true)
      expect(await ranking(aFirst, aliceFirst, strategy)).toEqual(reference)
      expect(await ranking(bFirst, aliceSecond, strategy)).toEqual(reference)
      if (strategy === 'LEXICAL') expect(beforeB).toEqual(reference)
    }
  })

  // FTS5's own bm25() is SQLite's; on Postgres, scores equal SQLite's to 1e-12 is the full-text
  // parity spec (packages/conformance/src/full-text-parity.test.ts).
  it.skipIf(TEST_BACKEND === 'postgres')(
    'scores exactly as FTS5 bm25() does when the agent is alone in the index',
    async () => {
      const t = await createTestApp()
      apps.push(t)
      const key = await load(t, 'alice', A_MESSAGES)
      for (const query of QUERIES) {
        const r = await t.gql(SEARCH, { input: { query, strategy: 'LEXICAL', limit: 10 } }, key)
        const ours = new Map<string, number>(r.data.search.hits.map((h: any) => [h.message.id, h.score]))
        const match = query
          .split(' ')
          .map((w) => `"${w}"`)
          .join(' OR ')
        const fts = await t.db.$queryRawUnsafe<{ id: number; score: number }[]>(
          `SELECT rowid AS id, -bm25("MessageSearch") AS score FROM "MessageSearch" WHERE "MessageSearch" MATCH ? ORDER BY score DESC`,
          match,
        )
        expect(ours.size).toBe(fts.length)
        for (const row of fts) expect(ours.get(String(row.id))).toBeCloseTo(row.score, 10)
      }
    },
  )
})

describe('tenant isolation of the issue 11 signals', () => {
  // Dates, speakers, dialogue and expansions all read the agent's own rows: participants, the
  // newest message (the reference of "last week"), episodes, feedback and co-occurrence statistics.
  const turns = (names: [string, string], base: string) =>
    [
      'I went hiking in the mountains with my sister',
      'Which trail did you take up there?',
      'The ridge loop above the lake, it took all day',
      'The orchestra rehearsal for the cello section runs late on Fridays',
      'Cello concerts at the orchestra hall are sold out',
      'We painted the kitchen yellow last weekend',
    ].map((content, i) => ({
      role: 'USER',
      content,
      speaker: names[i % 2],
      timestamp: new Date(Date.parse(base) + i * 3 * 86_400_000).toISOString(),
    }))
  const SIGNAL_QUERIES = [
    'Did Dana go hiking in May 2023?',
    'What did Sam say about the orchestra last week?',
    'which trail',
    'cello rehearsal',
  ]
  const SIGNAL_SEARCH = `query($input: SearchInput!) { search(input: $input) { ... on SearchResult { hits { score components { bm25 context episode time speaker feedback cooccurrence } message { content } } } } }`

  async function loadTurns(t: TestApp, agentId: string, messages: ReturnType<typeof turns>) {
    const key = await createAgentKey(t, agentId)
    const r = await t.gql(BATCH, { c: 'main', m: messages }, key)
    expect(r.data.addMessages.__typename).toBe('AddMessagesPayload')
    return key
  }
  async function signalRanking(t: TestApp, key: string) {
    const out = []
    for (const query of SIGNAL_QUERIES) {
      const r = await t.gql(
        SIGNAL_SEARCH,
        {
          input: {
            query,
            limit: 10,
            weights: { episode: 0.2, cooccurrence: 0.5, feedback: 0.3, time: 1, speaker: 0.2 },
          },
        },
        key,
      )
      out.push(r.data.search.hits)
    }
    return out
  }

  it('gives agent A the same hits, scores and components whatever agent B stores and in whichever order', async () => {
    const a = turns(['Dana', 'Sam'], '2023-05-01T10:00:00Z')
    // B: the same words, the same names, other dates, and much more of it.
    const b = Array.from({ length: 12 }, (_, i) =>
      turns(['Sam', 'Dana'], `2023-0${(i % 9) + 1}-02T10:00:00Z`),
    ).flat()
    const alone = await createTestApp()
    apps.push(alone)
    const reference = await signalRanking(alone, await loadTurns(alone, 'alice', a))
    expect(reference.every((hits) => hits.length > 0)).toBe(true)
    expect(reference.flat().some((h: any) => h.components.time > 1)).toBe(true)
    expect(reference.flat().some((h: any) => h.components.speaker > 1)).toBe(true)

    const bFirst = await createTestApp()
    apps.push(bFirst)
    await loadTurns(bFirst, 'bob', b)
    expect(await signalRanking(bFirst, await loadTurns(bFirst, 'alice', a))).toEqual(reference)

    const aFirst = await createTestApp()
    apps.push(aFirst)
    const aliceKey = await loadTurns(aFirst, 'alice', a)
    await signalRanking(aFirst, aliceKey)
    await loadTurns(aFirst, 'bob', b)
    expect(await signalRanking(aFirst, aliceKey)).toEqual(reference)
  })
})

// Issue 11's ranking signals through the API: dates in the query, the participant it names,
// dialogue context and episodes, pseudo-relevance feedback, co-occurrence, the conversation
// window. Each signal is checked on, off (weight 0) and in its score component.

import { DEFAULT_SEARCH_WEIGHTS } from '@engram/engine/search'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

const TIME = 1 + DEFAULT_SEARCH_WEIGHTS.time
const SPEAKER = 1 + DEFAULT_SEARCH_WEIGHTS.speaker

const SEARCH = `query($input: SearchInput!) { search(input: $input) { __typename
  ... on SearchResult { hits { score components { bm25 vector context episode time speaker feedback cooccurrence }
    message { id content timestamp metadata } } }
  ... on ValidationError { issues { field limit } } ... on Error { message } } }`
const BATCH = `mutation($c: String!, $m: [MessageInput!]!) { addMessages(input: { conversationId: $c, messages: $m }) { __typename ... on Error { message } } }`

interface Turn {
  speaker: string
  text: string
  at: string
}

async function load(t: TestApp, key: string, conversationId: string, turns: Turn[]) {
  const r = await t.gql(
    BATCH,
    {
      c: conversationId,
      m: turns.map((turn) => ({
        role: 'USER',
        content: turn.text,
        timestamp: turn.at,
        metadata: { speaker: turn.speaker },
      })),
    },
    key,
  )
  expect(r.data.addMessages.__typename).toBe('AddMessagesPayload')
}

type Hit = {
  score: number
  components: Record<
    'bm25' | 'vector' | 'context' | 'episode' | 'time' | 'speaker' | 'feedback' | 'cooccurrence',
    number
  >
  message: { id: string; content: string; timestamp: string }
}

let t: TestApp
let key: string
async function search(input: Record<string, unknown>, as = key): Promise<Hit[]> {
  const r = await t.gql(SEARCH, { input: { limit: 10, mmrLambda: 1, ...input } }, as)
  expect(r.data.search.__typename, JSON.stringify(r.data.search)).toBe('SearchResult')
  return r.data.search.hits
}
const find = (hits: Hit[], text: string) => hits.find((h) => h.message.content.includes(text))
const rankOf = (hits: Hit[], text: string) => hits.findIndex((h) => h.message.content.includes(text))

beforeAll(async () => {
  t = await createTestApp()
  key = await createAgentKey(t, 'signals')
  // Two dated sessions, weeks apart, with the same activity; an exchange whose reply shares no word
  // with the question; a later session naming other things.
  await load(t, key, 'talks', [
    { speaker: 'Dana', text: 'I went hiking in the mountains with my sister', at: '2023-05-08T10:00:00Z' },
    { speaker: 'Sam', text: 'That sounds lovely, which trail did you take?', at: '2023-05-08T10:01:00Z' },
    { speaker: 'Dana', text: 'The ridge loop above the lake', at: '2023-05-08T10:02:00Z' },
    { speaker: 'Sam', text: 'I went hiking in the mountains too, alone', at: '2023-07-20T09:00:00Z' },
    { speaker: 'Dana', text: 'Were you not scared of bears up there?', at: '2023-07-20T09:01:00Z' },
    { speaker: 'Sam', text: 'What instrument does your brother play?', at: '2023-07-20T09:02:00Z' },
    { speaker: 'Dana', text: 'Mostly cello, sometimes piano', at: '2023-07-20T09:03:00Z' },
    {
      speaker: 'Dana',
      text: 'The orchestra rehearsal for the cello section runs late on Fridays',
      at: '2023-07-21T18:00:00Z',
    },
    {
      speaker: 'Sam',
      text: 'Cello concerts at the orchestra hall are sold out, symphony tickets too',
      at: '2023-07-22T18:00:00Z',
    },
    { speaker: 'Dana', text: 'The symphony season opens with a cello concerto', at: '2023-07-23T18:00:00Z' },
    { speaker: 'Sam', text: 'We painted the kitchen yellow this weekend', at: '2023-08-01T12:00:00Z' },
  ])
})
afterAll(async () => {
  await t.close()
})

describe('dates in the query', () => {
  it('boost the turns inside the period the query names, ×(1 + weights.time), and never filter', async () => {
    const hits = await search({ query: 'Who went hiking in the mountains in May 2023?' })
    const may = find(hits, 'hiking in the mountains with my sister') as Hit
    const july = find(hits, 'hiking in the mountains too') as Hit
    expect(TIME).toBeGreaterThan(1)
    expect(may.components.time).toBeCloseTo(TIME, 10)
    expect(july.components.time).toBe(1)
    expect(rankOf(hits, 'with my sister')).toBeLessThan(rankOf(hits, 'too, alone'))
    const off = await search({ query: 'Who went hiking in the mountains in May 2023?', weights: { time: 0 } })
    expect(off.every((h) => h.components.time === 1)).toBe(true)
    expect(find(off, 'too, alone')).toBeDefined()
  })

  it('resolve relative periods against the newest message, not the clock ("last week")', async () => {
    // Newest message: 1 Aug 2023; "last week" is the week before it, not a week of today.
    const hits = await search({ query: 'what about the cello last week', weights: { time: 0.5 } })
    const inWeek = hits.filter((h) => h.components.time > 1).map((h) => h.message.timestamp.slice(0, 10))
    expect(inWeek.length).toBeGreaterThan(0)
    for (const day of inWeek) expect(day >= '2023-07-17' && day <= '2023-08-14').toBe(true)
  })
})

describe('the participant the query names', () => {
  it("boosts that participant's turns ×(1 + weights.speaker) and leaves the name out of word matching", async () => {
    const hits = await search({ query: 'Did Sam go hiking in the mountains?' })
    const sams = find(hits, 'too, alone') as Hit
    const danas = find(hits, 'with my sister') as Hit
    expect(SPEAKER).toBeGreaterThan(1)
    expect(sams.components.speaker).toBeCloseTo(SPEAKER, 10)
    expect(danas.components.speaker).toBe(1)
    // A boost, not a filter: Dana's turn is still found.
    expect(danas).toBeDefined()
    const off = await search({ query: 'Did Sam go hiking in the mountains?', weights: { speaker: 0 } })
    expect(off.every((h) => h.components.speaker === 1)).toBe(true)
  })

  it('recognises only participants of this agent', async () => {
    const other = await createAgentKey(t, 'signals-other')
    await load(t, other, 'x', [
      { speaker: 'Priya', text: 'hiking in the mountains', at: '2023-05-01T00:00:00Z' },
    ])
    const hits = await search({ query: 'Did Priya go hiking in the mountains?' })
    expect(hits.every((h) => h.components.speaker === 1)).toBe(true)
  })
})

describe('dialogue context', () => {
  it('brings in the reply that shares no word with the question, through its neighbour', async () => {
    const hits = await search({ query: 'What instrument does your brother play?' })
    const reply = find(hits, 'Mostly cello') as Hit
    expect(reply).toBeDefined()
    expect(reply.components.context).toBeGreaterThan(0)
    const off = await search({
      query: 'What instrument does your brother play?',
      weights: { context: 0, feedback: 0 },
    })
    expect(find(off, 'Mostly cello')?.components.context ?? 0).toBe(0)
  })

  it('stops at a long pause: the turns of another day gain nothing from a candidate', async () => {
    const hits = await search({
      query: 'Were you not scared of bears?',
      contextTurns: 3,
      weights: { feedback: 0 },
    })
    // 20 July's exchange is an episode; 8 May's turns are weeks away even though they are adjacent ids.
    expect(find(hits, 'ridge loop')).toBeUndefined()
    expect(find(hits, 'too, alone')?.components.context ?? 0).toBeGreaterThan(0)
  })

  it('gives each turn weights.episode of the best score in its episode', async () => {
    const hits = await search({
      query: 'Were you not scared of bears?',
      weights: { episode: 0.3, feedback: 0 },
    })
    const best = hits[0] as Hit
    const sameEpisode = find(hits, 'too, alone') as Hit
    expect(sameEpisode.components.episode).toBeGreaterThan(0)
    expect(best.components.episode).toBeGreaterThan(0)
  })

  it('refuses a reach outside 1..5 with the field and the limit', async () => {
    const r = await t.gql(SEARCH, { input: { query: 'cello', contextTurns: 6 } }, key)
    expect(r.data.search).toMatchObject({
      __typename: 'ValidationError',
      issues: [{ field: 'contextTurns', limit: '5' }],
    })
  })
})

describe('expansion from the agent’s own words', () => {
  it('pseudo-relevance feedback reaches turns sharing the best hits’ words, at weights.feedback', async () => {
    const on = await search({ query: 'orchestra rehearsal', weights: { feedback: 0.5, context: 0 } })
    const concerto = find(on, 'cello concerto') as Hit
    expect(concerto).toBeDefined()
    expect(concerto.components.bm25).toBe(0)
    expect(concerto.components.feedback).toBeGreaterThan(0)
    const off = await search({ query: 'orchestra rehearsal', weights: { feedback: 0, context: 0 } })
    expect(off.every((h) => h.components.feedback === 0)).toBe(true)
  })

  it('co-occurrence reaches turns holding words that keep company with the query’s', async () => {
    const on = await search({ query: 'orchestra', weights: { cooccurrence: 1, feedback: 0, context: 0 } })
    expect(on.some((h) => h.components.cooccurrence > 0 && h.components.bm25 === 0)).toBe(true)
    const off = await search({ query: 'orchestra', weights: { cooccurrence: 0, feedback: 0, context: 0 } })
    expect(off.every((h) => h.components.cooccurrence === 0)).toBe(true)
  })
})

describe('the conversation window', () => {
  it('counts back from the newest message, not the clock, and 0 keeps all history', async () => {
    // The history is from 2023: a window counted from today would hold nothing.
    const recent = await search({ query: 'hiking mountains cello kitchen', windowDays: 14 })
    expect(recent.length).toBeGreaterThan(0)
    for (const h of recent) expect(h.message.timestamp >= '2023-07-18').toBe(true)
    const all = await search({ query: 'hiking mountains cello kitchen', windowDays: 0 })
    expect(all.some((h) => h.message.timestamp < '2023-06-01')).toBe(true)
  })

  it('refuses a window outside 0..36500 days with the field and the limit', async () => {
    const r = await t.gql(SEARCH, { input: { query: 'cello', windowDays: -1 } }, key)
    expect(r.data.search).toMatchObject({
      __typename: 'ValidationError',
      issues: [{ field: 'windowDays', limit: '36500' }],
    })
  })
})

describe('memories get the same treatment', () => {
  const CREATE = `mutation($input: CreateMemoryInput!) { createMemory(input: $input) { __typename ... on Error { message } } }`
  const MEMORY_SEARCH = `query($input: SearchInput!) { search(input: $input) { ... on SearchResult { hits { components { time speaker } memory { content userId } } } } }`
  it('a memory of the user the query names is boosted, and one true in the period it names', async () => {
    const k = await createAgentKey(t, 'signals-memories')
    for (const [userId, content, validFrom] of [
      ['Dana', 'Enjoys hiking in the mountains on weekends', '2023-05-10T00:00:00Z'],
      ['Sam', 'Enjoys hiking in the mountains after work', '2023-07-01T00:00:00Z'],
    ] as const) {
      const r = await t.gql(CREATE, { input: { category: 'PREFERENCE', content, userId, validFrom } }, k)
      expect(r.data.createMemory.__typename).toBe('MemoryWrite')
    }
    const r = await t.gql(
      MEMORY_SEARCH,
      {
        input: {
          query: 'Does Dana enjoy hiking in the mountains since May 2023?',
          scopes: ['MEMORIES'],
          mmrLambda: 1,
        },
      },
      k,
    )
    const hits = r.data.search.hits as {
      components: { time: number; speaker: number }
      memory: { userId: string }
    }[]
    const dana = hits.find((h) => h.memory.userId === 'Dana')
    const sam = hits.find((h) => h.memory.userId === 'Sam')
    expect(dana?.components.speaker).toBeCloseTo(SPEAKER, 10)
    expect(sam?.components.speaker).toBe(1)
    expect(hits[0]?.memory.userId).toBe('Dana')
    const may = await t.gql(
      MEMORY_SEARCH,
      { input: { query: 'hiking in the mountains in May 2023', scopes: ['MEMORIES'], mmrLambda: 1 } },
      k,
    )
    const byUser = new Map(may.data.search.hits.map((h: any) => [h.memory.userId, h.components.time]))
    expect(byUser.get('Dana')).toBeCloseTo(TIME, 10)
    expect(byUser.get('Sam')).toBe(1)
  })
})

describe('what search derives from an agent is forgotten with it', () => {
  // A recognised participant's name leaves the word match; once forgotten it is a word again, so a
  // turn mentioning the name scores on it exactly as with the speaker signal off.
  const nameScores = async (query: string, as: string) => {
    const on = await search({ query }, as)
    const off = await search({ query, weights: { speaker: 0 } }, as)
    return { on: on.map((h) => h.components.bm25), off: off.map((h) => h.components.bm25), hits: on }
  }

  it('a deleted conversation’s or agent’s speakers are no longer recognised in queries', async () => {
    const k = await createAgentKey(t, 'signals-gone')
    await load(t, k, 'c1', [
      { speaker: 'Zed', text: 'I like kayaking on the river', at: '2023-03-01T10:00:00Z' },
    ])
    await load(t, k, 'c2', [{ speaker: 'Ann', text: 'Zed lent me his kayak', at: '2023-03-02T10:00:00Z' }])
    const before = await nameScores('Does Zed like kayaking?', k)
    expect(before.hits.some((h) => h.components.speaker > 1)).toBe(true)
    expect(before.on).not.toEqual(before.off)
    const removed = await t.gql(`mutation { deleteSession(conversationId: "c1") { __typename } }`, {}, k)
    expect(removed.data.deleteSession.__typename).toBe('DeleteSessionPayload')
    const after = await nameScores('Does Zed like kayaking?', k)
    expect(after.hits.every((h) => h.components.speaker === 1)).toBe(true)
    expect(after.on).toEqual(after.off)

    const deleted = await t.gql(`mutation { deleteAgent(id: "signals-gone") { __typename } }`, {})
    expect(deleted.data.deleteAgent.__typename).not.toMatch(/Error/)
    const again = await createAgentKey(t, 'signals-gone')
    await load(t, again, 'c3', [
      { speaker: 'Bo', text: 'Zed and Ann went kayaking', at: '2023-04-01T10:00:00Z' },
    ])
    const fresh = await nameScores('Did Ann go kayaking?', again)
    expect(fresh.on).toEqual(fresh.off)
  })
})

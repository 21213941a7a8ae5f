import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

const SEARCH = `query($input: SearchInput!) { search(input: $input) { __typename ... on SearchResult { hits { score components { bm25 vector context episode } conversationId message { id content } } } ... on ValidationError { issues { field limit } } ... on Error { message } } }`

describe('search over messages (FTS5 bm25)', () => {
  let t: TestApp
  let key: string
  beforeAll(async () => {
    t = await createTestApp()
    key = await createAgentKey(t, 'agent-s')
    const add = (conversationId: string, content: string) =>
      t.gql(
        `mutation($c: String!, $m: String!) { addMessage(input: { conversationId: $c, role: USER, content: $m }) { __typename } }`,
        { c: conversationId, m: content },
        key,
      )
    await add('trip', 'We went camping by the lake last summer and saw the stars')
    await add('trip', 'The museum visit was boring')
    await add('trip', 'Camping again next month? I bought a new tent for camping trips')
    await add('work', 'The quarterly report is due on Friday')
  })
  afterAll(() => t.close())

  const search = (input: Record<string, unknown>) => t.gql(SEARCH, { input }, key)

  it('ranks the turns that match more (and rarer) words first, with stemming', async () => {
    const r = await search({ query: 'When did they go camping?', strategy: 'LEXICAL' })
    const hits = r.data.search.hits
    expect(hits.map((h: any) => h.message.content.slice(0, 12))).toEqual(['Camping agai', 'We went camp'])
    expect(hits[0].score).toBeGreaterThan(hits[1].score)
    expect(hits[0].components).toEqual({ bm25: hits[0].score, vector: 0, context: 0, episode: 0 })
    expect(hits[0].conversationId).toBe('trip')
  })

  it('filters by conversation and honours the limit', async () => {
    expect(
      (await search({ query: 'camping report', conversationId: 'work' })).data.search.hits.map(
        (h: any) => h.conversationId,
      ),
    ).toEqual(['work'])
    expect((await search({ query: 'camping', limit: 1 })).data.search.hits).toHaveLength(1)
  })

  it('finds nothing for stop words only, and treats FTS syntax as words', async () => {
    expect((await search({ query: 'the and of' })).data.search.hits).toEqual([])
    expect((await search({ query: 'NEAR(camping "tent") OR *' })).data.search.hits.length).toBeGreaterThan(0)
  })

  it('rejects an empty or overlong query and a bad limit, naming the field', async () => {
    expect((await search({ query: '' })).data.search.issues[0].field).toBe('query')
    expect((await search({ query: 'x'.repeat(2_001) })).data.search.issues[0]).toEqual({
      field: 'query',
      limit: '2000',
    })
    expect((await search({ query: 'camping', limit: 101 })).data.search.issues[0]).toEqual({
      field: 'limit',
      limit: '100',
    })
  })

  it('hybrid: fuses bm25 with the embedding, and finds a misspelling bm25 cannot', async () => {
    const r = await search({ query: 'camping tent' })
    const top = r.data.search.hits[0]
    expect(top.message.content).toMatch(/^Camping again/)
    expect(top.components.bm25).toBeGreaterThan(0)
    expect(top.components.vector).toBeGreaterThan(0)
    // 0.7 x bm25 scaled to the best candidate + 0.3 x cosine + 1 x context + the episode share
    expect(top.score).toBeCloseTo(
      0.7 + 0.3 * top.components.vector + top.components.context + top.components.episode,
      6,
    )
    expect((await search({ query: 'campng', strategy: 'LEXICAL' })).data.search.hits).toEqual([])
    const typo = await search({ query: 'campng', weights: { context: 0 } })
    expect(typo.data.search.hits[0].message.content).toMatch(/[Cc]amping/)
    expect(typo.data.search.hits[0].components.bm25).toBe(0)
  })

  it('brings in the reply next to a matching turn (dialogue context)', async () => {
    const say = (content: string) =>
      t.gql(
        `mutation($m: String!) { addMessage(input: { conversationId: "gear", role: USER, content: $m }) { __typename } }`,
        { m: content },
        key,
      )
    await say('Which sleeping bag did you end up buying for the expedition?')
    await say('The green one from the outdoor shop, it was on sale')
    await say('Unrelated: the printer is out of toner again')
    const r = await search({ query: 'which sleeping bag for the expedition', conversationId: 'gear' })
    const reply = r.data.search.hits.find((h: any) => h.message.content.startsWith('The green one'))
    expect(reply.components.bm25).toBe(0)
    expect(reply.components.context).toBeGreaterThan(0)
    const without = await search({
      query: 'which sleeping bag for the expedition',
      conversationId: 'gear',
      weights: { context: 0 },
    })
    const replyWithout = without.data.search.hits.find((h: any) =>
      h.message.content.startsWith('The green one'),
    )
    expect(replyWithout?.score ?? 0).toBeLessThan(reply.score)
  })

  it('takes weights between 0 and 1, naming the field', async () => {
    const r = await search({ query: 'camping', weights: { vector: 1.5 } })
    expect(r.data.search.issues[0]).toEqual({ field: 'weights.vector', limit: '0..1' })
    const lexicalOnly = await search({
      query: 'camping',
      weights: { bm25: 1, vector: 0, context: 0, episode: 0 },
    })
    expect(lexicalOnly.data.search.hits[0].score).toBe(1)
  })

  it('keeps the index and the vectors in step with new messages and deletes', async () => {
    await t.gql(
      `mutation { addMessage(input: { conversationId: "work", role: USER, content: "Kayaking plans for the weekend" }) { __typename } }`,
      {},
      key,
    )
    expect((await search({ query: 'kayaking' })).data.search.hits[0].message.content).toMatch(/^Kayaking/)
    await t.gql(`mutation { deleteSession(conversationId: "trip") { __typename } }`, {}, key)
    expect((await search({ query: 'camping', strategy: 'LEXICAL' })).data.search.hits).toEqual([])
    const hybrid = await search({ query: 'camping trips' })
    expect(hybrid.data.search.hits.some((h: any) => h.conversationId === 'trip')).toBe(false)
    expect((await search({ query: 'report', strategy: 'LEXICAL' })).data.search.hits).toHaveLength(1)
  })
})

describe('search over a large index: common terms rank but do not select', () => {
  // Thresholds scaled down so ten messages count as a large index; "project" and "notes" are in
  // over 30% of them (common), "zebra" in one.
  const apps: TestApp[] = []
  const keys: string[] = []
  const texts = [
    'project zebra crossing painted today',
    'project status meeting moved',
    'project status report sent',
    'project notes one',
    'project notes two',
    'weekly notes three',
    'weekly notes four',
    'weekly plan five',
    'weekly plan six',
    'weekly plan seven',
  ]
  beforeAll(async () => {
    for (const commonTerms of [undefined, { share: 0.3, minDocuments: 5 }]) {
      const t = await createTestApp(commonTerms ? { commonTerms } : {})
      const key = await createAgentKey(t, 'agent-big')
      const other = await createAgentKey(t, 'agent-other')
      const add = (content: string, k: string) =>
        t.gql(
          `mutation($m: String!) { addMessage(input: { conversationId: "c", role: USER, content: $m }) { __typename } }`,
          { m: content },
          k,
        )
      for (const text of texts) await add(text, key)
      await add('giraffe sighting at the zoo', other)
      apps.push(t)
      keys.push(key)
    }
  })
  afterAll(async () => {
    for (const t of apps) await t.close()
  })
  const lexical = (i: number, query: string, limit: number) =>
    apps[i]!.gql(SEARCH, { input: { query, limit, strategy: 'LEXICAL' } }, keys[i]).then(
      (r) => r.data.search.hits as { score: number; message: { content: string } }[],
    )

  it('selects by the uncommon term and ranks it by that term alone', async () => {
    const [exact] = await lexical(0, 'project zebra', 1)
    const [planned] = await lexical(1, 'project zebra', 1)
    expect(planned?.message.content).toBe(texts[0])
    expect(exact?.message.content).toBe(texts[0])
    // The common term's share of the score is left out: the same turn scores lower.
    expect(planned!.score).toBeLessThan(exact!.score)
    expect(planned!.score).toBeGreaterThan(0)
  })

  it('falls back to any term when the uncommon one finds nothing for this agent', async () => {
    // "giraffe" is uncommon but only another agent said it: the any-term query answers.
    const hits = await lexical(1, 'project giraffe', 3)
    expect(hits).toHaveLength(3)
    for (const hit of hits) expect(hit.message.content).toContain('project')
    // Otherwise the turns holding the uncommon term are the answer, even fewer than asked for.
    const few = await lexical(1, 'project zebra', 4)
    expect(few.map((hit) => hit.message.content)).toEqual([texts[0]])
    expect(await lexical(0, 'project zebra', 4)).toHaveLength(4)
  })

  it('asks for every term when all are common', async () => {
    const both = await lexical(1, 'project notes', 5)
    expect(both.map((hit) => hit.message.content).sort()).toEqual(['project notes one', 'project notes two'])
    expect(await lexical(0, 'project notes', 5)).toHaveLength(5)
    // None holds all of them: any term, as without planning.
    expect(await lexical(1, 'project weekly', 5)).toEqual(await lexical(0, 'project weekly', 5))
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

const SEARCH = `query($input: SearchInput!) { search(input: $input) { __typename
  ... on SearchResult { hits { scope id score text conversationId components { bm25 vector importance recency confidence context decay }
    memory { id content accessCount lastAccessedAt } knowledge { key useCount } message { content } } }
  ... on ValidationError { issues { field limit } } } }`

const DAY = 86_400_000

describe('search over memories, messages, knowledge and summaries', () => {
  let t: TestApp
  let key: string
  const ids: Record<string, string> = {}
  const search = async (input: Record<string, unknown>) => (await t.gql(SEARCH, { input }, key)).data.search
  const texts = async (input: Record<string, unknown>) => (await search(input)).hits.map((h: any) => h.text)

  beforeAll(async () => {
    t = await createTestApp()
    key = await createAgentKey(t, 'agent-r')
    await createAgentKey(t, 'agent-r-other')
    const remember = async (name: string, content: string, importance: number, category = 'FACT') => {
      const r = await t.gql(
        `mutation($i: CreateMemoryInput!) { createMemory(input: $i) { ... on MemoryWrite { outcome memory { id } } } }`,
        { i: { content, category, importance } },
        key,
      )
      expect(r.data.createMemory.outcome, name).toBe('STORED')
      ids[name] = r.data.createMemory.memory.id
    }
    // Created 60, 30 and 0 days before "now" so recency and decay can be seen.
    t.clock.set(new Date(Date.parse('2026-06-01T00:00:00Z') - 60 * DAY))
    await remember('old', 'The team standup moved to the garden office', 0.9)
    t.clock.set(new Date(Date.parse('2026-06-01T00:00:00Z') - 30 * DAY))
    await remember('mid', 'Standup notes are kept in the wiki', 0.2, 'CONTEXT')
    t.clock.set('2026-06-01T00:00:00Z')
    await remember('new', 'Daily standup happens at nine in the morning', 0.5, 'DECISION')
    await remember('unrelated', 'Bought oat milk and coffee beans', 0.4)
    await t.gql(
      `mutation { storeKnowledge(input: { category: EXECUTION_PATTERN, key: "standup", value: "keep it under fifteen minutes" }) { __typename } }`,
      {},
      key,
    )
    const say = async (content: string) =>
      (
        await t.gql(
          `mutation($c: String!) { addMessage(input: { conversationId: "c1", role: USER, content: $c }) { ... on Message { id } } }`,
          { c: content },
          key,
        )
      ).data.addMessage.id
    await say('Is the coffee machine fixed?')
    const keep = await say('Can we move the standup later?')
    const compressed = await t.gql(
      `mutation($id: ID!) { compressMessages(input: { conversationId: "c1", olderThanId: $id, summary: "Discussed moving the standup to a later time" }) { __typename } }`,
      { id: keep },
      key,
    )
    expect(compressed.data.compressMessages.__typename).not.toMatch(/Error/)
    // Another agent's matching memory must never appear.
    await t.gql(
      `mutation { createMemory(input: { agentId: "agent-r-other", content: "Standup is secret", category: FACT }) { __typename } }`,
    )
  })
  afterAll(() => t.close())

  it('searches each scope and tells which one a hit came from', async () => {
    const r = await search({
      query: 'standup',
      scopes: ['MEMORIES', 'KNOWLEDGE', 'SUMMARIES', 'MESSAGES'],
      limit: 20,
      mmrLambda: 1,
    })
    const scopes = new Set(r.hits.map((h: any) => h.scope))
    expect(scopes).toEqual(new Set(['MEMORIES', 'KNOWLEDGE', 'SUMMARIES', 'MESSAGES']))
    expect(r.hits.map((h: any) => h.text)).not.toContain('Standup is secret')
    const k = r.hits.find((h: any) => h.scope === 'KNOWLEDGE')
    expect(k.text).toBe('standup: keep it under fifteen minutes')
    const s = r.hits.find((h: any) => h.scope === 'SUMMARIES')
    expect(s.text).toMatch(/^\[CONTEXT SUMMARY\]/)
    const m = r.hits.find((h: any) => h.scope === 'MESSAGES')
    expect(m.text).toBe('Can we move the standup later?')
    expect(m.conversationId).toBe('c1')
  })

  it('breaks every hit score into its components', async () => {
    const r = await search({ query: 'standup garden', scopes: ['MEMORIES'], decay: false, mmrLambda: 1 })
    const top = r.hits[0]
    expect(top.text).toBe('The team standup moved to the garden office')
    expect(top.components.bm25).toBeGreaterThan(0)
    expect(top.components.vector).toBeGreaterThan(0)
    expect(top.components.importance).toBe(0.9)
    expect(top.components.confidence).toBe(1)
    expect(top.components.decay).toBe(1)
    // HYBRID: 0.7 · bm25 / best bm25 + 0.3 · cosine (the best bm25 is its own).
    expect(top.score).toBeCloseTo(0.7 + 0.3 * top.components.vector, 6)
  })

  it('decays memories with a 30-day half-life', async () => {
    const r = await search({ query: 'standup', scopes: ['MEMORIES'], mmrLambda: 1 })
    const byId = new Map(r.hits.map((h: any) => [h.id, h]))
    expect((byId.get(ids.new) as any).components.decay).toBeCloseTo(1, 6)
    expect((byId.get(ids.mid) as any).components.decay).toBeCloseTo(0.5, 6)
    expect((byId.get(ids.old) as any).components.decay).toBeCloseTo(0.25, 6)
    const undecayed = await search({ query: 'standup', scopes: ['MEMORIES'], mmrLambda: 1, decay: false })
    for (const hit of undecayed.hits) expect(hit.components.decay).toBe(1)
  })

  it('ranks by each strategy', async () => {
    const base = { query: 'standup', scopes: ['MEMORIES'] }
    expect(await texts({ ...base, strategy: 'RECENCY' })).toEqual([
      'Bought oat milk and coffee beans',
      'Daily standup happens at nine in the morning',
      'Standup notes are kept in the wiki',
      'The team standup moved to the garden office',
    ])
    expect((await texts({ ...base, strategy: 'IMPORTANCE' }))[0]).toBe(
      'The team standup moved to the garden office',
    )
    expect((await texts({ ...base, strategy: 'IMPORTANCE' })).at(-1)).toBe(
      'Standup notes are kept in the wiki',
    )
    const lexical = (await search({ ...base, strategy: 'LEXICAL' })).hits
    expect(lexical.map((h: any) => h.text)).not.toContain('Bought oat milk and coffee beans')
    for (const h of lexical) expect(h.score).toBe(h.components.bm25)
    const similarity = (await search({ ...base, strategy: 'SIMILARITY' })).hits
    for (const h of similarity) expect(h.score).toBeCloseTo(h.components.vector, 6)
    const si = (await search({ ...base, strategy: 'SIMILARITY_IMPORTANCE' })).hits
    for (const h of si)
      expect(h.score).toBeCloseTo(0.7 * h.components.vector + 0.3 * h.components.importance, 6)
    const weighted = (await search({ ...base, strategy: 'WEIGHTED' })).hits
    for (const h of weighted)
      expect(h.score).toBeCloseTo(
        0.3 * h.components.recency + 0.5 * h.components.vector + 0.2 * h.components.importance,
        6,
      )
    const importanceOnly = (
      await search({ ...base, strategy: 'WEIGHTED', weights: { recency: 0, similarity: 0, importance: 1 } })
    ).hits
    expect(importanceOnly[0].text).toBe('The team standup moved to the garden office')
  })

  it('leaves out hits below the threshold', async () => {
    const all = (await search({ query: 'standup', scopes: ['MEMORIES'], strategy: 'IMPORTANCE' })).hits
    const scores = all.map((h: any) => h.score)
    const cut = (
      await search({ query: 'standup', scopes: ['MEMORIES'], strategy: 'IMPORTANCE', threshold: 0.5 })
    ).hits
    expect(cut.map((h: any) => h.score)).toEqual(scores.filter((s: number) => s >= 0.5))
    expect(cut.map((h: any) => h.score)).toContain(0.5)
  })

  it('reranks with MMR: a near-copy of the best hit gives way to a different one', async () => {
    const k = await createAgentKey(t, 'agent-mmr')
    for (const [content, category] of [
      ['Paris trip booked for May: hotel near the Louvre', 'CONTEXT'],
      ['Decided on the Louvre hotel for Paris in May', 'DECISION'],
      ['Paris restaurants to try: a bistro in Montmartre', 'FACT'],
    ]) {
      const r = await t.gql(
        `mutation($c: String!, $k: MemoryCategory!) { createMemory(input: { content: $c, category: $k }) { ... on MemoryWrite { outcome } } }`,
        { c: content, k: category },
        k,
      )
      expect(r.data.createMemory.outcome).toBe('STORED')
    }
    // The two hotel notes overlap (Jaccard 0.5) under the write pipeline's 0.6 but a lot for MMR.
    const run = async (mmrLambda: number) =>
      (
        await t.gql(
          SEARCH,
          { input: { query: 'Paris trip hotel Louvre May', scopes: ['MEMORIES'], limit: 2, mmrLambda } },
          k,
        )
      ).data.search.hits.map((h: any) => h.text)
    const plain = await run(1)
    expect(plain.every((x: string) => x.includes('Louvre'))).toBe(true)
    const diverse = await run(0.3)
    expect(diverse).toContain('Paris restaurants to try: a bistro in Montmartre')

    // Issue 10: hits out of score order must say why. All three, λ 0.3.
    const result = (
      await t.gql(
        `query($input: SearchInput!) { search(input: $input) { ... on SearchResult { mmrLambda hits { rank text score relevance redundancy redundantWithRank mmrScore } } } }`,
        { input: { query: 'Paris trip hotel Louvre May', scopes: ['MEMORIES'], limit: 3, mmrLambda: 0.3 } },
        k,
      )
    ).data.search
    expect(result.mmrLambda).toBe(0.3)
    const hits = result.hits
    expect(hits.map((h: any) => h.rank)).toEqual([1, 2, 3])
    // The restaurant note is listed above the second hotel note although it scores lower...
    expect(hits[1].text).toBe('Paris restaurants to try: a bistro in Montmartre')
    expect(hits[1].score).toBeLessThan(hits[2].score)
    // ...because the hotel note repeats hit 1, which the payload says, and its mmrScore is lower.
    expect(hits[2].redundantWithRank).toBe(1)
    expect(hits[2].redundancy).toBeGreaterThan(hits[1].redundancy)
    expect(hits[1].mmrScore).toBeGreaterThan(hits[2].mmrScore)
    for (const [i, h] of hits.entries()) {
      expect(h.relevance).toBeCloseTo(h.score / hits[0].score, 10)
      expect(h.mmrScore).toBeCloseTo(0.3 * h.relevance - 0.7 * h.redundancy, 10)
      if (i > 0) expect(h.mmrScore).toBeLessThanOrEqual(hits[i - 1].mmrScore)
    }

    // Without MMR the order is the score order and the same fields say so.
    const plainResult = (
      await t.gql(
        `query($input: SearchInput!) { search(input: $input) { ... on SearchResult { mmrLambda hits { rank score relevance redundancy redundantWithRank mmrScore } } } }`,
        { input: { query: 'Paris trip hotel Louvre May', scopes: ['MEMORIES'], limit: 3, mmrLambda: 1 } },
        k,
      )
    ).data.search
    expect(plainResult.mmrLambda).toBe(1)
    const scores = plainResult.hits.map((h: any) => h.score)
    expect(scores).toEqual([...scores].sort((a, b) => b - a))
    for (const h of plainResult.hits) {
      expect(h).toMatchObject({ redundancy: 0, redundantWithRank: null })
      expect(h.mmrScore).toBe(h.relevance)
    }
  })

  it('counts hits as accesses (memories and knowledge)', async () => {
    // Search's memory accesses are written together after ENGRAM_SEARCH_ACCESS_FLUSH_MS (issue 18):
    // the earlier tests' ones first, so the row holds every access before this search.
    const accesses = t.app.services.search.accesses
    await accesses.flush()
    const stored = async () =>
      (await t.db.memoryItem.findUniqueOrThrow({ where: { id: Number(ids.new) } })).accessCount
    const before = await stored()
    const r = await search({ query: 'standup nine morning', scopes: ['MEMORIES', 'KNOWLEDGE'], mmrLambda: 1 })
    const hit = r.hits.find((h: any) => h.id === ids.new)
    // The hit shows the access at once; the row has it from the next flush.
    expect(hit.memory.accessCount).toBe(before + 1)
    expect(hit.memory.lastAccessedAt).toBe(t.clock.now().toISOString())
    expect(await stored()).toBe(before)
    await accesses.flush()
    expect(await stored()).toBe(before + 1)
    const knowledge = await t.db.knowledge.findFirstOrThrow({ where: { agentId: 'agent-r', key: 'standup' } })
    expect(knowledge.useCount).toBeGreaterThan(0)
    expect(knowledge.lastUsedAt?.toISOString()).toBe(t.clock.now().toISOString())
  })

  it('filters memories by category, importance and time; messages by conversation and time', async () => {
    expect(
      await texts({
        query: 'standup',
        scopes: ['MEMORIES'],
        filters: { memories: { categories: ['DECISION'] } },
      }),
    ).toEqual(['Daily standup happens at nine in the morning'])
    expect(
      await texts({ query: 'standup', scopes: ['MEMORIES'], filters: { memories: { minImportance: 0.8 } } }),
    ).toEqual(['The team standup moved to the garden office'])
    // As of 45 days ago only the oldest memory existed.
    expect(
      await texts({
        query: 'standup',
        scopes: ['MEMORIES'],
        filters: { memories: { asOf: new Date(t.clock.now().getTime() - 45 * DAY).toISOString() } },
      }),
    ).toEqual(['The team standup moved to the garden office'])
    expect(
      await texts({ query: 'standup', scopes: ['MESSAGES'], filters: { since: '2030-01-01T00:00:00Z' } }),
    ).toEqual([])
  })

  it('rejects bad options naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ query: 'x', mmrLambda: 1.1 }, 'mmrLambda'],
      [{ query: 'x', weights: { importance: -0.1 } }, 'weights.importance'],
      [{ query: 'x', limit: 101 }, 'limit'],
      [{ query: '' }, 'query'],
      [
        { query: 'x', filters: { since: '2026-02-01T00:00:00Z', until: '2026-01-01T00:00:00Z' } },
        'filters.since',
      ],
      [
        { query: 'x', scopes: ['MEMORIES'], filters: { memories: { minImportance: 7 } } },
        'filter.minImportance',
      ],
    ]
    for (const [input, field] of cases) {
      const r = await search(input)
      expect(r.__typename, field).toBe('ValidationError')
      expect(r.issues.map((i: any) => i.field)).toContain(field)
    }
  })
})

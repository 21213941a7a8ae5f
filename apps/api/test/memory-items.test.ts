import type { HashingEmbedder } from '@engram/core'
import { contentHash } from '@engram/engine'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

/**
 * An in-process embedder whose geometry the test decides: each new text gets its own axis (so
 * different texts are orthogonal) unless the test placed it.
 */
function tableEmbedder(placed: Record<string, number[]> = {}, dims = 512): HashingEmbedder {
  const axes = new Map<string, number>()
  const embedOne = (text: string) => {
    const vector = new Float32Array(dims)
    const given = placed[text]
    if (given) vector.set(given)
    else {
      if (!axes.has(text)) axes.set(text, 16 + (axes.size % (dims - 16)))
      vector[axes.get(text) as number] = 1
    }
    return vector
  }
  return { model: 'test-table-v1', dimensions: dims, embedOne, embed: async (texts) => texts.map(embedOne) }
}

const WRITE = `mutation($input: CreateMemoryInput!) { createMemory(input: $input) {
  __typename
  ... on MemoryWrite { outcome similarity layer memory { id content category isCurrent } duplicateOf { id } superseded { id validUntil supersededById } evicted { id } }
  ... on ValidationError { issues { field message limit } }
} }`
const SETTINGS = `mutation($s: MemorySettingsInput, $b: ContextBudgetsInput) { updateMemorySettings(settings: $s, contextBudgets: $b) {
  __typename ... on MemorySettings { jaccardDedupThreshold contradictionThreshold semanticDedupThreshold verificationEnabled maxEntriesPerAgent }
  ... on ValidationError { issues { field limit } }
} }`

describe('memory items over GraphQL', () => {
  let t: TestApp
  let key: string
  let other: string
  const write = async (input: Record<string, unknown>, asKey = key) =>
    (await t.gql(WRITE, { input: { category: 'FACT', ...input } }, asKey)).data.createMemory
  const settings = async (s: Record<string, unknown>, b?: Record<string, unknown>) =>
    (await t.gql(SETTINGS, { s, b }, key)).data.updateMemorySettings

  beforeAll(async () => {
    t = await createTestApp({
      embedder: tableEmbedder({
        'The user lives in Berlin with two cats': [1, 0, 0],
        'Home city: Berlin, pets: a pair of cats': [0.9, Math.sqrt(1 - 0.81), 0],
        'The user drives a red bicycle to work': [0, 0, 1],
        'Commutes by bike (a red one)': [0, Math.sqrt(1 - 0.09), 0.3],
      }),
    })
    key = await createAgentKey(t, 'agent-m')
    other = await createAgentKey(t, 'agent-m2')
  })
  afterAll(() => t.close())

  it('stores a memory with every field and reads it back', async () => {
    const r = await t.gql(
      `mutation { createMemory(input: { content: "Prefers tabs over spaces", category: PREFERENCE, tags: ["editor", "style"], importance: 0.9, confidence: 0.7, pinned: true, userId: "u1", sourceConversationId: "c1", sourceMessageId: "m9", validFrom: "2026-01-01T00:00:00Z", metadata: { origin: "test" } }) {
        ... on MemoryWrite { outcome memory { id agentId userId content category tags importance confidence pinned sourceConversationId sourceMessageId accessCount validFrom validUntil metadata isCurrent tokenCount } } } }`,
      {},
      key,
    )
    const stored = r.data.createMemory
    expect(stored.outcome).toBe('STORED')
    expect(stored.memory).toMatchObject({
      agentId: 'agent-m',
      userId: 'u1',
      content: 'Prefers tabs over spaces',
      category: 'PREFERENCE',
      tags: ['editor', 'style'],
      importance: 0.9,
      confidence: 0.7,
      pinned: true,
      sourceConversationId: 'c1',
      sourceMessageId: 'm9',
      accessCount: 0,
      validFrom: '2026-01-01T00:00:00.000Z',
      validUntil: null,
      metadata: { origin: 'test' },
      isCurrent: true,
    })
    expect(stored.memory.tokenCount).toBeGreaterThan(2)
    const read = await t.gql(
      `query($id: ID!) { memory(id: $id) { ... on MemoryItem { content accessCount lastAccessedAt } } }`,
      { id: stored.memory.id },
      key,
    )
    // Reading by id is an access.
    expect(read.data.memory).toMatchObject({ content: 'Prefers tabs over spaces', accessCount: 1 })
    expect(read.data.memory.lastAccessedAt).toBe(t.clock.now().toISOString())
  })

  it('rejects bad input naming the field and the limit, storing nothing', async () => {
    const before = await t.db.memoryItem.count()
    const cases: [Record<string, unknown>, string, string | null][] = [
      [{ content: 'x'.repeat(10_001) }, 'content', '10000'],
      [{ content: '   ' }, 'content', null],
      [{ content: 'ok', importance: 1.01 }, 'importance', '1'],
      [{ content: 'ok', confidence: -0.01 }, 'confidence', '0'],
      [{ content: 'ok', tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, 'tags', '20'],
      [{ content: 'ok', tags: ['x'.repeat(65)] }, 'tags.0', '64'],
      [{ content: 'ok', tags: ['two words'] }, 'tags.0', null],
      [{ content: 'ok', userId: 'u'.repeat(129) }, 'userId', '128'],
      [
        { content: 'ok', validFrom: '2026-02-01T00:00:00Z', validUntil: '2026-01-01T00:00:00Z' },
        'validUntil',
        null,
      ],
      [{ content: 'ok', metadata: { big: 'x'.repeat(16_384) } }, 'metadata', '16384'],
    ]
    for (const [input, field, limit] of cases) {
      const r = await write(input)
      expect(r.__typename, field).toBe('ValidationError')
      const issue = r.issues.find((i: { field: string }) => i.field === field)
      expect(issue, `${field}: ${JSON.stringify(r.issues)}`).toBeTruthy()
      if (limit) expect(issue.limit).toBe(limit)
    }
    // The bounds themselves are accepted.
    expect(
      (
        await write({
          content: 'y'.repeat(10_000),
          importance: 1,
          confidence: 0,
          tags: Array.from({ length: 20 }, (_, i) => `k${i}`),
        })
      ).outcome,
    ).toBe('STORED')
    expect(await t.db.memoryItem.count()).toBe(before + 1)
  })

  it('skips a near-duplicate (Jaccard >= 0.6) and says which memory it repeats', async () => {
    const first = await write({ content: 'alpha bravo charlie delta' })
    expect(first.outcome).toBe('STORED')
    // 3 shared of 5 distinct words: exactly 0.6.
    const dup = await write({ content: 'alpha bravo charlie echo' })
    expect(dup).toMatchObject({ outcome: 'DUPLICATE', layer: 'JACCARD', similarity: 0.6 })
    expect(dup.duplicateOf.id).toBe(first.memory.id)
    expect(dup.memory.id).toBe(first.memory.id)
    // Raised just past it, the same pair is no duplicate: same category and 0.6 < 0.61 supersedes.
    await settings({ jaccardDedupThreshold: 0.61 })
    const again = await write({ content: 'alpha bravo charlie echo' })
    expect(again.outcome).toBe('SUPERSEDED')
    expect(again.superseded).toMatchObject({ id: first.memory.id, supersededById: again.memory.id })
    expect(again.superseded.validUntil).toBe(t.clock.now().toISOString())
    await settings({ jaccardDedupThreshold: 0.6 })
  })

  it('supersedes only inside the open band (0.3, 0.6) and only in the same category', async () => {
    const older = await write({ content: 'golf hotel india juliet kilo lima', category: 'DECISION' })
    // 3 shared of 10 distinct words: exactly 0.3, not above it.
    const edge = await write({ content: 'golf hotel india mike november oscar papa', category: 'DECISION' })
    expect(edge.outcome).toBe('STORED')
    expect(edge.superseded).toBeNull()
    // In the band but another category: stored beside it.
    const otherCategory = await write({ content: 'golf hotel india juliet quebec romeo', category: 'SKILL' })
    expect(otherCategory.outcome).toBe('STORED')
    await settings({ contradictionThreshold: 0.29 })
    const inBand = await write({
      content: 'golf hotel india sierra tango uniform victor',
      category: 'DECISION',
    })
    expect(inBand.outcome).toBe('SUPERSEDED')
    expect([older.memory.id, edge.memory.id]).toContain(inBand.superseded.id)
    await settings({ contradictionThreshold: 0.3 })
  })

  it('skips a semantic duplicate (cosine >= 0.85) that shares few words', async () => {
    const first = await write({ content: 'The user lives in Berlin with two cats' })
    expect(first.outcome).toBe('STORED')
    const paraphrase = await write({ content: 'Home city: Berlin, pets: a pair of cats' })
    expect(paraphrase.outcome).toBe('DUPLICATE')
    expect(paraphrase.layer).toBe('SEMANTIC')
    expect(paraphrase.similarity).toBeCloseTo(0.9, 5)
    // 0.3 cosine apart from its neighbour: stored.
    expect((await write({ content: 'The user drives a red bicycle to work' })).outcome).toBe('STORED')
    expect((await write({ content: 'Commutes by bike (a red one)' })).outcome).toBe('STORED')
    await settings({ semanticDedupThreshold: 0.91 })
    const now = await write({ content: 'Home city: Berlin, pets: a pair of cats' })
    expect(now.outcome).toBe('STORED')
    await settings({ semanticDedupThreshold: 0.85 })
  })

  it('can switch the pipeline off', async () => {
    await settings({ verificationEnabled: false })
    const a = await write({ content: 'zulu yankee xray whiskey' })
    const b = await write({ content: 'zulu yankee xray whiskey' })
    expect([a.outcome, b.outcome]).toEqual(['STORED', 'STORED'])
    await settings({ verificationEnabled: true })
    expect((await write({ content: 'zulu yankee xray whiskey' })).outcome).toBe('DUPLICATE')
  })

  it('validates settings whole: a bad value changes nothing', async () => {
    const bad = await settings({ jaccardDedupThreshold: 1.5, mmrLambda: 0.5 })
    expect(bad.__typename).toBe('ValidationError')
    expect(bad.issues[0]).toMatchObject({ field: 'settings.jaccardDedupThreshold', limit: '1' })
    const crossed = await settings({ contradictionThreshold: 0.7 })
    expect(crossed.issues[0].field).toBe('settings.contradictionThreshold')
    const budget = await settings({}, { profile: 99 })
    expect(budget.issues[0]).toMatchObject({ field: 'contextBudgets.profile', limit: '100' })
    const read = await t.gql(
      `{ memorySettings { ... on MemorySettings { jaccardDedupThreshold mmrLambda contradictionThreshold contextBudgets } } }`,
      {},
      key,
    )
    expect(read.data.memorySettings).toMatchObject({
      jaccardDedupThreshold: 0.6,
      mmrLambda: 0.7,
      contradictionThreshold: 0.3,
    })
    expect(read.data.memorySettings.contextBudgets.profile).toBe(2000)
  })

  it('keeps an agent under maxEntriesPerAgent by retiring its least important memories', async () => {
    const k = await createAgentKey(t, 'agent-small')
    await t.gql(
      `mutation { updateMemorySettings(settings: { maxEntriesPerAgent: 2 }) { __typename } }`,
      {},
      k,
    )
    const low = await write({ content: 'Keeps a spare key under the mat', importance: 0.1 }, k)
    await write({ content: 'Allergic to penicillin', importance: 0.9 }, k)
    const third = await write({ content: 'Birthday falls in late June', importance: 0.5 }, k)
    expect(third.outcome).toBe('STORED')
    expect(third.evicted.map((e: { id: string }) => e.id)).toEqual([low.memory.id])
    const list = await t.gql(`{ memories { ... on QueryMemoriesConnection { totalCount } } }`, {}, k)
    expect(list.data.memories.totalCount).toBe(2)
    const all = await t.gql(
      `{ memories(filter: { includeSuperseded: true }) { ... on QueryMemoriesConnection { totalCount } } }`,
      {},
      k,
    )
    expect(all.data.memories.totalCount).toBe(3)
  })

  it('lists with filters, as of a time, with superseded on request, in pages', async () => {
    const k = await createAgentKey(t, 'agent-list')
    t.clock.set('2026-03-01T00:00:00Z')
    const a = await write(
      { content: 'The office is in Leeds', category: 'FACT', tags: ['office'], importance: 0.3 },
      k,
    )
    t.clock.set('2026-03-10T00:00:00Z')
    await write(
      {
        content: 'Likes green tea in the morning',
        category: 'PREFERENCE',
        tags: ['food', 'morning'],
        importance: 0.8,
      },
      k,
    )
    t.clock.set('2026-03-20T00:00:00Z')
    // Supersedes the first (same category, overlap 0.5 of "office, leeds" words).
    const b = await write(
      { content: 'The office is in York now', category: 'FACT', tags: ['office'], importance: 0.6 },
      k,
    )
    expect(b.outcome).toBe('SUPERSEDED')
    expect(b.superseded.id).toBe(a.memory.id)
    const q = async (filter: Record<string, unknown>, extra = '') =>
      (
        await t.gql(
          `query($f: MemoryFilterInput) { memories(filter: $f${extra}) { ... on QueryMemoriesConnection { totalCount pageInfo { hasNextPage endCursor } edges { node { content } } } } }`,
          { f: filter },
          k,
        )
      ).data.memories
    const contents = async (filter: Record<string, unknown>) =>
      (await q(filter)).edges.map((e: any) => e.node.content)
    expect(await contents({})).toEqual(['The office is in York now', 'Likes green tea in the morning'])
    expect(await contents({ categories: ['PREFERENCE'] })).toEqual(['Likes green tea in the morning'])
    expect(await contents({ tags: ['food', 'morning'] })).toEqual(['Likes green tea in the morning'])
    expect(await contents({ tags: ['food', 'office'] })).toEqual([])
    expect(await contents({ minImportance: 0.61 })).toEqual(['Likes green tea in the morning'])
    expect(
      await contents({ createdAfter: '2026-03-05T00:00:00Z', createdBefore: '2026-03-15T00:00:00Z' }),
    ).toEqual(['Likes green tea in the morning'])
    // What was true on 15 March: the old office.
    expect(await contents({ asOf: '2026-03-15T00:00:00Z' })).toEqual([
      'Likes green tea in the morning',
      'The office is in Leeds',
    ])
    expect((await contents({ includeSuperseded: true })).length).toBe(3)
    const page = await q({ includeSuperseded: true }, ', first: 2')
    expect(page.pageInfo.hasNextPage).toBe(true)
    const next = (
      await t.gql(
        `query($after: String) { memories(filter: { includeSuperseded: true }, first: 2, after: $after) { ... on QueryMemoriesConnection { edges { node { content } } pageInfo { hasNextPage } } } }`,
        { after: page.pageInfo.endCursor },
        k,
      )
    ).data.memories
    expect(next.edges.map((e: any) => e.node.content)).toEqual(['The office is in Leeds'])
    const tooBig = await t.gql(
      `{ memories(first: 201) { __typename ... on ValidationError { issues { field limit } } } }`,
      {},
      k,
    )
    expect(tooBig.data.memories.issues[0]).toMatchObject({ field: 'first', limit: '200' })
    const badFilter = await t.gql(
      `{ memories(filter: { minImportance: 2 }) { __typename ... on ValidationError { issues { field } } } }`,
      {},
      k,
    )
    expect(badFilter.data.memories.issues[0].field).toBe('filter.minImportance')
    const longFilters = await t.gql(
      `query($f: MemoryFilterInput) { memories(filter: $f) { __typename ... on ValidationError { issues { field limit } } } }`,
      { f: { search: 's'.repeat(2_001), tags: ['t'.repeat(65)], userId: 'u'.repeat(129) } },
      k,
    )
    expect(longFilters.data.memories.issues).toEqual([
      { field: 'filter.tags.0', limit: '64' },
      { field: 'filter.search', limit: '2000' },
      { field: 'filter.userId', limit: '128' },
    ])
    const atLimits = await t.gql(
      `query($f: MemoryFilterInput) { memories(filter: $f) { __typename } }`,
      { f: { search: 's'.repeat(2_000), tags: ['t'.repeat(64)], userId: 'u'.repeat(128) } },
      k,
    )
    expect(atLimits.data.memories.__typename).toBe('QueryMemoriesConnection')
    t.clock.set('2026-01-15T10:00:00Z')
  })

  it('reports statistics: counts per category, storage and embedding coverage', async () => {
    const stats = (
      await t.gql(
        `{ memoryStats { ... on MemoryStats { total current superseded pinned byCategory { category count } storageBytes vectorBytes embeddingModel embedded embeddingCoverage } } }`,
        {},
        other,
      )
    ).data.memoryStats
    expect(stats).toMatchObject({
      total: 0,
      current: 0,
      superseded: 0,
      storageBytes: 0,
      embeddingCoverage: 1,
    })
    await write({ content: 'Owns a green kayak', category: 'FACT' }, other)
    await write({ content: 'Wants to learn rust', category: 'COMMITMENT', pinned: true }, other)
    const after = (
      await t.gql(
        `{ memoryStats { ... on MemoryStats { total current pinned byCategory { category count } storageBytes vectorBytes embeddingModel embedded embeddingCoverage } } }`,
        {},
        other,
      )
    ).data.memoryStats
    expect(after).toMatchObject({
      total: 2,
      current: 2,
      pinned: 1,
      embeddingModel: 'test-table-v1',
      embedded: 2,
      embeddingCoverage: 1,
    })
    expect(after.byCategory.find((c: any) => c.category === 'FACT').count).toBe(1)
    expect(after.byCategory.find((c: any) => c.category === 'COMMITMENT').count).toBe(1)
    expect(after.byCategory).toHaveLength(9)
    // Two 512-dim float32 vectors plus the text.
    expect(after.vectorBytes).toBe(2 * 512 * 4)
    expect(after.storageBytes).toBeGreaterThan(after.vectorBytes)
  })

  it('updates and deletes, re-embedding changed content', async () => {
    const k = await createAgentKey(t, 'agent-edit')
    const m = (await write({ content: 'Uses vim keybindings', category: 'PREFERENCE' }, k)).memory
    const upd = await t.gql(
      `mutation($id: ID!) { updateMemory(input: { id: $id, content: "Uses emacs keybindings", importance: 0.95, tags: ["editor"] }) { ... on MemoryItem { content importance tags } } }`,
      { id: m.id },
      k,
    )
    expect(upd.data.updateMemory).toEqual({
      content: 'Uses emacs keybindings',
      importance: 0.95,
      tags: ['editor'],
    })
    // The old vector goes with the old text; the new one is the job queue's, off the request path.
    const where = { kind: 'memory', ownerId: Number(m.id) }
    expect(await t.db.embedding.count({ where })).toBe(0)
    await t.app.services.jobs.drain()
    const vectors = await t.db.embedding.findMany({ where })
    expect(vectors).toHaveLength(1)
    expect(vectors[0]?.contentHash).toBe(contentHash('Uses emacs keybindings'))
    const bad = await t.gql(
      `mutation($id: ID!) { updateMemory(input: { id: $id, importance: 1.5 }) { __typename ... on ValidationError { issues { field } } } }`,
      { id: m.id },
      k,
    )
    expect(bad.data.updateMemory.issues[0].field).toBe('importance')
    expect((await t.db.memoryItem.findUniqueOrThrow({ where: { id: Number(m.id) } })).importance).toBe(0.95)
    const del = await t.gql(
      `mutation($id: ID!) { deleteMemory(id: $id) { ... on MemoryItem { id } } }`,
      { id: m.id },
      k,
    )
    expect(del.data.deleteMemory.id).toBe(m.id)
    expect(await t.db.memoryItem.count({ where: { id: Number(m.id) } })).toBe(0)
    // Its vector went with it (trigger).
    expect(await t.db.embedding.count({ where: { kind: 'memory', ownerId: Number(m.id) } })).toBe(0)
    const gone = await t.gql(`mutation($id: ID!) { deleteMemory(id: $id) { __typename } }`, { id: m.id }, k)
    expect(gone.data.deleteMemory.__typename).toBe('NotFoundError')
  })

  it('rememberThis stores the statement without the request words, important, with an inferred category', async () => {
    const r = await t.gql(
      `mutation { rememberThis(input: { text: "Remember that I prefer the window seat on flights", conversationId: "trip-1" }) {
        ... on MemoryWrite { outcome memory { content category importance sourceConversationId metadata } } } }`,
      {},
      other,
    )
    expect(r.data.rememberThis).toEqual({
      outcome: 'STORED',
      memory: {
        content: 'I prefer the window seat on flights',
        category: 'PREFERENCE',
        importance: 0.8,
        sourceConversationId: 'trip-1',
        metadata: { via: 'rememberThis' },
      },
    })
  })

  it('guards memories for sensitive data by the agent policy', async () => {
    const k = await createAgentKey(t, 'agent-private')
    const redacted = await write({ content: 'My SSN is 123-45-6789', tags: ['id'] }, k)
    expect(redacted.memory.content).toBe('My SSN is [REDACTED:ssn]')
    await t.gql(`mutation { setPrivacyPolicy(agentId: "agent-private", mode: REJECT) { __typename } }`)
    const before = await t.db.memoryItem.count({ where: { agentId: 'agent-private' } })
    const rejected = await write({ content: 'Card 4111 1111 1111 1111 on file' }, k)
    expect(rejected.__typename).toBe('ValidationError')
    expect(rejected.issues[0].field).toBe('content')
    expect(rejected.issues[0].message).toMatch(/card/i)
    expect(await t.db.memoryItem.count({ where: { agentId: 'agent-private' } })).toBe(before)
  })
})

import { createTokenCounter } from '@engram/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_KEY, createAgentKey, createTestApp, type TestApp } from './helpers.ts'

// Spec 002's context builder through GraphQL (issue 17 §1): memoryContext's buildContext option,
// on the real store of the project (SQLite or Postgres).

const BUILT = `query($input: MemoryContextInput!) { memoryContext(input: $input) { __typename
  ... on MemoryContext { text cached built {
    messages { role content kind sourceId tokenCount }
    budget { total system tools output input memory }
    tokenCount
    memories { included overflowed summarized } } }
  ... on ValidationError { issues { field limit } }
  ... on Error { code message } } }`

const tokens = createTokenCounter('o200k_base')
const count = (text: string) => tokens.count(text)
const PREFIX = '[Previous context summary]: '

/** A long memory of sentences no other memory shares, so verification stores each. */
const longFact = (topic: string, sentences: number) =>
  Array.from({ length: sentences }, (_, i) => `The ${topic} note ${i} records ${topic}${i} carefully.`).join(
    ' ',
  )

async function remember(t: TestApp, key: string, input: Record<string, unknown>): Promise<string> {
  const r = await t.gql(
    `mutation($i: CreateMemoryInput!) { createMemory(input: $i) { ... on MemoryWrite { outcome memory { id } } } }`,
    { i: input },
    key,
  )
  expect(r.data.createMemory.outcome).toBe('STORED')
  return `memory:${r.data.createMemory.memory.id}`
}

describe('memoryContext with buildContext: spec 002’s whole prompt', () => {
  let t: TestApp
  let key: string
  let otherKey: string
  const ids: Record<string, string> = {}
  const build = async (input: Record<string, unknown>, asKey = key) =>
    (await t.gql(BUILT, { input }, asKey)).data.memoryContext

  beforeAll(async () => {
    t = await createTestApp()
    key = await createAgentKey(t, 'builder-a')
    otherKey = await createAgentKey(t, 'builder-b')
    ids.tea = await remember(t, key, {
      content: 'The user drinks jasmine tea every afternoon',
      category: 'PREFERENCE',
      importance: 0.8,
    })
    ids.city = await remember(t, key, {
      content: 'The user lives in Lisbon near the river',
      category: 'FACT',
    })
    for (const [role, content] of [
      ['USER', 'I am planning a trip to Porto next month'],
      ['ASSISTANT', 'Porto is lovely in spring; shall I look at trains?'],
    ])
      await t.gql(
        `mutation($r: Role!, $c: String!) { addMessage(input: { conversationId: "trip", role: $r, content: $c }) { __typename } }`,
        { r: role, c: content },
        key,
      )
    await remember(t, otherKey, {
      content: 'The other user drinks jasmine tea and is allergic to peanuts',
      category: 'FACT',
      importance: 1,
    })
  })
  afterAll(() => t.close())

  it('answers [instructions] + ranked memories and turns + the input within spec 002’s budget', async () => {
    const question = 'What tea should I pack for the Porto trip?'
    const c = await build({
      query: question,
      buildContext: { instructions: 'You are a travel assistant.', toolCount: 4 },
    })
    expect(c.__typename).toBe('MemoryContext')
    const input = count(question)
    expect(c.built.budget).toEqual({
      total: 128_000,
      system: 4_000,
      tools: 2_000,
      output: 4_000,
      input,
      memory: Math.floor(0.7 * (128_000 - 4_000 - 2_000 - 4_000 - input)),
    })
    const messages = c.built.messages
    expect(messages[0]).toEqual({
      role: 'SYSTEM',
      content: 'You are a travel assistant.',
      kind: 'INSTRUCTIONS',
      sourceId: null,
      tokenCount: count('You are a travel assistant.'),
    })
    expect(messages.at(-1)).toMatchObject({ role: 'USER', content: question, kind: 'INPUT', sourceId: null })
    const shown = messages.filter((m: { kind: string }) => m.kind === 'MEMORY' || m.kind === 'TURN')
    expect(shown.map((m: { sourceId: string }) => m.sourceId)).toEqual(c.built.memories.included)
    expect(c.built.memories.included).toEqual(expect.arrayContaining([ids.tea, ids.city]))
    expect(c.built.memories.included).toHaveLength(4)
    expect(shown.find((m: { sourceId: string }) => m.sourceId === ids.tea)).toMatchObject({
      role: 'SYSTEM',
      kind: 'MEMORY',
      content: '[Memory] The user drinks jasmine tea every afternoon',
    })
    expect(shown.find((m: { content: string }) => m.content.startsWith('Porto is lovely'))).toMatchObject({
      role: 'ASSISTANT',
      kind: 'TURN',
    })
    expect(c.built.memories.overflowed).toEqual([])
    expect(c.built.tokenCount).toBe(
      messages.reduce((sum: number, m: { content: string }) => sum + count(m.content), 0),
    )
    // Another agent's memory never enters, though it matches the question best.
    expect(JSON.stringify(c.built)).not.toContain('peanuts')
  })

  it('leaves memoryContext as it was without the option, and caches the built prompt with it', async () => {
    const plain = await build({ query: 'jasmine tea' })
    expect(plain.built).toBeNull()
    const first = await build({ query: 'jasmine tea', buildContext: { toolCount: 1 } })
    const again = await build({ query: 'jasmine tea', buildContext: { toolCount: 1 } })
    expect(first.cached).toBe(false)
    expect(again.cached).toBe(true)
    expect(again.built).toEqual(first.built)
    expect(first.text).toBe(plain.text)
    // The input may be given apart from the query.
    const input = await build({
      query: 'jasmine tea',
      buildContext: { currentInput: 'Anything about rivers?' },
    })
    expect(input.built.messages.at(-1).content).toBe('Anything about rivers?')
  })

  it('refuses bad options with a typed VALIDATION naming buildContext.<field> and the limit', async () => {
    // GraphQL carries a limit as a string (a number, or a range such as 0..1).
    const issues = async (input: Record<string, unknown>) => {
      const c = await build(input)
      expect(c.__typename).toBe('ValidationError')
      return c.issues
    }
    expect(await issues({ buildContext: { toolCount: 1 } })).toEqual([
      expect.objectContaining({ field: 'buildContext.currentInput' }),
    ])
    expect(await issues({ query: 'q', buildContext: { candidateLimit: 101 } })).toEqual([
      { field: 'buildContext.candidateLimit', limit: '100' },
    ])
    expect(await issues({ query: 'q', buildContext: { contextWindow: 999 } })).toEqual([
      { field: 'buildContext.contextWindow', limit: '1000' },
    ])
    expect(await issues({ query: 'q', buildContext: { weights: { similarity: 1.5 } } })).toEqual([
      { field: 'buildContext.weights.similarity', limit: '1' },
    ])
    expect(await issues({ query: 'q', buildContext: { instructions: 'x'.repeat(100_001) } })).toEqual([
      { field: 'buildContext.instructions', limit: '100000' },
    ])
    // 1,000 tokens do not hold 2 tools beside the reserves and the input: the window is named
    // with the smallest that would.
    expect(await issues({ query: 'q', buildContext: { contextWindow: 1_000, toolCount: 2 } })).toEqual([
      { field: 'buildContext.contextWindow', limit: String(50 + 1_000 + 100 + count('q')) },
    ])
  })

  it('never builds from another agent’s memories: its key cannot name another agent', async () => {
    const c = await build({ agentId: 'builder-b', query: 'tea', buildContext: {} }, key)
    expect(c.__typename).not.toBe('MemoryContext')
    expect(JSON.stringify(c)).not.toContain('peanuts')
    // The operator names the agent; B's prompt has B's memory and none of A's.
    const theirs = await build({ agentId: 'builder-b', query: 'tea', buildContext: {} }, ADMIN_KEY)
    expect(JSON.stringify(theirs.built.messages)).toContain('peanuts')
    expect(JSON.stringify(theirs.built.messages)).not.toContain('Lisbon')
  })
})

describe('the overflow edge on the real store', () => {
  let t: TestApp
  let key: string
  beforeAll(async () => {
    // Reserves off and everything left for memory, ranked by importance alone: the memory budget
    // is the window minus the input, and the order is known.
    t = await createTestApp({
      env: {
        ENGRAM_CONTEXT_BUILDER_RULES: {
          systemReserveShare: 0,
          outputReserveShare: 0,
          memoryShare: 1,
          weights: { recency: 0, similarity: 0, importance: 1 },
        },
      },
    })
    key = await createAgentKey(t, 'builder-edge')
  })
  afterAll(() => t.close())

  it('includes a memory that fits exactly, overflows the next, and summarises the overflow when that fits', async () => {
    const facts = ['alpha', 'bravo', 'charlie'].map((topic) => longFact(topic, 60))
    const [first, second, third] = [
      await remember(t, key, { content: facts[0], category: 'FACT', importance: 0.9 }),
      await remember(t, key, { content: facts[1], category: 'CONTEXT', importance: 0.8 }),
      await remember(t, key, { content: facts[2], category: 'SKILL', importance: 0.7 }),
    ]
    const question = 'Which notes do you hold?'
    const exact = count(`[Memory] ${facts[0]}`) + count(`[Memory] ${facts[1]}`)
    const built = async (memory: number) =>
      (
        await t.gql(
          BUILT,
          { input: { query: question, buildContext: { contextWindow: memory + count(question) } } },
          key,
        )
      ).data.memoryContext.built

    const atEdge = await built(exact)
    expect(atEdge.budget.memory).toBe(exact)
    expect(atEdge.memories).toEqual({ included: [first, second], overflowed: [third], summarized: [] })
    expect(atEdge.messages.map((m: { kind: string }) => m.kind)).toEqual(['MEMORY', 'MEMORY', 'INPUT'])

    const under = await built(exact - 1)
    expect(under.memories).toEqual({
      included: [first],
      overflowed: [second, third],
      summarized: [second, third],
    })
    const summary = under.messages.find((m: { kind: string }) => m.kind === 'SUMMARY')
    expect(summary.role).toBe('SYSTEM')
    expect(summary.content.startsWith(PREFIX)).toBe(true)
    expect(summary.content).toContain('bravo')
    expect(summary.tokenCount).toBe(count(summary.content))
    const memoryTokens = under.messages
      .filter((m: { kind: string }) => m.kind !== 'INPUT')
      .reduce((sum: number, m: { tokenCount: number }) => sum + m.tokenCount, 0)
    expect(memoryTokens).toBeLessThanOrEqual(exact - 1)
  })
})

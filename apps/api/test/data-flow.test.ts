import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

// The spec's "Data Flow Example", step by step, through GraphQL only.
describe('spec 000 data flow, end to end', () => {
  let t: TestApp
  let key: string
  const now = new Date('2026-01-15T10:00:00.000Z')
  const minutesAgo = (m: number) => new Date(now.getTime() - m * 60_000).toISOString()
  const daysAgo = (d: number) => new Date(now.getTime() - d * 86_400_000).toISOString()

  beforeAll(async () => {
    t = await createTestApp()
    t.clock.set(now)
    key = await createAgentKey(t, 'browser-agent')
  })
  afterAll(() => t.close())

  const ADD = `mutation($input: AddMessageInput!) {
    addMessage(input: $input) { __typename ... on Message { id role content tokenCount timestamp } ... on Error { message } }
  }`

  it('steps 1-4: stores the instruction, responses and tool results as short-term entries', async () => {
    const first = await t.gql(
      ADD,
      {
        input: {
          conversationId: 'task-1',
          role: 'USER',
          content: 'Navigate to example.com and extract the title.',
          timestamp: daysAgo(2),
        },
      },
      key,
    )
    expect(first.data.addMessage).toMatchObject({ __typename: 'Message', role: 'USER' })
    expect(first.data.addMessage.tokenCount).toBeGreaterThan(5)

    // 19 more: chatter from two days ago, a repeated status line, and fresh tool results with facts.
    const history = [
      { role: 'ASSISTANT', content: 'ok', timestamp: daysAgo(2) },
      { role: 'ASSISTANT', content: 'navigating...', timestamp: daysAgo(2) },
      {
        role: 'ASSISTANT',
        content: 'Opening the browser window and waiting for the page to load completely now',
        timestamp: daysAgo(2),
      },
      {
        role: 'ASSISTANT',
        content: 'Opening the browser window and waiting for the page to load completely now',
        timestamp: daysAgo(2),
      },
      { role: 'USER', content: 'sure', timestamp: daysAgo(2) },
      ...Array.from({ length: 11 }, (_, i) => ({
        role: 'ASSISTANT',
        content: `Progress note ${i}: still working through the page structure and its layout`,
        timestamp: minutesAgo(50 - i),
      })),
      {
        role: 'TOOL',
        content: 'navigate(https://example.com) -> 200 OK; title selector: #page-title',
        timestamp: minutesAgo(5),
      },
      {
        role: 'TOOL',
        content: 'extract(selector: "#page-title") -> "Example Domain"',
        timestamp: minutesAgo(4),
      },
      {
        role: 'ASSISTANT',
        content: 'The title of https://example.com is "Example Domain".',
        timestamp: minutesAgo(3),
      },
    ]
    const batch = await t.gql(
      `mutation($input: AddMessagesInput!) { addMessages(input: $input) { __typename ... on AddMessagesPayload { session { messageCount } messages { id } } ... on Error { message } } }`,
      { input: { conversationId: 'task-1', messages: history } },
      key,
    )
    expect(batch.data.addMessages.session.messageCount).toBe(20)

    const entries = await t.gql(
      `{ memoryEntries(first: 100) { ... on QueryMemoryEntriesConnection { edges { node { type role } } } } }`,
      {},
      key,
    )
    const nodes = entries.data.memoryEntries.edges.map((e: any) => e.node)
    expect(nodes).toHaveLength(20)
    expect(nodes.every((n: any) => n.type === 'SHORT_TERM')).toBe(true)
    expect(nodes.filter((n: any) => n.role === 'TOOL')).toHaveLength(2)
  })

  it('steps 5-8: the optimizer compresses low-relevance and redundant entries and promotes facts', async () => {
    const run = await t.gql(
      `mutation { runOptimizer { __typename ... on OptimizationSnapshot { tokensBefore tokensAfter entriesCompressed entriesDropped entriesPromoted } ... on Error { message } } }`,
      {},
      key,
    )
    const snapshot = run.data.runOptimizer
    expect(snapshot.__typename).toBe('OptimizationSnapshot')
    expect(snapshot.entriesPromoted).toBeGreaterThanOrEqual(2)
    expect(snapshot.entriesCompressed).toBeGreaterThanOrEqual(3)

    const entries = await t.gql(
      `{ memoryEntries(first: 100, order: OLDEST_FIRST) { ... on QueryMemoryEntriesConnection { edges { node { type content isCompressed relevance } } } } }`,
      {},
      key,
    )
    const nodes = entries.data.memoryEntries.edges.map((e: any) => e.node)
    const byContent = (text: string) => nodes.filter((n: any) => n.content.startsWith(text))
    expect(byContent('ok')[0].isCompressed).toBe(true) // step 6: low relevance
    expect(byContent('navigating...')[0].isCompressed).toBe(true)
    const repeated = byContent('Opening the browser window')
    expect(repeated.map((n: any) => n.isCompressed)).toEqual([true, false]) // step 7: older duplicate
    const promoted = nodes.filter((n: any) => n.type === 'LONG_TERM')
    expect(promoted.some((n: any) => n.content.includes('#page-title'))).toBe(true) // step 8
    expect(promoted.every((n: any) => n.relevance === 1)).toBe(true)
  })

  it('step 9: what the agent learned is stored as website knowledge', async () => {
    const stored = await t.gql(
      `mutation($input: StoreKnowledgeInput!) { storeKnowledge(input: $input) { __typename ... on Knowledge { id category confidence } ... on Error { message } } }`,
      {
        input: {
          category: 'WEBSITE_KNOWLEDGE',
          key: 'example.com title selector',
          value: 'example.com uses #page-title for its title',
        },
      },
      key,
    )
    expect(stored.data.storeKnowledge).toMatchObject({ category: 'WEBSITE_KNOWLEDGE', confidence: 0.5 })
  })

  it('step 10: the next session on example.com retrieves that knowledge for its context', async () => {
    await t.gql(
      ADD,
      {
        input: { conversationId: 'task-2', role: 'USER', content: 'Open example.com and read the headline' },
      },
      key,
    )
    const found = await t.gql(
      `query($text: String!) { relevantKnowledge(text: $text) { __typename ... on RelevantKnowledge { matches { score knowledge { id value } } } } }`,
      { text: 'Open example.com and read the headline' },
      key,
    )
    const matches = found.data.relevantKnowledge.matches
    expect(matches[0].knowledge.value).toBe('example.com uses #page-title for its title')
    const used = await t.gql(
      `mutation($id: ID!) { recordKnowledgeUse(id: $id) { ... on Knowledge { confidence useCount } } }`,
      { id: matches[0].knowledge.id },
      key,
    )
    expect(used.data.recordKnowledgeUse).toEqual({ confidence: 0.55, useCount: 1 })
    const unrelated = await t.gql(
      `query { relevantKnowledge(text: "book a table at a restaurant") { ... on RelevantKnowledge { matches { score } } } }`,
      {},
      key,
    )
    expect(unrelated.data.relevantKnowledge.matches).toEqual([])
  })

  it('the context window of the task is what the agent sends to its LLM', async () => {
    const window = await t.gql(
      `{ contextWindow(conversationId: "task-1") { __typename ... on ContextWindow { full { content } compressed { content } dropped { id } totalTokens availableBudget underPressure } } }`,
      {},
      key,
    )
    expect(window.data.contextWindow).toMatchObject({
      availableBudget: 190_904,
      underPressure: false,
      compressed: [],
      dropped: [],
    })
    expect(window.data.contextWindow.full).toHaveLength(20)
  })
})

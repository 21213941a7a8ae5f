import {
  type Clock,
  createTokenCounter,
  DEFAULT_CONTEXT_BUILDER_RULES,
  type LlmProvider,
  PREVIOUS_CONTEXT_SUMMARY_PREFIX,
  type Role,
  type StoredMessage,
  ValidationError,
} from '@engram/core'
import { describe, expect, it } from 'vitest'
import { createEngine, type EngineDeps } from '../engine.ts'
import { createInMemoryStorage } from '../testing/index.ts'
import { scriptedLlm } from '../testing/scripted-llm.ts'

let tick = Date.parse('2026-03-02T09:00:00.000Z')
// Each reading a second later, so stored memories and turns have distinct times.
const clock: Clock = {
  now: () => {
    tick += 1_000
    return new Date(tick)
  },
}
const tokenCounter = createTokenCounter()
const count = (text: string) => tokenCounter.count(text)

// Reserves off and all of what is left for memory: the memory budget is exactly the window minus
// the input, so a test can make it any size it needs.
const EXACT = { systemReserveShare: 0, outputReserveShare: 0, memoryShare: 1 }
// Importance alone ranks: the order of the memories is the order of their importance.
const BY_IMPORTANCE = { recency: 0, similarity: 0, importance: 1 }

async function setUp(options: { contextBuilder?: EngineDeps['contextBuilder']; llm?: LlmProvider } = {}) {
  const storage = createInMemoryStorage(clock)
  const engine = createEngine({
    storage,
    clock,
    tokenCounter,
    log: { ...console, info: () => {} },
    automaticProfile: false,
    automaticGraph: false,
    automaticSummaries: false,
    ...options,
  })
  for (const agent of ['agent-a', 'agent-b']) await storage.repositories.agents.upsert(agent, null)
  // Search reads the in-memory store's recall rows and full-text index, which a test fills (the
  // SQLite and Postgres stores fill theirs on write: apps/api's memory-context-builder test).
  let nextId = 1
  const remember = (agentId: string, content: string, importance: number) => {
    const id = String(nextId++)
    const at = clock.now()
    storage.recall.addMemoryItem({
      id,
      agentId,
      userId: null,
      content,
      category: 'fact',
      tags: [],
      importance,
      confidence: 1,
      pinned: false,
      sourceConversationId: null,
      sourceMessageId: null,
      accessCount: 0,
      lastAccessedAt: null,
      validFrom: at,
      validUntil: null,
      supersededById: null,
      metadata: {},
      tokenCount: count(content),
      createdAt: at,
      updatedAt: at,
    })
    storage.fullText.index('memories', [{ id, agentId, text: content }])
    engine.writes.touch(agentId)
    return `memory:${id}`
  }
  const say = (agentId: string, conversationId: string, turns: [Role, string][]) =>
    turns.map(([role, content]) => {
      const id = String(nextId++)
      const message: StoredMessage = {
        id,
        sessionId: `${agentId}/${conversationId}`,
        role,
        speaker: null,
        content,
        tokenCount: count(content),
        isCompressed: false,
        timestamp: clock.now(),
        metadata: {},
      }
      storage.recall.addTurn(agentId, conversationId, message)
      storage.fullText.index('messages', [{ id, agentId, text: content, sessionId: message.sessionId }])
      engine.writes.touch(agentId)
      return `message:${id}`
    })
  return { engine, remember, say }
}

/** A long memory of sentences no other memory shares (each sentence one the summary may keep). */
const longFact = (topic: string, sentences: number) =>
  Array.from({ length: sentences }, (_, i) => `The ${topic} note ${i} records ${topic}${i} carefully.`).join(
    ' ',
  )

describe('memoryContext’s buildContext option (spec 002’s context builder)', () => {
  it('builds [instructions] + ranked memories + the input, within spec 002’s budget', async () => {
    const { engine, remember, say } = await setUp()
    remember('agent-a', 'The user drinks green tea every morning.', 0.9)
    remember('agent-a', 'The user lives in Lisbon near the river.', 0.6)
    say('agent-a', 'chat-1', [
      ['user', 'I am planning a trip to Porto next month.'],
      ['assistant', 'Porto is lovely in spring; shall I look at trains?'],
    ])
    const result = await engine.context.build('agent-a', {
      query: 'What should I drink before the trip?',
      buildContext: { instructions: 'You are a helpful travel assistant.', toolCount: 2 },
    })
    const built = result.built
    if (!built) throw new Error('built is missing')
    const input = count('What should I drink before the trip?')
    expect(built.budget).toEqual({
      total: 128_000,
      system: 4_000,
      tools: 1_000,
      output: 4_000,
      input,
      memory: Math.floor(0.7 * (128_000 - 4_000 - 1_000 - 4_000 - input)),
    })
    expect(built.messages[0]).toEqual({
      role: 'system',
      content: 'You are a helpful travel assistant.',
      kind: 'instructions',
      sourceId: null,
      tokenCount: count('You are a helpful travel assistant.'),
    })
    expect(built.messages.at(-1)).toMatchObject({
      role: 'user',
      content: 'What should I drink before the trip?',
      kind: 'input',
    })
    const shown = built.messages.filter((m) => m.kind === 'memory' || m.kind === 'turn')
    // Everything fits a 128K window: both memories and both stored turns, nothing overflowed.
    expect(shown.map((m) => m.sourceId)).toEqual(built.memories.included)
    expect(built.memories.included).toHaveLength(4)
    expect(built.memories.overflowed).toEqual([])
    expect(built.memories.summarized).toEqual([])
    expect(shown.find((m) => m.content === '[Memory] The user drinks green tea every morning.')?.role).toBe(
      'system',
    )
    expect(shown.find((m) => m.content.startsWith('Porto is lovely'))?.role).toBe('assistant')
    expect(shown.find((m) => m.content.startsWith('I am planning'))?.role).toBe('user')
    expect(built.tokenCount).toBe(built.messages.reduce((sum, m) => sum + count(m.content), 0))
    // The sections are what they were without the option.
    const plain = await engine.context.build('agent-a', { query: 'What should I drink before the trip?' })
    expect(plain.built).toBeUndefined()
    expect(plain.text).toBe(result.text)
  })

  it('includes a memory that fits exactly and overflows the next; a summary only when it fits too', async () => {
    const { engine, remember } = await setUp({ contextBuilder: { ...EXACT, weights: BY_IMPORTANCE } })
    const first = remember('agent-a', longFact('alpha', 60), 0.9)
    const second = remember('agent-a', longFact('bravo', 60), 0.8)
    const third = remember('agent-a', longFact('charlie', 60), 0.7)
    const question = 'Which facts do you hold?'
    const tokens = (fact: string) => count(`[Memory] ${fact}`)
    const exact = tokens(longFact('alpha', 60)) + tokens(longFact('bravo', 60))
    const build = (memory: number) =>
      engine.context.build('agent-a', {
        query: question,
        buildContext: { contextWindow: memory + count(question) },
      })

    // The first two fill the memory budget exactly: the third overflows, with no room for a summary.
    const atEdge = (await build(exact)).built
    expect(atEdge?.budget.memory).toBe(exact)
    expect(atEdge?.memories).toEqual({ included: [first, second], overflowed: [third], summarized: [] })
    expect(atEdge?.messages.map((m) => m.kind)).toEqual(['memory', 'memory', 'input'])

    // One token less: the second overflows too, and what it leaves holds their summary.
    const under = (await build(exact - 1)).built
    expect(under?.memories).toEqual({
      included: [first],
      overflowed: [second, third],
      summarized: [second, third],
    })
    const summary = under?.messages.find((m) => m.kind === 'summary')
    expect(summary?.role).toBe('system')
    expect(summary?.content.startsWith(PREVIOUS_CONTEXT_SUMMARY_PREFIX)).toBe(true)
    // The offline summary of what overflowed: their words, not the first memory's.
    expect(summary?.content).toContain('bravo')
    expect(summary?.content).not.toContain('alpha0')
    const memoryTokens = (under?.messages ?? [])
      .filter((m) => m.kind !== 'input')
      .reduce((sum, m) => sum + m.tokenCount, 0)
    expect(memoryTokens).toBeLessThanOrEqual(exact - 1)
    expect(under?.messages.map((m) => m.kind)).toEqual(['memory', 'summary', 'input'])
  })

  it('writes the overflow summary with the language model when one is configured', async () => {
    const { llm, requests } = scriptedLlm(() =>
      JSON.stringify({ summary: 'Bravo and Charlie facts were noted.' }),
    )
    const { engine, remember } = await setUp({ contextBuilder: { ...EXACT, weights: BY_IMPORTANCE }, llm })
    remember('agent-a', longFact('alpha', 120), 0.9)
    remember('agent-a', longFact('bravo', 120), 0.8)
    const question = 'Which facts do you hold?'
    const window = count(`[Memory] ${longFact('alpha', 120)}`) + 100 + count(question)
    const built = (
      await engine.context.build('agent-a', { query: question, buildContext: { contextWindow: window } })
    ).built
    expect(built?.messages.find((m) => m.kind === 'summary')?.content).toBe(
      `${PREVIOUS_CONTEXT_SUMMARY_PREFIX}Bravo and Charlie facts were noted.`,
    )
    expect(JSON.stringify(requests.at(-1)?.messages)).toContain('bravo1')
  })

  it('ranks by the weights asked for: importance first, or the newest first', async () => {
    const { engine, remember } = await setUp()
    const old = remember('agent-a', 'The user’s passport number ends in 42.', 1)
    const recent = remember('agent-a', 'The user bought a red bicycle.', 0.1)
    const ranked = async (weights: object) =>
      (await engine.context.build('agent-a', { query: 'tell me', buildContext: { weights } })).built?.memories
        .included
    expect(await ranked({ recency: 0, similarity: 0, importance: 1 })).toEqual([old, recent])
    expect(await ranked({ recency: 1, similarity: 0, importance: 0 })).toEqual([recent, old])
  })

  it('never shows another agent’s memories or turns', async () => {
    const { engine, remember } = await setUp()
    remember('agent-b', 'Agent B’s user is allergic to peanuts.', 1)
    await engine.sessions.addMessages('agent-b', 'b-chat', [
      { role: 'user', content: 'peanuts are dangerous for me' },
    ])
    const mine = remember('agent-a', 'Agent A’s user likes peanuts in salads.', 0.5)
    const built = (await engine.context.build('agent-a', { query: 'peanuts', buildContext: {} })).built
    expect(built?.memories.included).toEqual([mine])
    expect(JSON.stringify(built?.messages)).not.toContain('allergic')
    expect(JSON.stringify(built?.messages)).not.toContain('dangerous')
  })

  it('refuses bad options before reading anything, naming buildContext.<field> and the limit', async () => {
    const { engine } = await setUp()
    const issues = async (request: Parameters<typeof engine.context.build>[1]) => {
      const error = await engine.context.build('agent-a', request).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(ValidationError)
      return (error as ValidationError).issues
    }
    expect(await issues({ buildContext: {} })).toEqual([
      expect.objectContaining({ field: 'buildContext.currentInput' }),
    ])
    expect(await issues({ query: 'q', buildContext: { candidateLimit: 101 } })).toEqual([
      expect.objectContaining({ field: 'buildContext.candidateLimit', limit: 100 }),
    ])
    expect(
      await issues({ query: 'q', buildContext: { toolCount: 1_001, weights: { importance: 2 } } }),
    ).toEqual([
      expect.objectContaining({ field: 'buildContext.toolCount', limit: 1_000 }),
      expect.objectContaining({ field: 'buildContext.weights.importance', limit: 1 }),
    ])
    // 1,000 tokens cannot hold 3 tools (1,500) beside the reserves (system 5%, output 10%) and the input.
    expect(await issues({ query: 'q', buildContext: { contextWindow: 1_000, toolCount: 3 } })).toEqual([
      expect.objectContaining({ field: 'buildContext.contextWindow', limit: 50 + 1_500 + 100 + count('q') }),
    ])
  })

  it('takes the server’s rules and checks them at start-up', () => {
    expect(() =>
      createEngine({
        storage: createInMemoryStorage(clock),
        clock,
        tokenCounter,
        contextBuilder: { contextWindow: 10 },
      }),
    ).toThrow(/contextBuilder\.contextWindow/)
    expect(DEFAULT_CONTEXT_BUILDER_RULES.contextWindow).toBe(128_000)
  })
})

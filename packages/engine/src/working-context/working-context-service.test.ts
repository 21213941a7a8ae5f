import { type Clock, createTokenCounter, type TokenCounter, type WorkingContextRules } from '@engram/core'
import { describe, expect, it } from 'vitest'
import { createEngine } from '../engine.ts'
import type { Telemetry } from '../ports/telemetry.ts'
import { createInMemoryStorage, InMemoryWorkingContextStore } from '../testing/index.ts'

// One token per word, so the flush edge is written down exactly.
const words: TokenCounter = { name: 'o200k_base', count: (text) => text.split(/\s+/).filter(Boolean).length }
const text = (tokens: number) => Array.from({ length: tokens }, () => 'w').join(' ')

function movableClock(start = '2026-03-01T09:00:00.000Z') {
  let now = new Date(start).getTime()
  const clock: Clock & { advance(ms: number): void } = {
    now: () => new Date(now),
    advance: (ms) => {
      now += ms
    },
  }
  return clock
}

function recordingTelemetry() {
  const lookups: [string, boolean][] = []
  const flushes: [string, number][] = []
  const telemetry: Telemetry = {
    cacheLookup: (cache, hit) => lookups.push([cache, hit]),
    searchObserved() {},
    tokensSaved() {},
    jobFinished() {},
    workingContextFlushed: (reason, tokens) => flushes.push([reason, tokens]),
  }
  return { telemetry, lookups, flushes }
}

function engineWith(
  options: {
    clock?: ReturnType<typeof movableClock>
    rules?: Partial<WorkingContextRules>
    store?: InMemoryWorkingContextStore
    tokenCounter?: TokenCounter
    telemetry?: Telemetry
  } = {},
) {
  const clock = options.clock ?? movableClock()
  const storage = createInMemoryStorage(clock)
  const engine = createEngine({
    storage,
    clock,
    tokenCounter: options.tokenCounter ?? words,
    log: { info() {}, warn() {}, error() {} } as never,
    automaticSummaries: false,
    automaticProfile: false,
    automaticGraph: false,
    formation: { automatic: false },
    workingContext: { rules: options.rules ?? {}, store: options.store ?? null },
    ...(options.telemetry ? { telemetry: options.telemetry } : {}),
  })
  return { engine, clock, storage }
}

async function storedContents(
  engine: ReturnType<typeof engineWith>['engine'],
  agentId: string,
  conversationId: string,
) {
  const session = await engine.storage.sessions.findSession(agentId, conversationId)
  if (!session) return []
  const messages = await engine.storage.history.messages(session.id, false, {
    range: {},
    direction: 'asc',
    take: 1000,
  })
  return messages.map((m) => [m.role, m.content, m.speaker])
}

describe('the working context (spec 002’s L1)', () => {
  it('holds messages, tool results and a scratchpad with their token count', async () => {
    const { engine } = engineWith({ tokenCounter: createTokenCounter() })
    const wc = engine.workingContext
    await wc.append('a', [{ role: 'user', content: 'Book a table for two' }], 'chat-1')
    await wc.recordToolResult('a', { toolCallId: 'call-1', name: 'find_restaurant', content: 'Luigi, 8pm' })
    const context = await wc.setScratchpad('a', 'prefer Italian')
    const counter = createTokenCounter()
    expect(context.tokenCount).toBe(
      counter.count('Book a table for two') + counter.count('Luigi, 8pm') + counter.count('prefer Italian'),
    )
    expect(context.toolResults[0]).toMatchObject({ toolCallId: 'call-1', conversationId: 'chat-1' })
    expect((await wc.get('b')).messages).toEqual([])
  })

  it('does not flush at exactly 32,000 tokens, flushes at 32,001 into the stored conversation, and keeps the scratchpad', async () => {
    const { telemetry, flushes } = recordingTelemetry()
    const { engine } = engineWith({ telemetry })
    const wc = engine.workingContext
    await wc.setScratchpad('a', 'three word plan')
    await wc.recordToolResult('a', { toolCallId: 'k', name: 'calc', content: '42' })
    const at = await wc.append('a', [{ role: 'user', content: text(31_996) }], 'chat-1')
    expect(at.context.tokenCount).toBe(32_000)
    expect(at.flush).toBeNull()
    expect(await storedContents(engine, 'a', 'chat-1')).toEqual([])
    expect(flushes).toEqual([])
    const over = await wc.append('a', [{ role: 'assistant', content: 'done', name: 'bot' }], 'chat-1')
    expect(over.flush).toMatchObject({
      reason: 'threshold',
      messages: 3,
      toolResults: 1,
      tokens: 1 + 31_996 + 1,
    })
    expect(over.context).toMatchObject({
      messages: [],
      toolResults: [],
      scratchpad: 'three word plan',
      tokenCount: 3,
    })
    // The tool result was recorded before any append named a conversation: the default one.
    expect(await storedContents(engine, 'a', 'working-context')).toEqual([['tool', '42', 'calc']])
    expect(await storedContents(engine, 'a', 'chat-1')).toEqual([
      ['user', text(31_996), null],
      ['assistant', 'done', 'bot'],
    ])
    expect(flushes).toEqual([['threshold', 31_998]])
  })

  it('flushes on request into the configured default conversation, and clears without storing', async () => {
    const { telemetry, flushes } = recordingTelemetry()
    const { engine } = engineWith({ telemetry, rules: { defaultConversationId: 'scratch' } })
    const wc = engine.workingContext
    await wc.append('a', [{ role: 'user', content: 'hello there' }])
    const flushed = await wc.flush('a', 'request')
    expect(flushed.flush).toMatchObject({ reason: 'request', messages: 1, conversationIds: ['scratch'] })
    expect(await storedContents(engine, 'a', 'scratch')).toEqual([['user', 'hello there', null]])
    expect((await wc.flush('a', 'request')).flush).toBeNull()
    await wc.append('a', [{ role: 'user', content: 'forget me' }])
    await wc.setScratchpad('a', 'gone too')
    expect(await wc.clear('a')).toMatchObject({ messages: [], scratchpad: '', tokenCount: 0 })
    expect((await wc.get('a')).messages).toEqual([])
    expect(await storedContents(engine, 'a', 'scratch')).toEqual([['user', 'hello there', null]])
    expect(flushes).toEqual([['request', 2]])
  })

  it('expires 30 minutes after the last write, on the injected clock, each write refreshing it', async () => {
    const clock = movableClock()
    const { engine } = engineWith({ clock })
    const wc = engine.workingContext
    await wc.append('a', [{ role: 'user', content: 'one' }])
    clock.advance(29 * 60_000)
    await wc.append('a', [{ role: 'user', content: 'two' }])
    clock.advance(29 * 60_000)
    const held = await wc.get('a')
    expect(held.messages.map((m) => m.content)).toEqual(['one', 'two'])
    expect(held.expiresAt).toBe(new Date(clock.now().getTime() + 60_000).toISOString())
    clock.advance(60_000)
    expect((await wc.get('a')).messages).toHaveLength(2)
    clock.advance(1)
    expect((await wc.get('a')).messages).toEqual([])
  })

  it('keeps at most maxAgents contexts, dropping the least recently used', async () => {
    const { engine } = engineWith({ rules: { maxAgents: 2 } })
    const wc = engine.workingContext
    await wc.append('a', [{ role: 'user', content: 'a' }])
    await wc.append('b', [{ role: 'user', content: 'b' }])
    await wc.get('a')
    await wc.append('c', [{ role: 'user', content: 'c' }])
    expect(wc.held('a')).toBe(1)
    expect(wc.held('b')).toBe(0)
    expect(wc.stats().agents).toBe(2)
  })

  it('loses no concurrent append within one process', async () => {
    const { engine } = engineWith()
    const wc = engine.workingContext
    await Promise.all(
      Array.from({ length: 20 }, (_, i) => wc.append('a', [{ role: 'user', content: `m${i}` }])),
    )
    expect((await wc.get('a')).messages).toHaveLength(20)
  })
})

describe('the working context shared by replicas', () => {
  it('lets two engines on one store append at once without losing a message, and read each other’s writes', async () => {
    const clock = movableClock()
    const store = new InMemoryWorkingContextStore(clock)
    const one = engineWith({ clock, store }).engine.workingContext
    const two = engineWith({ clock, store }).engine.workingContext
    await one.get('a')
    await Promise.all(
      Array.from({ length: 10 }, (_, i) => [
        one.append('a', [{ role: 'user', content: `one-${i}` }]),
        two.append('a', [{ role: 'user', content: `two-${i}` }]),
      ]).flat(),
    )
    expect(store.refusedWrites).toBeGreaterThan(0)
    const seen = (await one.get('a')).messages.map((m) => m.content).sort()
    expect(seen).toHaveLength(20)
    expect((await two.get('a')).messages.map((m) => m.content).sort()).toEqual(seen)
    await two.setScratchpad('a', 'from two')
    expect((await one.get('a')).scratchpad).toBe('from two')
  })

  it('reports L1 lookups as hits while this replica’s copy is current', async () => {
    const clock = movableClock()
    const store = new InMemoryWorkingContextStore(clock)
    const { telemetry, lookups } = recordingTelemetry()
    const one = engineWith({ clock, store, telemetry }).engine.workingContext
    const two = engineWith({ clock, store }).engine.workingContext
    await one.append('a', [{ role: 'user', content: 'x' }])
    lookups.length = 0
    await one.get('a')
    await two.append('a', [{ role: 'user', content: 'y' }])
    await one.get('a')
    expect(lookups).toEqual([
      ['working_context', true],
      ['working_context', false],
    ])
  })

  it('flushes each message once when two replicas flush at once', async () => {
    const clock = movableClock()
    const store = new InMemoryWorkingContextStore(clock)
    const first = engineWith({ clock, store })
    const second = engineWith({ clock, store })
    // Both replicas write to one database in production; here each its own, so count across both.
    await first.engine.workingContext.append('a', [{ role: 'user', content: 'only once' }], 'c')
    await Promise.all([
      first.engine.workingContext.flush('a', 'request'),
      second.engine.workingContext.flush('a', 'request'),
    ])
    const stored = [
      ...(await storedContents(first.engine, 'a', 'c')),
      ...(await storedContents(second.engine, 'a', 'c')),
    ]
    expect(stored).toEqual([['user', 'only once', null]])
  })
})

describe('a flush the store refuses', () => {
  it('puts the messages back and raises the error', async () => {
    const { engine } = engineWith()
    const wc = engine.workingContext
    await wc.append('a', [{ role: 'user', content: 'keep me' }], 'c')
    // A conversation id the stored conversation refuses makes its write fail after the take.
    const original = engine.sessions.addMessages.bind(engine.sessions)
    engine.sessions.addMessages = async () => {
      throw new Error('database is locked')
    }
    await expect(wc.flush('a', 'request')).rejects.toThrow('database is locked')
    engine.sessions.addMessages = original
    expect((await wc.get('a')).messages.map((m) => m.content)).toEqual(['keep me'])
  })
})

describe('recentMemory (spec 002’s strategy 1)', () => {
  it('reads the working context first, then the database, saying where each item came from, none twice', async () => {
    const clock = movableClock()
    const { engine } = engineWith({ clock })
    await engine.sessions.addMessages('a', 'c-1', [
      { role: 'user', content: 'stored one' },
      { role: 'assistant', content: 'stored two' },
    ])
    clock.advance(1_000)
    await engine.sessions.addMessages('a', 'c-2', [{ role: 'user', content: 'other conversation' }])
    clock.advance(1_000)
    await engine.workingContext.append('a', [{ role: 'user', content: 'in L1' }], 'c-1')
    await engine.workingContext.recordToolResult('a', { toolCallId: 't', name: 'calc', content: '7' })
    const recent = await engine.workingContext.recent('a', 'c-1', 3)
    expect(recent.map((i) => [i.source, i.content])).toEqual([
      ['WORKING_CONTEXT', '7'],
      ['WORKING_CONTEXT', 'in L1'],
      ['DATABASE', 'stored two'],
    ])
    const all = await engine.workingContext.recent('a', null, 10)
    expect(all.map((i) => [i.source, i.conversationId, i.content])).toEqual([
      ['WORKING_CONTEXT', 'c-1', '7'],
      ['WORKING_CONTEXT', 'c-1', 'in L1'],
      ['DATABASE', 'c-2', 'other conversation'],
      ['DATABASE', 'c-1', 'stored two'],
      ['DATABASE', 'c-1', 'stored one'],
    ])
    expect(new Set(all.map((i) => i.id)).size).toBe(all.length)
    // After a flush the same turns come from the database, once.
    await engine.workingContext.flush('a', 'request')
    const after = await engine.workingContext.recent('a', 'c-1', 10)
    expect(after.map((i) => [i.source, i.content])).toEqual([
      ['DATABASE', '7'],
      ['DATABASE', 'in L1'],
      ['DATABASE', 'stored two'],
      ['DATABASE', 'stored one'],
    ])
    expect(after[0]?.toolCallId).toBe('t')
    expect(await engine.workingContext.recent('b', 'c-1', 10)).toEqual([])
  })
})

describe('deleting an agent', () => {
  it('removes its working context from this process and the shared store, and the report says so', async () => {
    const clock = movableClock()
    const store = new InMemoryWorkingContextStore(clock)
    const { engine } = engineWith({ clock, store })
    await engine.agents.createAgent('a')
    await engine.workingContext.append('a', [{ role: 'user', content: 'secret' }])
    await engine.workingContext.append('b', [{ role: 'user', content: 'other' }])
    const before = await engine.lifecycle.report('a')
    expect(before.stores).toContainEqual({ store: 'working context (L1)', kind: 'CACHE', count: 1 })
    expect(before.stores).toContainEqual({ store: 'Redis keys', kind: 'CACHE', count: 1 })
    await engine.lifecycle.deleteAgent('a')
    const after = await engine.lifecycle.report('a')
    expect(
      after.stores.filter((s) => s.store === 'working context (L1)' || s.store === 'Redis keys'),
    ).toEqual([
      { store: 'working context (L1)', kind: 'CACHE', count: 0 },
      { store: 'Redis keys', kind: 'CACHE', count: 0 },
    ])
    expect(await store.read('a', null)).toBeNull()
    expect((await engine.workingContext.get('b')).messages).toHaveLength(1)
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_KEY, createAgentKey, createTestApp, type TestApp } from './helpers.ts'
import {
  APPEND_WORKING_CONTEXT,
  CLEAR_WORKING_CONTEXT,
  FLUSH_WORKING_CONTEXT,
  GET_WORKING_CONTEXT,
  RECENT_MEMORY,
  RECORD_TOOL_RESULT,
  SET_SCRATCHPAD,
} from './working-context-documents.ts'

// Spec 002's L1 working context through GraphQL (issue 17): append, scratchpad, tool results,
// the automatic flush at the threshold's edge, flush and clear on request, recentMemory's
// sources, the TTL on the server's clock, and bad input named by field and limit. Runs on both
// backends (the vitest projects sqlite and postgres).

const SESSION = `query($c: String!) { session(conversationId: $c) { __typename ... on Session { messageCount } } }`
const ADD = `mutation($c: String!, $t: String!) { addMessage(input: { conversationId: $c, role: USER, content: $t }) { __typename } }`

/** `a a a …`: one o200k token per word, so token counts at the edge are exact. */
const tokens = (n: number) => `a${' a'.repeat(n - 1)}`

describe('the working context through GraphQL (spec 002’s L1)', () => {
  let t: TestApp
  let key: string

  beforeAll(async () => {
    t = await createTestApp({ env: { ENGRAM_EXTRACTION: 'off', ENGRAM_SUMMARIES: 'off' } })
    key = await createAgentKey(t, 'helper')
    await createAgentKey(t, 'admin-named')
  })
  afterAll(async () => {
    await t?.close()
  })

  const gql = (query: string, variables: Record<string, unknown> = {}, as: string | null = key) =>
    t.gql(query, variables, as)
  const messageCount = async (conversationId: string) =>
    (await gql(SESSION, { c: conversationId })).data.session?.messageCount ?? 0

  it('holds messages, tool results and a scratchpad with their token count, and says when it expires', async () => {
    const appended = await gql(APPEND_WORKING_CONTEXT, {
      m: [
        { role: 'USER', content: 'Find me a flight to Rome' },
        { role: 'ASSISTANT', content: 'Searching now', name: 'travel-bot' },
      ],
      c: 'trip-1',
    })
    expect(appended.data.appendWorkingContext.__typename).toBe('WorkingContextChange')
    expect(appended.data.appendWorkingContext.flush).toBeNull()
    await gql(RECORD_TOOL_RESULT, { id: 'call-1', n: 'search_flights', t: 'AZ 123 at 9:40' })
    const pad = await gql(SET_SCRATCHPAD, { s: 'then hotels' })
    const context = pad.data.setWorkingScratchpad
    expect(context).toMatchObject({
      agentId: 'helper',
      conversationId: 'trip-1',
      scratchpad: 'then hotels',
      flushThresholdTokens: 32_000,
      updatedAt: t.clock.now().toISOString(),
      expiresAt: new Date(t.clock.now().getTime() + 30 * 60_000).toISOString(),
    })
    expect(context.messages.map((m: { role: string; name: string | null }) => [m.role, m.name])).toEqual([
      ['USER', null],
      ['ASSISTANT', 'travel-bot'],
    ])
    expect(context.toolResults).toEqual([
      expect.objectContaining({ toolCallId: 'call-1', conversationId: 'trip-1', isError: false }),
    ])
    const parts = [...context.messages, ...context.toolResults].reduce(
      (sum: number, item: { tokenCount: number }) => sum + item.tokenCount,
      0,
    )
    expect(context.tokenCount).toBeGreaterThan(parts)
    // Read back through the query, as another request would.
    const read = await gql(GET_WORKING_CONTEXT)
    expect(read.data.workingContext).toEqual(context)
    expect(await messageCount('trip-1')).toBe(0)
  })

  it('does not flush at exactly 32,000 tokens; at 32,001 it stores the turns in the conversation and keeps the scratchpad', async () => {
    await gql(CLEAR_WORKING_CONTEXT)
    const at = await gql(APPEND_WORKING_CONTEXT, {
      m: [{ role: 'USER', content: tokens(32_000) }],
      c: 'edge',
    })
    expect(at.data.appendWorkingContext.context.tokenCount).toBe(32_000)
    expect(at.data.appendWorkingContext.flush).toBeNull()
    expect(await messageCount('edge')).toBe(0)
    const over = await gql(APPEND_WORKING_CONTEXT, { m: [{ role: 'ASSISTANT', content: 'b' }], c: 'edge' })
    expect(over.data.appendWorkingContext.flush).toEqual({
      reason: 'THRESHOLD',
      messages: 2,
      toolResults: 0,
      tokens: 32_001,
      conversationIds: ['edge'],
    })
    expect(over.data.appendWorkingContext.context).toMatchObject({
      messages: [],
      toolResults: [],
      tokenCount: 0,
    })
    expect(await messageCount('edge')).toBe(2)
  })

  it('flushes on request (tool results as TOOL messages), then clears without storing', async () => {
    await gql(APPEND_WORKING_CONTEXT, { m: [{ role: 'USER', content: 'What is 6 times 7?' }], c: 'maths' })
    await gql(RECORD_TOOL_RESULT, { id: 'call-9', n: 'calculator', t: '42', e: false })
    await gql(SET_SCRATCHPAD, { s: 'remember the units' })
    const flushed = await gql(FLUSH_WORKING_CONTEXT)
    expect(flushed.data.flushWorkingContext.flush).toMatchObject({
      reason: 'REQUEST',
      messages: 2,
      toolResults: 1,
      conversationIds: ['maths'],
    })
    expect(flushed.data.flushWorkingContext.context).toMatchObject({ scratchpad: 'remember the units' })
    expect(await messageCount('maths')).toBe(2)
    const recent = await gql(RECENT_MEMORY, { c: 'maths', l: 5 })
    expect(
      recent.data.recentMemory.data.map((i: Record<string, unknown>) => [
        i.source,
        i.role,
        i.name,
        i.toolCallId,
      ]),
    ).toEqual([
      ['DATABASE', 'TOOL', 'calculator', 'call-9'],
      ['DATABASE', 'USER', null, null],
    ])
    await gql(APPEND_WORKING_CONTEXT, { m: [{ role: 'USER', content: 'never stored' }], c: 'maths' })
    const cleared = await gql(CLEAR_WORKING_CONTEXT)
    expect(cleared.data.clearWorkingContext).toMatchObject({
      messages: [],
      scratchpad: '',
      tokenCount: 0,
      updatedAt: null,
    })
    expect(await messageCount('maths')).toBe(2)
    expect((await gql(FLUSH_WORKING_CONTEXT)).data.flushWorkingContext.flush).toBeNull()
  })

  it('recentMemory reads the working context first, then the database, none twice', async () => {
    await gql(ADD, { c: 'recent', t: 'stored earlier' })
    t.clock.advance(1_000)
    await gql(APPEND_WORKING_CONTEXT, { m: [{ role: 'USER', content: 'just said' }], c: 'recent' })
    const items = (await gql(RECENT_MEMORY, { c: 'recent', l: 10 })).data.recentMemory.data
    expect(items.map((i: { source: string; content: string }) => [i.source, i.content])).toEqual([
      ['WORKING_CONTEXT', 'just said'],
      ['DATABASE', 'stored earlier'],
    ])
    // Without a conversation: every conversation's, newest first.
    const all = (await gql(RECENT_MEMORY, { l: 3 })).data.recentMemory.data
    expect(all.map((i: { source: string; content: string }) => [i.source, i.content])).toEqual([
      ['WORKING_CONTEXT', 'just said'],
      ['DATABASE', 'stored earlier'],
      // The flushed tool result: stored at the same time as the turns before it, a later row.
      ['DATABASE', '42'],
    ])
    expect(new Set(all.map((i: { id: string }) => i.id)).size).toBe(all.length)
    await gql(CLEAR_WORKING_CONTEXT)
  })

  it('expires 30 minutes after the last write on the server’s clock', async () => {
    await gql(APPEND_WORKING_CONTEXT, { m: [{ role: 'USER', content: 'short-lived' }] })
    t.clock.advance(30 * 60_000)
    expect((await gql(GET_WORKING_CONTEXT)).data.workingContext.messages).toHaveLength(1)
    t.clock.advance(1)
    expect((await gql(GET_WORKING_CONTEXT)).data.workingContext).toMatchObject({
      messages: [],
      updatedAt: null,
    })
  })

  it('lets an admin key name the agent', async () => {
    await gql(
      APPEND_WORKING_CONTEXT,
      { a: 'admin-named', m: [{ role: 'USER', content: 'for the named agent' }] },
      ADMIN_KEY,
    )
    const read = await gql(GET_WORKING_CONTEXT, { a: 'admin-named' }, ADMIN_KEY)
    expect(read.data.workingContext.messages.map((m: { content: string }) => m.content)).toEqual([
      'for the named agent',
    ])
    expect((await gql(GET_WORKING_CONTEXT)).data.workingContext.messages).toEqual([])
  })

  it('refuses bad input with VALIDATION naming the field and the limit, changing nothing', async () => {
    const issue = (result: { data: Record<string, { __typename: string; issues?: unknown[] }> }) => {
      const answer = Object.values(result.data)[0] as { __typename: string; issues: unknown[] }
      expect(answer.__typename).toBe('ValidationError')
      return answer.issues
    }
    const many = Array.from({ length: 101 }, () => ({ role: 'USER', content: 'x' }))
    expect(issue(await gql(APPEND_WORKING_CONTEXT, { m: many }))).toEqual([
      expect.objectContaining({ field: 'messages', limit: '100' }),
    ])
    expect(
      issue(await gql(APPEND_WORKING_CONTEXT, { m: [{ role: 'USER', content: 'x'.repeat(100_001) }] })),
    ).toEqual([expect.objectContaining({ field: 'messages.0.content', limit: '100000' })])
    expect(issue(await gql(SET_SCRATCHPAD, { s: 'x'.repeat(50_001) }))).toEqual([
      expect.objectContaining({ field: 'scratchpad', limit: '50000' }),
    ])
    expect(issue(await gql(RECORD_TOOL_RESULT, { id: 'c', n: 'tool', t: 'x'.repeat(100_001) }))).toEqual([
      expect.objectContaining({ field: 'content', limit: '100000' }),
    ])
    expect(issue(await gql(RECORD_TOOL_RESULT, { id: ' ', n: 'tool', t: 'x' }))).toEqual([
      expect.objectContaining({ field: 'toolCallId', limit: '1' }),
    ])
    expect(issue(await gql(RECENT_MEMORY, { l: 101 }))).toEqual([
      expect.objectContaining({ field: 'limit', limit: '100' }),
    ])
    expect((await gql(GET_WORKING_CONTEXT)).data.workingContext.messages).toEqual([])
  })
})

describe('the working context’s server-wide rules (ENGRAM_WORKING_CONTEXT_*)', () => {
  let t: TestApp
  let key: string
  beforeAll(async () => {
    t = await createTestApp({
      env: {
        ENGRAM_EXTRACTION: 'off',
        ENGRAM_WORKING_CONTEXT_FLUSH_TOKENS: 5,
        ENGRAM_WORKING_CONTEXT_CONVERSATION: 'l1-overflow',
        ENGRAM_WORKING_CONTEXT_TTL_SECONDS: 60,
      },
    })
    key = await createAgentKey(t, 'configured')
  })
  afterAll(async () => {
    await t?.close()
  })

  it('flushes past the configured threshold into the configured conversation, and expires on the configured TTL', async () => {
    const five = await t.gql(APPEND_WORKING_CONTEXT, { m: [{ role: 'USER', content: tokens(5) }] }, key)
    expect(five.data.appendWorkingContext).toMatchObject({
      flush: null,
      context: { flushThresholdTokens: 5 },
    })
    expect(five.data.appendWorkingContext.context.expiresAt).toBe(
      new Date(t.clock.now().getTime() + 60_000).toISOString(),
    )
    const six = await t.gql(APPEND_WORKING_CONTEXT, { m: [{ role: 'USER', content: 'a' }] }, key)
    expect(six.data.appendWorkingContext.flush).toMatchObject({ tokens: 6, conversationIds: ['l1-overflow'] })
  })
})

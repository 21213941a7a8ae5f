import { describe, expect, it } from 'vitest'
import type { TokenCounter } from '../budget/tokenizer.ts'
import { ValidationError } from '../errors.ts'
import { DEFAULT_LIMITS } from '../limits.ts'
import { DEFAULT_WORKING_CONTEXT_RULES, WorkingContextRulesSchema } from './rules.ts'
import {
  appendWorkingMessages,
  emptyWorkingContext,
  flushDue,
  newestWorkingItems,
  putBackAfterFailedFlush,
  recordWorkingToolResult,
  setWorkingScratchpad,
  stampWorkingContext,
  takeForFlush,
  workingContextBytes,
} from './working-context.ts'

// One token per whitespace-separated word: token counts the tests can write down.
const words: TokenCounter = {
  name: 'o200k_base',
  count: (text) => text.split(/\s+/).filter(Boolean).length,
}
const rules = DEFAULT_WORKING_CONTEXT_RULES
const now = new Date('2026-01-01T10:00:00Z')
const later = new Date('2026-01-01T10:01:00Z')
const text = (tokens: number) => Array.from({ length: tokens }, () => 'w').join(' ')

function issuesOf(run: () => unknown) {
  try {
    run()
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError)
    return (error as ValidationError).issues
  }
  throw new Error('expected a ValidationError')
}

describe('working context rules', () => {
  it('has spec 002’s numbers as defaults', () => {
    expect(rules).toMatchObject({
      maxAgents: 1_000,
      maxBytes: 500_000_000,
      ttlMs: 30 * 60 * 1000,
      flushThresholdTokens: 32_000,
      defaultConversationId: 'working-context',
    })
  })

  it('refuses a context limit the LRU could never hold, naming the field and the limit', () => {
    const parsed = WorkingContextRulesSchema.safeParse({ maxBytes: 2_048, maxContextBytes: 4_096 })
    expect(parsed.success).toBe(false)
    expect(parsed.error?.issues[0]).toMatchObject({ path: ['maxContextBytes'], params: { limit: 2_048 } })
    expect(WorkingContextRulesSchema.safeParse({ flushThresholdTokens: 0 }).success).toBe(false)
  })
})

describe('appending', () => {
  it('counts every message, tool result and the scratchpad', () => {
    let state = appendWorkingMessages(
      emptyWorkingContext('a'),
      [
        { role: 'user', content: 'one two three' },
        { role: 'assistant', content: 'four five', name: ' bot ' },
      ],
      'c-1',
      now,
      words,
      rules,
    )
    state = setWorkingScratchpad(state, 'plan: look up', words, rules)
    state = recordWorkingToolResult(
      state,
      { toolCallId: 'call-1', name: 'search', content: 'six seven eight nine' },
      later,
      words,
      rules,
      'fallback',
    )
    expect(state.tokenCount).toBe(3 + 2 + 3 + 4)
    expect(state.messages.map((m) => [m.id, m.conversationId, m.name, m.tokenCount])).toEqual([
      ['wc-1', 'c-1', null, 3],
      ['wc-2', 'c-1', 'bot', 2],
    ])
    // A tool result naming no conversation goes with the latest append's.
    expect(state.toolResults[0]).toMatchObject({ conversationId: 'c-1', seq: 3, isError: false })
    // A second result for the same call replaces the first.
    const replaced = recordWorkingToolResult(
      state,
      { toolCallId: 'call-1', name: 'search', content: 'ten', isError: true },
      later,
      words,
      rules,
      'fallback',
    )
    expect(replaced.toolResults).toHaveLength(1)
    expect(replaced.tokenCount).toBe(3 + 2 + 3 + 1)
  })

  it('checks every limit before changing anything, naming the field and the limit', () => {
    const small = WorkingContextRulesSchema.parse({
      maxMessagesPerAppend: 2,
      maxScratchpadChars: 5,
      maxToolResultChars: 4,
      maxToolResults: 1,
      maxContextBytes: 1_024,
    })
    const empty = emptyWorkingContext('a')
    const three = [1, 2, 3].map(() => ({ role: 'user' as const, content: 'x' }))
    expect(issuesOf(() => appendWorkingMessages(empty, three, 'c', now, words, small))).toEqual([
      expect.objectContaining({ field: 'messages', limit: 2 }),
    ])
    expect(
      issuesOf(() =>
        appendWorkingMessages(
          empty,
          [
            { role: 'user', content: '' },
            { role: 'user', content: 'abcd' },
          ],
          'c',
          now,
          words,
          small,
          {
            ...DEFAULT_LIMITS,
            maxContentChars: 3,
          },
        ),
      ),
    ).toEqual([
      expect.objectContaining({ field: 'messages.0.content', limit: 1 }),
      expect.objectContaining({ field: 'messages.1.content', limit: 3 }),
    ])
    expect(issuesOf(() => setWorkingScratchpad(empty, '123456', words, small))).toEqual([
      expect.objectContaining({ field: 'scratchpad', limit: 5 }),
    ])
    expect(setWorkingScratchpad(empty, '12345', words, small).scratchpad).toBe('12345')
    expect(
      issuesOf(() =>
        recordWorkingToolResult(
          empty,
          { toolCallId: 't', name: 'n', content: '12345' },
          now,
          words,
          small,
          'c',
        ),
      ),
    ).toEqual([expect.objectContaining({ field: 'content', limit: 4 })])
    const one = recordWorkingToolResult(
      empty,
      { toolCallId: 't1', name: 'n', content: '1' },
      now,
      words,
      small,
      'c',
    )
    expect(
      issuesOf(() =>
        recordWorkingToolResult(one, { toolCallId: 't2', name: 'n', content: '1' }, now, words, small, 'c'),
      ),
    ).toEqual([expect.objectContaining({ field: 'toolCallId', limit: 1 })])
    // The same call again replaces rather than adds.
    expect(
      recordWorkingToolResult(one, { toolCallId: 't1', name: 'n', content: '2' }, now, words, small, 'c')
        .toolResults,
    ).toHaveLength(1)
    const big = [{ role: 'user' as const, content: 'y'.repeat(600) }]
    const once = appendWorkingMessages(empty, big, 'c', now, words, small)
    expect(issuesOf(() => appendWorkingMessages(once, big, 'c', now, words, small))).toEqual([
      expect.objectContaining({ field: 'messages', limit: 1_024 }),
    ])
  })

  it('sizes a context by the UTF-8 bytes of its JSON', () => {
    const ascii = workingContextBytes(emptyWorkingContext('a'))
    expect(ascii).toBe(JSON.stringify(emptyWorkingContext('a')).length)
    const state = { ...emptyWorkingContext('a'), scratchpad: 'é😀' }
    expect(workingContextBytes(state)).toBe(ascii + 2 + 4)
  })
})

describe('the flush threshold (spec 002: tokenCount > 32,000)', () => {
  it('does not flush at exactly 32,000 tokens and flushes at 32,001', () => {
    const at = appendWorkingMessages(
      emptyWorkingContext('a'),
      [{ role: 'user', content: text(32_000) }],
      'c',
      now,
      words,
      rules,
    )
    expect(at.tokenCount).toBe(32_000)
    expect(flushDue(at, rules)).toBe(false)
    const over = appendWorkingMessages(at, [{ role: 'user', content: 'one' }], 'c', now, words, rules)
    expect(over.tokenCount).toBe(32_001)
    expect(flushDue(over, rules)).toBe(true)
  })

  it('never flushes a scratchpad alone', () => {
    const state = setWorkingScratchpad(emptyWorkingContext('a'), text(20), words, rules)
    expect(flushDue(state, { flushThresholdTokens: 10 })).toBe(false)
  })
})

describe('taking a flush', () => {
  it('moves messages and tool results in order, grouped by conversation, and keeps the scratchpad', () => {
    let state = appendWorkingMessages(
      emptyWorkingContext('a'),
      [{ role: 'user', content: 'a b' }],
      'c-1',
      now,
      words,
      rules,
    )
    state = recordWorkingToolResult(
      state,
      { toolCallId: 'k', name: 'calc', content: '42' },
      now,
      words,
      rules,
      'd',
    )
    state = appendWorkingMessages(
      state,
      [{ role: 'assistant', content: 'c', toolCallId: 'k' }],
      'c-2',
      later,
      words,
      rules,
    )
    state = setWorkingScratchpad(state, 'keep me', words, rules)
    const { taken, rest } = takeForFlush(state)
    expect(taken.tokens).toBe(2 + 1 + 1)
    expect(
      taken.batches.map((b) => [b.conversationId, b.messages.map((m) => [m.role, m.content, m.speaker])]),
    ).toEqual([
      [
        'c-1',
        [
          ['user', 'a b', null],
          ['tool', '42', 'calc'],
        ],
      ],
      ['c-2', [['assistant', 'c', null]]],
    ])
    expect(taken.batches[0]?.messages[1]?.metadata).toEqual({
      workingContext: true,
      toolCallId: 'k',
      isError: false,
    })
    expect(taken.batches[1]?.messages[0]?.timestamp).toEqual(later)
    expect(rest).toMatchObject({ messages: [], toolResults: [], scratchpad: 'keep me', tokenCount: 2 })
    // A failed flush puts them back before what came since.
    const since = appendWorkingMessages(rest, [{ role: 'user', content: 'd' }], 'c-2', later, words, rules)
    const back = putBackAfterFailedFlush(since, taken)
    expect(back.messages.map((m) => m.content)).toEqual(['a b', 'c', 'd'])
    expect(back.toolResults).toHaveLength(1)
    expect(back.tokenCount).toBe(2 + 1 + 1 + 1 + 2)
  })
})

describe('newest items and stamps', () => {
  it('lists messages and tool results newest first, per conversation when named', () => {
    let state = appendWorkingMessages(
      emptyWorkingContext('a'),
      [{ role: 'user', content: 'first' }],
      'c-1',
      now,
      words,
      rules,
    )
    state = recordWorkingToolResult(
      state,
      { toolCallId: 'k', name: 'calc', content: '42' },
      now,
      words,
      rules,
      'd',
    )
    state = appendWorkingMessages(state, [{ role: 'user', content: 'third' }], 'c-2', now, words, rules)
    expect(newestWorkingItems(state, null, 10).map((i) => i.id)).toEqual(['wc-3', 'tool-k', 'wc-1'])
    expect(newestWorkingItems(state, 'c-1', 10).map((i) => i.id)).toEqual(['tool-k', 'wc-1'])
    expect(newestWorkingItems(state, null, 1).map((i) => i.id)).toEqual(['wc-3'])
  })

  it('runs the TTL from the last write', () => {
    const stamped = stampWorkingContext(emptyWorkingContext('a'), now, 60_000, 'v1')
    expect(stamped).toMatchObject({
      updatedAt: now.toISOString(),
      expiresAt: '2026-01-01T10:01:00.000Z',
      version: 'v1',
    })
  })
})

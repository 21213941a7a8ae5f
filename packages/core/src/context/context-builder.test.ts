import { describe, expect, it } from 'vitest'
import { ValidationError } from '../errors.ts'
import {
  buildContextPlan,
  builtMemoryContent,
  contextBuilderBudget,
  DEFAULT_CONTEXT_BUILDER_RULES,
  fitMemories,
  MAX_BUILD_TOOL_COUNT,
  MAX_CONTEXT_WINDOW_TOKENS,
  overflowSummaryTokens,
  parseContextBuilderRules,
} from './context-builder.ts'

const rules = DEFAULT_CONTEXT_BUILDER_RULES

function issuesOf(run: () => unknown) {
  try {
    run()
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError)
    return (error as ValidationError).issues
  }
  throw new Error('expected a ValidationError')
}

describe('spec 002’s context budget', () => {
  it('reserves system min(4000, 5%), 500 per tool, output min(4000, 10%) and gives memory 70% of the rest', () => {
    const budget = contextBuilderBudget(rules, {
      contextWindow: 128_000,
      toolCount: 3,
      instructionTokens: 120,
      inputTokens: 1_000,
    })
    // 128,000 − 4,000 − 1,500 − 4,000 − 1,000 = 117,500 left; 70% of it.
    expect(budget).toEqual({
      total: 128_000,
      system: 4_000,
      tools: 1_500,
      output: 4_000,
      input: 1_000,
      memory: 82_250,
    })
  })

  it('takes the shares below the caps on a small window', () => {
    const budget = contextBuilderBudget(rules, {
      contextWindow: 8_000,
      toolCount: 0,
      instructionTokens: 0,
      inputTokens: 100,
    })
    // 5% = 400, 10% = 800; left 8,000 − 400 − 800 − 100 = 6,700; memory floor(0.7 × 6,700) = 4,690.
    expect(budget).toMatchObject({ system: 400, tools: 0, output: 800, memory: 4_690 })
  })

  it('lets instructions longer than the system reserve take their tokens from memory', () => {
    const budget = contextBuilderBudget(rules, {
      contextWindow: 128_000,
      toolCount: 0,
      instructionTokens: 6_000,
      inputTokens: 0,
    })
    expect(budget.system).toBe(6_000)
    expect(budget.memory).toBe(Math.floor(0.7 * (128_000 - 6_000 - 4_000)))
  })

  it('refuses a window the reserves and the input overfill, naming the window and the size needed', () => {
    const fits = contextBuilderBudget(rules, {
      contextWindow: 10_000,
      toolCount: 0,
      instructionTokens: 0,
      inputTokens: 8_500,
    })
    // 10,000 − 500 − 1,000 − 8,500 = 0 left: it fits, with nothing for memory.
    expect(fits.memory).toBe(0)
    expect(
      issuesOf(() =>
        contextBuilderBudget(rules, {
          contextWindow: 10_000,
          toolCount: 0,
          instructionTokens: 0,
          inputTokens: 8_501,
        }),
      ),
    ).toEqual([expect.objectContaining({ field: 'buildContext.contextWindow', limit: 10_001 })])
  })

  it('follows configured rules', () => {
    const custom = parseContextBuilderRules({
      memoryShare: 0.5,
      tokensPerTool: 100,
      outputReserveMaxTokens: 1_000,
    })
    const budget = contextBuilderBudget(custom, {
      contextWindow: 100_000,
      toolCount: 10,
      instructionTokens: 0,
      inputTokens: 0,
    })
    expect(budget).toMatchObject({ system: 4_000, tools: 1_000, output: 1_000, memory: 47_000 })
    expect(issuesOf(() => parseContextBuilderRules({ memoryShare: 1.5 }))).toEqual([
      expect.objectContaining({ field: 'contextBuilder.memoryShare', limit: 1 }),
    ])
  })
})

describe('a request’s options', () => {
  it('fill in from the rules, weights one by one', () => {
    expect(buildContextPlan(rules, { toolCount: 2, weights: { similarity: 0.9 } })).toEqual({
      contextWindow: 128_000,
      instructions: null,
      currentInput: null,
      toolCount: 2,
      candidateLimit: 100,
      weights: { recency: 0.3, similarity: 0.9, importance: 0.2 },
    })
  })

  it('are refused past their limits, each naming buildContext.<field> and the limit', () => {
    expect(
      issuesOf(() =>
        buildContextPlan(rules, {
          contextWindow: MAX_CONTEXT_WINDOW_TOKENS + 1,
          toolCount: MAX_BUILD_TOOL_COUNT + 1,
          weights: { recency: -0.1 },
        }),
      ),
    ).toEqual([
      expect.objectContaining({ field: 'buildContext.contextWindow', limit: MAX_CONTEXT_WINDOW_TOKENS }),
      expect.objectContaining({ field: 'buildContext.toolCount', limit: MAX_BUILD_TOOL_COUNT }),
      expect.objectContaining({ field: 'buildContext.weights.recency', limit: 0 }),
    ])
  })
})

describe('the fit loop', () => {
  const candidates = [
    { id: 'memory:1', tokens: 40 },
    { id: 'message:7', tokens: 60 },
    { id: 'memory:2', tokens: 1 },
  ]

  it('includes a memory that fits exactly and overflows from the next one on', () => {
    expect(fitMemories(candidates, 100)).toEqual({
      included: ['memory:1', 'message:7'],
      overflowed: ['memory:2'],
      usedTokens: 100,
    })
  })

  it('stops at the first memory that does not fit, even when a later one would (spec 002 keeps a prefix)', () => {
    expect(fitMemories(candidates, 99)).toEqual({
      included: ['memory:1'],
      overflowed: ['message:7', 'memory:2'],
      usedTokens: 40,
    })
    expect(fitMemories(candidates, 101)).toEqual({
      included: ['memory:1', 'message:7', 'memory:2'],
      overflowed: [],
      usedTokens: 101,
    })
  })

  it('sizes the overflow summary to what is left, capped, and to nothing without an overflow', () => {
    const fit = fitMemories(candidates, 150)
    expect(fit.overflowed).toEqual([])
    expect(overflowSummaryTokens(rules, fit, 150, 8)).toBe(0)
    const over = fitMemories(candidates, 99)
    expect(overflowSummaryTokens(rules, over, 99, 8)).toBe(51)
    expect(overflowSummaryTokens(rules, over, 10_000, 8)).toBe(2_000)
    expect(overflowSummaryTokens(rules, fitMemories(candidates, 40), 40, 8)).toBe(0)
    expect(overflowSummaryTokens({ summaryMaxTokens: 0 }, over, 10_000, 8)).toBe(0)
  })
})

describe('memories as messages', () => {
  it('makes memory items system notes and keeps the user’s and assistant’s turns in their roles', () => {
    expect(builtMemoryContent({ kind: 'memory' }, 'Prefers tea')).toEqual({
      role: 'system',
      content: '[Memory] Prefers tea',
    })
    expect(builtMemoryContent({ kind: 'turn', role: 'USER' }, 'hi')).toEqual({ role: 'user', content: 'hi' })
    expect(builtMemoryContent({ kind: 'turn', role: 'ASSISTANT' }, 'hello')).toEqual({
      role: 'assistant',
      content: 'hello',
    })
    expect(builtMemoryContent({ kind: 'turn', role: 'TOOL' }, '{"ok":true}')).toEqual({
      role: 'system',
      content: '[tool] {"ok":true}',
    })
  })
})

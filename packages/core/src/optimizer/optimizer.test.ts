import { describe, expect, it } from 'vitest'
import { createTokenCounter } from '../budget/tokenizer.ts'
import { ValidationError } from '../errors.ts'
import type { MemoryEntry } from '../types.ts'
import {
  adaptParameters,
  DEFAULT_OPTIMIZER_CONFIG,
  DEFAULT_OPTIMIZER_PARAMETERS,
  efficiencyReport,
  optimizerParametersSchema,
  parameterRanges,
  parseOptimizerConfig,
  parseOptimizerParameters,
  runOptimizerStep,
} from './optimizer.ts'

const P = DEFAULT_OPTIMIZER_PARAMETERS
// savingsRatio 1 keeps the emergency rule out of the way unless a test wants it.
const adapt = (usageRatio: number, savingsRatio = 1, params = P) =>
  adaptParameters(params, { usageRatio, savingsRatio }).parameters

describe('optimizer parameters', () => {
  it('start at the spec values', () => {
    expect(P).toEqual({
      compressionTrigger: 0.7,
      fullMessageWindow: 30,
      minRelevance: 0.3,
      targetUsageRatio: 0.65,
    })
    expect(DEFAULT_OPTIMIZER_CONFIG).toMatchObject({
      intervalMs: 120_000,
      learningRate: 0.05,
      snapshotHistoryLimit: 500,
    })
  })

  it('reject values outside the ranges, accept the bounds', () => {
    for (const bad of [
      { compressionTrigger: 0.34 },
      { compressionTrigger: 0.86 },
      { fullMessageWindow: 9 },
      { fullMessageWindow: 51 },
      { fullMessageWindow: 20.5 },
      { minRelevance: 0.14 },
      { minRelevance: 0.71 },
    ]) {
      expect(() => parseOptimizerParameters(bad)).toThrow(ValidationError)
    }
    expect(
      parseOptimizerParameters({ compressionTrigger: 0.35, fullMessageWindow: 50, minRelevance: 0.7 }),
    ).toMatchObject({ compressionTrigger: 0.35, fullMessageWindow: 50, minRelevance: 0.7 })
  })
})

describe('adaptation rules', () => {
  it('tightens when usage is over target + 0.10, not at it', () => {
    expect(adapt(0.76)).toEqual({
      compressionTrigger: 0.65,
      fullMessageWindow: 28,
      minRelevance: 0.35,
      targetUsageRatio: 0.65,
    })
    expect(adapt(0.75)).toEqual(P)
  })

  it('relaxes when usage is under target - 0.15, not at it', () => {
    expect(adapt(0.49)).toEqual({
      compressionTrigger: 0.725,
      fullMessageWindow: 31,
      minRelevance: 0.275,
      targetUsageRatio: 0.65,
    })
    expect(adapt(0.5)).toEqual(P)
  })

  it('adds the emergency adjustment when savings are under 5% while over target', () => {
    // over target + 0.10 and ineffective: -0.05 - 0.10 on the trigger, +0.05 + 0.10 on relevance
    expect(adapt(0.8, 0.04)).toEqual({
      compressionTrigger: 0.55,
      fullMessageWindow: 28,
      minRelevance: 0.45,
      targetUsageRatio: 0.65,
    })
    // over target only: the emergency step alone
    expect(adapt(0.7, 0.04)).toEqual({
      compressionTrigger: 0.6,
      fullMessageWindow: 30,
      minRelevance: 0.4,
      targetUsageRatio: 0.65,
    })
    // savings at 5% or usage at target: no emergency
    expect(adapt(0.7, 0.05)).toEqual(P)
    expect(adapt(0.65, 0)).toEqual(P)
  })

  it('clamps every parameter to its range', () => {
    const low = {
      compressionTrigger: 0.36,
      fullMessageWindow: 11,
      minRelevance: 0.69,
      targetUsageRatio: 0.65,
    }
    expect(adapt(0.9, 0, low)).toEqual({
      compressionTrigger: 0.35,
      fullMessageWindow: 10,
      minRelevance: 0.7,
      targetUsageRatio: 0.65,
    })
    const high = {
      compressionTrigger: 0.84,
      fullMessageWindow: 50,
      minRelevance: 0.16,
      targetUsageRatio: 0.65,
    }
    expect(adapt(0.1, 1, high)).toEqual({
      compressionTrigger: 0.85,
      fullMessageWindow: 50,
      minRelevance: 0.15,
      targetUsageRatio: 0.65,
    })
  })

  it('follows a configured learning rate and target', () => {
    const result = adaptParameters(
      { ...P, targetUsageRatio: 0.5 },
      { usageRatio: 0.61, savingsRatio: 1 },
      { ...DEFAULT_OPTIMIZER_CONFIG, learningRate: 0.1 },
    )
    expect(result.parameters).toMatchObject({
      compressionTrigger: 0.6,
      fullMessageWindow: 28,
      minRelevance: 0.4,
    })
    expect(result.adjustments[0]).toMatch(/over budget/)
  })
})

describe('optimizer config', () => {
  it('holds every number of the adaptation rules and the spec ranges', () => {
    expect(DEFAULT_OPTIMIZER_CONFIG).toEqual({
      intervalMs: 120_000,
      learningRate: 0.05,
      overBudgetMargin: 0.1,
      underBudgetMargin: 0.15,
      overBudgetWindowStep: 2,
      underBudgetWindowStep: 1,
      underBudgetRateFactor: 0.5,
      emergencySavingsRatio: 0.05,
      emergencyRateFactor: 2,
      snapshotHistoryLimit: 500,
      compressionTriggerMin: 0.35,
      compressionTriggerMax: 0.85,
      fullMessageWindowMin: 10,
      fullMessageWindowMax: 50,
      minRelevanceMin: 0.15,
      minRelevanceMax: 0.7,
    })
  })

  it('rejects out-of-range settings and inverted ranges, naming the field and the limit', () => {
    const issues = (input: Parameters<typeof parseOptimizerConfig>[0]) => {
      try {
        parseOptimizerConfig(input)
      } catch (e) {
        expect(e).toBeInstanceOf(ValidationError)
        return (e as ValidationError).issues
      }
      throw new Error('expected a ValidationError')
    }
    expect(issues({ learningRate: 2 })[0]).toMatchObject({ field: 'optimizer.learningRate', limit: 1 })
    expect(issues({ minRelevanceMin: 0.5, minRelevanceMax: 0.4 })[0]).toMatchObject({
      field: 'optimizer.minRelevanceMax',
      limit: 0.5,
    })
    expect(parseOptimizerConfig({ minRelevanceMin: 0.4, minRelevanceMax: 0.4 }).minRelevanceMax).toBe(0.4)
  })

  it('clamps to configured ranges and moves by configured steps', () => {
    const config = {
      compressionTriggerMin: 0.66,
      fullMessageWindowMin: 29,
      minRelevanceMax: 0.32,
      overBudgetWindowStep: 5,
    }
    expect(adaptParameters(P, { usageRatio: 0.9, savingsRatio: 1 }, config).parameters).toEqual({
      compressionTrigger: 0.66,
      fullMessageWindow: 29,
      minRelevance: 0.32,
      targetUsageRatio: 0.65,
    })
    const relaxed = adaptParameters(
      P,
      { usageRatio: 0.1, savingsRatio: 1 },
      { underBudgetWindowStep: 3, underBudgetRateFactor: 1 },
    )
    expect(relaxed.parameters).toMatchObject({
      compressionTrigger: 0.75,
      fullMessageWindow: 33,
      minRelevance: 0.25,
    })
    const emergency = adaptParameters(
      P,
      { usageRatio: 0.7, savingsRatio: 0.09 },
      { emergencySavingsRatio: 0.1, emergencyRateFactor: 1 },
    )
    expect(emergency.parameters).toMatchObject({ compressionTrigger: 0.65, minRelevance: 0.35 })
  })

  it('validates parameters against the configured ranges', () => {
    const wide = parameterRanges(parseOptimizerConfig({ compressionTriggerMax: 0.95 }))
    expect(() => parseOptimizerParameters({ compressionTrigger: 0.9 })).toThrow(ValidationError)
    expect(parseOptimizerParameters({ compressionTrigger: 0.9 }, wide).compressionTrigger).toBe(0.9)
    // Initial values outside narrowed ranges start at the nearest bound.
    const narrow = optimizerParametersSchema({
      compressionTrigger: { min: 0.4, max: 0.5 },
      fullMessageWindow: { min: 35, max: 40 },
      minRelevance: { min: 0.15, max: 0.7 },
    })
    expect(narrow.parse({})).toEqual({
      compressionTrigger: 0.5,
      fullMessageWindow: 35,
      minRelevance: 0.3,
      targetUsageRatio: 0.65,
    })
  })
})

describe('one optimizer step', () => {
  const NOW = new Date('2026-01-15T12:00:00.000Z')
  const old = new Date(NOW.getTime() - 2 * 86_400_000)
  const counter = createTokenCounter()
  const entry = (id: string, content: string, over: Partial<MemoryEntry> = {}): MemoryEntry => ({
    id,
    type: 'short_term',
    role: 'user',
    content,
    tokenCount: counter.count(content),
    relevance: 0.5,
    isCompressed: false,
    timestamp: NOW,
    sessionId: 's',
    ...over,
  })

  it('plans compress, drop and promote, accounts the tokens, adapts and snapshots', () => {
    const long = `Long chatter ${'blah '.repeat(100)}\nended with nothing`
    const entries = [
      entry('1', 'ok', { timestamp: old }),
      entry('2', 'sure', { timestamp: old, isCompressed: true }),
      entry('3', long, { timestamp: old, role: 'assistant', content: `ok ${long}`, tokenCount: 300 }),
      entry('4', 'navigate(https://example.com) -> #page-title', { role: 'tool' }),
      entry('5', 'an ordinary sentence of some length'),
    ]
    const result = runOptimizerStep({ entries, parameters: P, now: NOW, tokenCounter: counter })
    const byId = Object.fromEntries(result.actions.map((a) => [a.entryId, a]))
    expect(byId['1']).toMatchObject({ action: 'compress', content: 'ok', tokensFreed: 0 })
    expect(byId['2']).toMatchObject({ action: 'drop' })
    expect(byId['3']).toMatchObject({ action: 'compress' })
    expect((byId['3'] as { content: string }).content).toMatch(/^\[assistant\] ok Long chatter/)
    expect(byId['4']).toMatchObject({ action: 'promote', relevance: 1, type: 'long_term' })
    expect(byId['5']).toBeUndefined()

    const before = entries.reduce((s, e) => s + e.tokenCount, 0)
    const freed = result.actions.reduce((s, a) => s + ('tokensFreed' in a ? a.tokensFreed : 0), 0)
    expect(result.snapshot).toMatchObject({
      tokensBefore: before,
      tokensAfter: before - freed,
      entriesCompressed: 2,
      entriesDropped: 1,
      entriesPromoted: 1,
      timestamp: NOW,
    })
    expect(freed).toBeGreaterThan(250)
    // Tiny usage of a 190,904-token budget: the step relaxes the parameters.
    expect(result.parameters).toEqual({
      compressionTrigger: 0.725,
      fullMessageWindow: 31,
      minRelevance: 0.275,
      targetUsageRatio: 0.65,
    })
    expect(result.snapshot).toMatchObject({
      compressionTriggerRatio: 0.725,
      fullMessageWindow: 31,
      minRelevanceScore: 0.275,
    })
  })

  it('measures usage against the budget and tightens when over target', () => {
    const entries = [entry('1', 'an ordinary sentence of some length', { tokenCount: 8_000 })]
    const budget = { maxContextTokens: 10_000, systemPromptTokens: 0, responseReserveTokens: 0 }
    const result = runOptimizerStep({ entries, parameters: P, now: NOW, tokenCounter: counter, budget })
    expect(result.snapshot.usageRatio).toBe(0.8)
    // 0.8 > 0.75 and nothing saved: over budget plus emergency
    expect(result.parameters).toMatchObject({
      compressionTrigger: 0.55,
      fullMessageWindow: 28,
      minRelevance: 0.45,
    })
    expect(result.adjustments).toHaveLength(2)
  })

  describe('budget pressure (compression trigger, full window, short-term cap)', () => {
    const budget = { maxContextTokens: 10_000, systemPromptTokens: 0, responseReserveTokens: 0 }
    const params = { ...P, fullMessageWindow: 10 }
    const chatter = (i: number, tokens: number, over: Partial<MemoryEntry> = {}) =>
      // Over 200 characters, so that compression shrinks it.
      entry(
        String(i),
        `progress note number ${i} about the ongoing page structure review. ${'More detail follows. '.repeat(12)}`,
        {
          tokenCount: tokens,
          timestamp: new Date(NOW.getTime() - (100 - i) * 60_000),
          ...over,
        },
      )

    it('leaves memory alone at the trigger, compresses oldest-first past it, sparing the window', () => {
      // 14 entries x 500 = 7,000 tokens = exactly 70% of 10,000
      const at = runOptimizerStep({
        entries: Array.from({ length: 14 }, (_, i) => chatter(i, 500)),
        parameters: params,
        now: NOW,
        tokenCounter: counter,
        budget,
      })
      expect(at.actions).toEqual([])
      // 15 x 500 = 7,500 > 7,000: compress the oldest until under; the newest 10 are never touched
      const over = runOptimizerStep({
        entries: Array.from({ length: 15 }, (_, i) => chatter(i, 500)),
        parameters: params,
        now: NOW,
        tokenCounter: counter,
        budget,
      })
      expect(over.actions.map((a) => [a.entryId, a.action])).toEqual([
        ['0', 'compress'],
        ['1', 'compress'],
      ])
      expect(over.actions[0]?.reason).toMatch(/^budget pressure: 7500 tokens > trigger 7000/)
      expect(over.snapshot.tokensAfter).toBeLessThanOrEqual(7_000)
    })

    it('drops already compressed entries when compressing is not enough', () => {
      const entries = [
        ...Array.from({ length: 5 }, (_, i) => chatter(i, 600, { isCompressed: true })),
        ...Array.from({ length: 10 }, (_, i) => chatter(i + 5, 500)),
      ]
      // 3,000 + 5,000 = 8,000 > 7,000; nothing outside the window is uncompressed: drop the oldest two
      const result = runOptimizerStep({
        entries,
        parameters: params,
        now: NOW,
        tokenCounter: counter,
        budget,
      })
      expect(result.actions.map((a) => [a.entryId, a.action])).toEqual([
        ['0', 'drop'],
        ['1', 'drop'],
      ])
      expect(result.snapshot.tokensAfter).toBe(6_800)
    })

    it('caps short-term memory at maxShortTermTokens, not below it', () => {
      const entries = Array.from({ length: 12 }, (_, i) => chatter(i, 100))
      const at = runOptimizerStep({
        entries,
        parameters: params,
        now: NOW,
        tokenCounter: counter,
        budget: { ...budget, maxShortTermTokens: 1_200 },
      })
      expect(at.actions).toEqual([])
      const over = runOptimizerStep({
        entries,
        parameters: params,
        now: NOW,
        tokenCounter: counter,
        budget: { ...budget, maxShortTermTokens: 1_199 },
      })
      expect(over.actions.map((a) => a.entryId)).toEqual(['0'])
    })

    it('counts long-term entries in usage but never compresses them for pressure', () => {
      const entries = [
        chatter(0, 7_500, { type: 'long_term', relevance: 1 }),
        ...Array.from({ length: 3 }, (_, i) => chatter(i + 1, 10)),
      ]
      expect(
        runOptimizerStep({
          entries,
          parameters: { ...P, fullMessageWindow: 10 },
          now: NOW,
          tokenCounter: counter,
          budget,
        }).actions,
      ).toEqual([])
    })
  })

  it('explains itself: the rules that fired, why, each parameter change, each promotion', () => {
    // The issue's idle agent: 0.5% of the budget used, an assistant question with the word "error".
    const question = 'Sorry to hear that, Dana. Can you share the exact error message you see?'
    const entries = [entry('1', question, { role: 'assistant' })]
    const params = { ...P, compressionTrigger: 0.725 }
    const result = runOptimizerStep({ entries, parameters: params, now: NOW, tokenCounter: counter })
    expect(result.snapshot.explanation).toEqual({
      rules: ['UNDER_BUDGET'],
      summary: ['under budget (usage 0.000 < 0.50): relax'],
      usageRatio: result.snapshot.usageRatio,
      savingsRatio: 0,
      targetUsageRatio: 0.65,
      overBudgetAbove: 0.75,
      underBudgetBelow: 0.5,
      emergencySavingsBelow: 0.05,
      changes: [
        { parameter: 'compressionTrigger', from: 0.725, to: 0.75 },
        { parameter: 'fullMessageWindow', from: 30, to: 31 },
        { parameter: 'minRelevance', from: 0.3, to: 0.275 },
      ],
      keyFactMode: 'spec',
      promotions: [
        { entryId: '1', excerpt: question, relevance: 0.85, keyFacts: [{ kind: 'error', text: 'error' }] },
      ],
      promotionCount: 1,
    })
    // The stricter key-fact mode does not promote a question about an error.
    const strict = runOptimizerStep({
      entries,
      parameters: params,
      now: NOW,
      tokenCounter: counter,
      keyFactMode: 'strict',
    })
    expect(strict.snapshot.explanation).toMatchObject({
      keyFactMode: 'strict',
      promotions: [],
      promotionCount: 0,
    })
    expect(strict.actions).toEqual([])
  })

  it('explains a tighten plus emergency run, and names no change for a parameter held at its bound', () => {
    const entries = [entry('1', 'an ordinary sentence of some length', { tokenCount: 8_000 })]
    const budget = { maxContextTokens: 10_000, systemPromptTokens: 0, responseReserveTokens: 0 }
    const atBound = { ...P, minRelevance: 0.7 }
    const result = runOptimizerStep({ entries, parameters: atBound, now: NOW, tokenCounter: counter, budget })
    expect(result.snapshot.explanation).toMatchObject({
      rules: ['OVER_BUDGET', 'EMERGENCY'],
      usageRatio: 0.8,
      savingsRatio: 0,
      changes: [
        { parameter: 'compressionTrigger', from: 0.7, to: 0.55 },
        { parameter: 'fullMessageWindow', from: 30, to: 28 },
      ],
    })
    // Within the margins no rule fires and nothing changes.
    const within = runOptimizerStep({
      entries: [entry('1', 'an ordinary sentence of some length', { tokenCount: 6_000 })],
      parameters: P,
      now: NOW,
      tokenCounter: counter,
      budget,
    })
    expect(within.snapshot.explanation).toMatchObject({ rules: [], summary: [], changes: [] })
  })

  it('adapts with the given (partial) optimizer config', () => {
    const entries = [entry('1', 'an ordinary sentence of some length')]
    const result = runOptimizerStep({
      entries,
      parameters: P,
      now: NOW,
      tokenCounter: counter,
      config: { learningRate: 0.1, underBudgetWindowStep: 4 },
    })
    expect(result.parameters).toMatchObject({
      compressionTrigger: 0.75,
      fullMessageWindow: 34,
      minRelevance: 0.25,
    })
  })

  it('handles an empty memory', () => {
    const result = runOptimizerStep({ entries: [], parameters: P, now: NOW, tokenCounter: counter })
    expect(result.actions).toEqual([])
    expect(result.snapshot).toMatchObject({ tokensBefore: 0, tokensAfter: 0, usageRatio: 0 })
  })
})

describe('efficiency report', () => {
  it('averages the savings per run', () => {
    expect(efficiencyReport({ totalOptimizations: 45, totalTokensSaved: 125_000 }, P)).toEqual({
      totalOptimizations: 45,
      totalTokensSaved: 125_000,
      avgSavingsPerRun: 2_778,
      currentParameters: P,
    })
    expect(efficiencyReport({ totalOptimizations: 0, totalTokensSaved: 0 }, P).avgSavingsPerRun).toBe(0)
  })
})

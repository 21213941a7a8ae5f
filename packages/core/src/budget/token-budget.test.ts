import { describe, expect, it } from 'vitest'
import { ValidationError } from '../errors.ts'
import {
  availableBudget,
  DEFAULT_TOKEN_BUDGET,
  parseTokenBudgetConfig,
  partitionMessages,
} from './token-budget.ts'

const messages = (...tokens: number[]) => tokens.map((tokenCount, i) => ({ id: `m${i}`, tokenCount }))
const ids = (list: { id: string }[]) => list.map((m) => m.id)

describe('token budget', () => {
  it('has the spec defaults and available budget 190,904', () => {
    expect(DEFAULT_TOKEN_BUDGET).toMatchObject({
      maxContextTokens: 200_000,
      systemPromptTokens: 5_000,
      responseReserveTokens: 4_096,
      fullMessageWindow: 30,
      compressionTriggerRatio: 0.7,
      fullSizeBudgetRatio: 0.85,
      compressedBudgetRatio: 0.95,
      compressedSizeRatio: 0.2,
      maxShortTermTokens: 190_000,
    })
    expect(availableBudget(DEFAULT_TOKEN_BUDGET)).toBe(190_904)
  })

  it('rejects a budget with nothing available, naming the field', () => {
    const config = parseTokenBudgetConfig({ maxContextTokens: 9_096 })
    expect(availableBudget({ ...config, maxContextTokens: 9_097 })).toBe(1)
    expect(() => availableBudget(config)).toThrow(ValidationError)
    expect(() => availableBudget(config)).toThrow(/systemPromptTokens \+ responseReserveTokens/)
    try {
      availableBudget(config)
    } catch (e) {
      expect((e as ValidationError).issues[0]).toMatchObject({
        field: 'budget.maxContextTokens',
        limit: 9_096,
      })
    }
  })

  it('rejects out-of-range settings with the field and its limit', () => {
    const error = (() => {
      try {
        parseTokenBudgetConfig({ compressionTriggerRatio: 1.5, fullMessageWindow: -1 })
      } catch (e) {
        return e as ValidationError
      }
    })()
    expect(error?.issues.map((i) => i.field).sort()).toEqual([
      'budget.compressionTriggerRatio',
      'budget.fullMessageWindow',
    ])
    expect(error?.issues.find((i) => i.field === 'budget.compressionTriggerRatio')?.limit).toBe(1)
  })

  // A budget of 1,000 available tokens keeps the arithmetic readable.
  const small = {
    maxContextTokens: 1_000,
    systemPromptTokens: 0,
    responseReserveTokens: 0,
    fullMessageWindow: 2,
  }

  it('keeps everything full at or under the compression trigger (70%)', () => {
    const at = partitionMessages(messages(300, 200, 200), small) // 700 = 70%
    expect(at.underPressure).toBe(false)
    expect(ids(at.full)).toEqual(['m0', 'm1', 'm2'])
    expect(at.compressed).toEqual([])
    const over = partitionMessages(messages(301, 200, 200), small) // 701 > 70%
    expect(over.underPressure).toBe(true)
  })

  it('always keeps the full message window, even past the budget', () => {
    const p = partitionMessages(messages(500, 700, 700), small)
    expect(ids(p.full)).toEqual(['m1', 'm2'])
    expect(ids(p.dropped)).toEqual(['m0'])
    expect(p.fullTokens).toBe(1_400)
  })

  it('keeps older messages full up to 85% of the budget, on both sides of it', () => {
    // window 400; +450 = 850 (exactly 85%) stays full
    const at = partitionMessages(messages(450, 200, 200), small)
    expect(ids(at.full)).toEqual(['m0', 'm1', 'm2'])
    // window 400; +451 = 851 > 85%: compressed at ceil(451 * 0.2) = 91
    const over = partitionMessages(messages(451, 200, 200), small)
    expect(ids(over.full)).toEqual(['m1', 'm2'])
    expect(over.compressed).toEqual([{ message: { id: 'm0', tokenCount: 451 }, compressedTokens: 91 }])
  })

  it('keeps older messages compressed up to 95% of the budget, else drops them', () => {
    // window 800; m1 (100) -> 900 > 850 so compressed at 20 (820 <= 950)
    // m0 (650) -> compressed 130 would make 950: exactly 95%, kept
    const at = partitionMessages(messages(650, 100, 400, 400), small)
    expect(ids(at.compressed.map((c) => c.message))).toEqual(['m0', 'm1'])
    expect(at.compressedTokens).toBe(150)
    expect(at.totalTokens).toBe(950)
    // m0 (655) -> compressed 131 would make 951 > 95%: dropped
    const over = partitionMessages(messages(655, 100, 400, 400), small)
    expect(ids(over.dropped)).toEqual(['m0'])
    expect(over.droppedTokens).toBe(655)
    expect(over.totalTokens).toBe(820)
  })

  it('judges each message on its own: a small old message can fit after a big one was dropped', () => {
    const p = partitionMessages(messages(10, 5_000, 400, 400), small)
    expect(ids(p.dropped)).toEqual(['m1'])
    expect(ids(p.full)).toEqual(['m0', 'm2', 'm3'])
  })

  it('returns every set oldest first with consistent totals', () => {
    const p = partitionMessages(messages(100, 300, 300, 300, 200, 200), small)
    expect(p.originalTokens).toBe(1_400)
    expect(p.usageRatio).toBeCloseTo(1.4)
    expect(p.fullTokens + p.compressedTokens).toBe(p.totalTokens)
    const all = [...ids(p.full), ...ids(p.compressed.map((c) => c.message)), ...ids(p.dropped)].sort()
    expect(all).toEqual(['m0', 'm1', 'm2', 'm3', 'm4', 'm5'])
    for (const set of [ids(p.full), ids(p.compressed.map((c) => c.message)), ids(p.dropped)]) {
      expect(set).toEqual([...set].sort())
    }
  })

  it('keeps everything full when the window covers every message, even under pressure', () => {
    const p = partitionMessages(messages(600, 600), small)
    expect(p.underPressure).toBe(true)
    expect(ids(p.full)).toEqual(['m0', 'm1'])
    expect(p.totalTokens).toBe(1_200)
  })

  it('handles an empty conversation', () => {
    const p = partitionMessages([], small)
    expect(p).toMatchObject({ full: [], originalTokens: 0, usageRatio: 0, underPressure: false })
  })

  it('follows configured ratios', () => {
    // trigger 0.5: 600 > 500 is pressure; full limit 0.6 = 600: m0 (200) + window 400 fits exactly
    const config = { ...small, compressionTriggerRatio: 0.5, fullSizeBudgetRatio: 0.6 }
    expect(ids(partitionMessages(messages(200, 200, 200), config).full)).toEqual(['m0', 'm1', 'm2'])
    const p = partitionMessages(messages(201, 200, 200), { ...config, compressedSizeRatio: 0.5 })
    expect(p.compressed).toEqual([{ message: { id: 'm0', tokenCount: 201 }, compressedTokens: 101 }])
  })
})

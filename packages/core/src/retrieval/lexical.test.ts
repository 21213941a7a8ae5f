import { describe, expect, it } from 'vitest'
import { ftsMatchExpression, LexicalPlanConfigSchema, planLexicalQuery, queryTerms } from './lexical.ts'

describe('lexical query terms', () => {
  it('keeps content words, lowercased and deduplicated', () => {
    expect(queryTerms('When did Caroline go to the LGBTQ support group? Caroline!')).toEqual([
      'caroline',
      'go',
      'lgbtq',
      'support',
      'group',
    ])
  })
  it('quotes every term so input is never FTS5 syntax', () => {
    expect(ftsMatchExpression('NEAR(a b) OR "x" AND col:y*')).toBe('"near" OR "b" OR "x" OR "col" OR "y"')
    expect(ftsMatchExpression('the and of')).toBeNull()
  })
})

describe('planLexicalQuery', () => {
  const df: Record<string, number> = { agent: 36_000, checkout: 35_000, w1a: 3_000, zebra: 12, price: 40_000 }
  const frequency = (term: string) => df[term] ?? 0

  it('keeps every term over a small index, or when none is common', () => {
    expect(planLexicalQuery(['agent', 'zebra'], frequency, 19_999)).toEqual({
      match: '"agent" OR "zebra"',
      fallback: null,
      selective: ['agent', 'zebra'],
      mode: 'any',
    })
    expect(planLexicalQuery(['w1a', 'zebra'], frequency, 100_000)?.mode).toBe('any')
    expect(planLexicalQuery([], frequency, 100_000)).toBeNull()
  })

  it('lets only the uncommon terms select documents, with the any-term query as fallback', () => {
    expect(planLexicalQuery(['agent', 'w1a', 'checkout', 'zebra'], frequency, 100_000)).toEqual({
      match: '"w1a" OR "zebra"',
      fallback: '"agent" OR "w1a" OR "checkout" OR "zebra"',
      selective: ['w1a', 'zebra'],
      mode: 'uncommon',
    })
  })

  it('asks for all of the terms when every one is common', () => {
    expect(planLexicalQuery(['agent', 'price'], frequency, 100_000)).toEqual({
      match: '"agent" AND "price"',
      fallback: '"agent" OR "price"',
      selective: ['agent', 'price'],
      mode: 'all-common',
    })
    // A single term is the query whatever its frequency.
    expect(planLexicalQuery(['agent'], frequency, 100_000)?.mode).toBe('any')
  })

  it('draws the line at the configured share, inclusive', () => {
    const config = { commonShare: 0.355, minDocuments: 1_000 }
    expect(planLexicalQuery(['agent', 'zebra'], frequency, 100_000, config)?.mode).toBe('uncommon')
    expect(planLexicalQuery(['checkout', 'zebra'], frequency, 100_000, config)?.mode).toBe('any')
    expect(() => LexicalPlanConfigSchema.parse({ commonShare: 0 })).toThrow()
  })
})

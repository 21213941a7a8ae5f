import { describe, expect, it } from 'vitest'
import { ftsMatchExpression, queryTerms } from './lexical.ts'

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

import { describe, expect, it } from 'vitest'
import { ValidationError } from '../errors.ts'
import {
  cooccurringTerms,
  DEFAULT_COOCCURRENCE_OPTIONS,
  MAX_COOCCURRENCE_CANDIDATES,
  MAX_COOCCURRENCE_QUERY_TERMS,
} from './cooccurrence.ts'

const N = 100
/** `count` documents holding `terms`. */
const repeat = (count: number, terms: string[]) => Array.from({ length: count }, () => [...terms])

// The 10 documents of an agent (of 100) holding "dance".
const danceDocuments = [
  ...repeat(4, ['dance', 'studio', 'music', 'the']),
  ...repeat(2, ['dance', 'music', 'rare', 'the']),
  ['dance', 'solo', 'the'],
  ...repeat(3, ['the', 'dance']),
]
const frequencies: Record<string, number> = { dance: 10, studio: 5, music: 50, rare: 2, solo: 1, the: 100 }
const df = (term: string) => frequencies[term] ?? 0
const holding = (term: string) => (term === 'dance' ? danceDocuments : [])

describe('cooccurringTerms', () => {
  it('weights associated terms by normalised PMI and keeps those with pmi ≥ minPmi', () => {
    const found = cooccurringTerms(['dance'], holding, df, N)
    // studio: c 4, pmi ln(4·100/(10·5)) = ln 8, npmi ln 8 / −ln 0.04 ≈ 0.646.
    // rare:   c 2, pmi ln(2·100/(10·2)) = ln 10, npmi ln 10 / −ln 0.02 ≈ 0.589.
    // music:  c 6, pmi ln(6·100/(10·50)) = ln 1.2 ≈ 0.18 < 1: chance. once: c 1 < 2. the: a stop word.
    expect(found.map((t) => t.term)).toEqual(['studio', 'rare'])
    expect(found[0]?.weight).toBeCloseTo(Math.log(8) / -Math.log(0.04), 12)
    expect(found[1]?.weight).toBeCloseTo(Math.log(10) / -Math.log(0.02), 12)
    expect(found[0]?.weight).toBeCloseTo(0.646, 3)
  })

  it('honours minPmi, minCooccurrence and maxTerms', () => {
    const loose = cooccurringTerms(['dance'], holding, df, N, { minPmi: 0, minCooccurrence: 1 })
    // solo: c 1, pmi ln(100/10) = ln 10, npmi ln 10 / ln 100 = 0.5, below rare's 0.589.
    expect(loose.map((t) => t.term)).toEqual(['studio', 'rare', 'solo', 'music'])
    expect(loose.find((t) => t.term === 'solo')?.weight).toBeCloseTo(0.5, 12)
    expect(loose.find((t) => t.term === 'music')?.weight).toBeCloseTo(Math.log(1.2) / -Math.log(0.06), 12)
    expect(cooccurringTerms(['dance'], holding, df, N, { minCooccurrence: 3 }).map((t) => t.term)).toEqual([
      'studio',
    ])
    expect(cooccurringTerms(['dance'], holding, df, N, { maxTerms: 1 }).map((t) => t.term)).toEqual([
      'studio',
    ])
    expect(cooccurringTerms(['dance'], holding, df, N, { maxTerms: 0 })).toEqual([])
    expect(DEFAULT_COOCCURRENCE_OPTIONS).toEqual({
      maxTerms: 5,
      minCooccurrence: 2,
      maxDocumentsPerTerm: 200,
      minPmi: 1,
    })
  })

  it('gives weight 1 to terms always found together, and nothing when they are in every document', () => {
    const pair = () => repeat(2, ['left', 'right'])
    expect(cooccurringTerms(['left'], pair, () => 2, N)).toEqual([{ term: 'right', weight: 1 }])
    expect(cooccurringTerms(['left'], pair, () => 2, 2)).toEqual([])
  })

  it('skips a query term held by more documents than maxDocumentsPerTerm without reading them', () => {
    let read = 0
    const counting = (term: string) => {
      read++
      return holding(term)
    }
    expect(cooccurringTerms(['dance'], counting, df, N, { maxDocumentsPerTerm: 9 })).toEqual([])
    expect(read).toBe(0)
    expect(cooccurringTerms(['dance'], counting, df, N, { maxDocumentsPerTerm: 10 })).toHaveLength(2)
  })

  it('leaves out the query terms and takes the best weight over them', () => {
    const studioDocuments = [...repeat(3, ['dance', 'studio']), ...repeat(2, ['studio', 'mirror'])]
    const both = (term: string) => (term === 'studio' ? studioDocuments : holding(term))
    const found = cooccurringTerms(['dance', 'studio'], both, (t) => (t === 'mirror' ? 2 : df(t)), N)
    // mirror: c 2 with studio (df 5): pmi ln(200/10) = ln 20, npmi ln 20 / ln 50 ≈ 0.766.
    expect(found.map((t) => t.term)).toEqual(['mirror', 'rare'])
    expect(found[0]?.weight).toBeCloseTo(Math.log(20) / Math.log(50), 12)
  })

  it('breaks ties by term', () => {
    const docs = () => [
      ['q', 'zeta', 'alpha'],
      ['q', 'alpha', 'zeta'],
    ]
    expect(cooccurringTerms(['q'], docs, () => 2, N).map((t) => t.term)).toEqual(['alpha', 'zeta'])
  })

  it('returns nothing for no query terms, unknown terms or an empty history', () => {
    expect(cooccurringTerms([], holding, df, N)).toEqual([])
    expect(cooccurringTerms(['', 'nothing'], holding, df, N)).toEqual([])
    expect(cooccurringTerms(['dance'], () => [], df, N)).toEqual([])
    expect(cooccurringTerms(['dance'], holding, df, 0)).toEqual([])
  })

  it('bounds its work: query terms and documentFrequency lookups are capped', () => {
    const asked: string[] = []
    const terms = Array.from({ length: MAX_COOCCURRENCE_QUERY_TERMS + 10 }, (_, i) => `q${i}`)
    cooccurringTerms(
      terms,
      (t) => {
        asked.push(t)
        return []
      },
      () => 1,
      N,
    )
    expect(asked).toHaveLength(MAX_COOCCURRENCE_QUERY_TERMS)

    const wide = Array.from({ length: MAX_COOCCURRENCE_CANDIDATES + 500 }, (_, i) => `w${i}`)
    let lookups = 0
    cooccurringTerms(
      ['q'],
      () => repeat(2, ['q', ...wide]),
      (t) => {
        if (t !== 'q') lookups++
        return 2
      },
      N,
    )
    expect(lookups).toBe(MAX_COOCCURRENCE_CANDIDATES)
  })

  it('rejects options out of range, naming the field and limit', () => {
    try {
      cooccurringTerms(['dance'], holding, df, N, { minCooccurrence: 0 })
      expect.unreachable()
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError)
      expect((error as ValidationError).issues[0]).toMatchObject({ field: 'minCooccurrence', limit: 1 })
    }
    expect(() => cooccurringTerms([], holding, df, N, { minPmi: -1 })).toThrow(ValidationError)
  })
})

import { describe, expect, it } from 'vitest'
import { ValidationError } from '../errors.ts'
import { seededRandom } from '../random.ts'
import {
  DEFAULT_WEIGHTED_STRATEGY_WEIGHTS,
  type MmrCandidate,
  mmrRerank,
  SIMILARITY_IMPORTANCE_WEIGHTS,
  temporalDecay,
  weightedStrategyScores,
} from './ranking.ts'

const DAY = 86_400_000

describe('temporalDecay', () => {
  it('halves every half-life', () => {
    expect(temporalDecay(0, 30)).toBe(1)
    expect(temporalDecay(30 * DAY, 30)).toBe(0.5)
    expect(temporalDecay(60 * DAY, 30)).toBe(0.25)
    expect(temporalDecay(15 * DAY, 30)).toBeCloseTo(Math.SQRT1_2)
    expect(temporalDecay(7 * DAY, 7)).toBe(0.5)
  })

  it('treats a future timestamp as new', () => {
    expect(temporalDecay(-5 * DAY, 30)).toBe(1)
  })

  it('rejects a half-life that is not positive', () => {
    expect(() => temporalDecay(DAY, 0)).toThrow(ValidationError)
  })
})

describe('mmrRerank', () => {
  const candidates: MmrCandidate<string>[] = [
    { item: 'a', score: 1, text: 'Trip to Paris: Eiffel tower' },
    // Four of its five content words are a's: a near-duplicate.
    { item: 'b', score: 0.95, text: 'Trip to Paris: Eiffel tower photos' },
    { item: 'c', score: 0.8, text: 'Visited a museum in Berlin' },
  ]
  const items = (picked: MmrCandidate<string>[]) => picked.map((c) => c.item)

  it('keeps score order at λ = 1', () => {
    expect(items(mmrRerank(candidates, 3, 1))).toEqual(['a', 'b', 'c'])
    expect(items(mmrRerank([...candidates].reverse(), 3, 1))).toEqual(['a', 'b', 'c'])
  })

  it('pushes a near-duplicate below a diverse candidate at λ = 0.5', () => {
    // After a: b scores 0.5·0.95 − 0.5·0.8 = 0.075, c scores 0.5·0.8 = 0.4.
    expect(items(mmrRerank(candidates, 3, 0.5))).toEqual(['a', 'c', 'b'])
  })

  it('says why each pick is where it is: b outscores c but repeats a (issue 10)', () => {
    const [a, c, b] = mmrRerank(candidates, 3, 0.5)
    expect(a).toMatchObject({ item: 'a', relevance: 1, redundancy: 0, redundantWith: null, mmrScore: 0.5 })
    expect(c).toMatchObject({ item: 'c', relevance: 0.8, redundancy: 0, redundantWith: null })
    expect(c?.mmrScore).toBeCloseTo(0.4)
    expect(b).toMatchObject({ item: 'b', relevance: 0.95, redundancy: 0.8, redundantWith: 0 })
    expect(b?.mmrScore).toBeCloseTo(0.075)
    // c is above b with a lower score: its mmrScore is higher.
    expect(c?.score).toBeLessThan(b?.score as number)
    expect(c?.mmrScore).toBeGreaterThan(b?.mmrScore as number)
  })

  it('returns picks in non-increasing mmrScore, whatever the candidates (seeded)', () => {
    const random = seededRandom(1_015)
    const vocabulary = 'paris trip hotel louvre may museum berlin train ticket dinner wine map'.split(' ')
    for (let run = 0; run < 200; run++) {
      const pool = Array.from({ length: 1 + Math.floor(random() * 30) }, (_, i) => ({
        item: i,
        score: random(),
        text: Array.from(
          { length: 1 + Math.floor(random() * 6) },
          () => vocabulary[Math.floor(random() * vocabulary.length)],
        ).join(' '),
      }))
      const lambda = random()
      const picked = mmrRerank(pool, 1 + Math.floor(random() * 20), lambda)
      for (const [i, pick] of picked.entries()) {
        expect(pick.mmrScore).toBeCloseTo(lambda * pick.relevance - (1 - lambda) * pick.redundancy, 12)
        if (i > 0) expect(pick.mmrScore).toBeLessThanOrEqual((picked[i - 1] as { mmrScore: number }).mmrScore)
        if (pick.redundantWith !== null) expect(pick.redundantWith).toBeLessThan(i)
        else expect(pick.redundancy).toBe(0)
      }
    }
  })

  it('weighs relevance relative to the best score, whatever the scale', () => {
    const scaled = candidates.map((c) => ({ ...c, score: c.score * 40 }))
    expect(items(mmrRerank(scaled, 3, 0.5))).toEqual(['a', 'c', 'b'])
  })

  it('breaks ties by input order', () => {
    const tied = ['x', 'y', 'z'].map((item) => ({ item, score: 0.5, text: `${item} unrelated ${item}words` }))
    expect(items(mmrRerank(tied, 3, 0.7))).toEqual(['x', 'y', 'z'])
    expect(items(mmrRerank(tied, 3, 0))).toEqual(['x', 'y', 'z'])
  })

  it('respects the limit and empty input', () => {
    expect(items(mmrRerank(candidates, 2, 0.5))).toEqual(['a', 'c'])
    expect(mmrRerank(candidates, 0, 0.5)).toEqual([])
    expect(mmrRerank([], 5, 0.5)).toEqual([])
    expect(mmrRerank(candidates, 10, 0.5)).toHaveLength(3)
  })

  it('copes with scores that are all zero', () => {
    const zero = candidates.map((c) => ({ ...c, score: 0 }))
    expect(items(mmrRerank(zero, 3, 0.5))).toEqual(['a', 'c', 'b'])
  })

  it('rejects λ outside [0, 1] and a negative limit', () => {
    expect(() => mmrRerank(candidates, 3, 1.5)).toThrow(ValidationError)
    expect(() => mmrRerank(candidates, -1, 0.5)).toThrow(ValidationError)
  })
})

describe('weightedStrategyScores', () => {
  it('merges the three strategies as spec 002 does', () => {
    expect(DEFAULT_WEIGHTED_STRATEGY_WEIGHTS).toEqual({ recency: 0.3, similarity: 0.5, importance: 0.2 })
    // limit 2 → candidateLimit 6 (spec 002: three times the limit).
    const scores = weightedStrategyScores({
      byRecency: ['a', 'b', 'c'],
      bySimilarity: [
        { id: 'b', similarity: 0.9 },
        { id: 'd', similarity: 0.8 },
      ],
      byImportance: [
        { id: 'a', importance: 0.5 },
        { id: 'd', importance: 1 },
      ],
      candidateLimit: 6,
      weights: DEFAULT_WEIGHTED_STRATEGY_WEIGHTS,
    })
    expect([...scores.keys()]).toEqual(['b', 'd', 'a', 'c'])
    // b: 0.3 · (1 − 1/6) + 0.5 · 0.9
    expect(scores.get('b')?.score).toBeCloseTo(0.7)
    expect(scores.get('b')).toMatchObject({ similarity: 0.9, importance: 0 })
    expect(scores.get('b')?.recency).toBeCloseTo(5 / 6)
    // d: 0.5 · 0.8 + 0.2 · 1
    expect(scores.get('d')?.score).toBeCloseTo(0.6)
    // a: 0.3 · 1 + 0.2 · 0.5
    expect(scores.get('a')?.score).toBeCloseTo(0.4)
    expect(scores.get('a')).toMatchObject({ recency: 1, similarity: 0, importance: 0.5 })
    // c: 0.3 · (1 − 2/6)
    expect(scores.get('c')?.score).toBeCloseTo(0.2)
  })

  it('gives spec 001 scores with the similarity/importance weights', () => {
    const scores = weightedStrategyScores({
      byRecency: [],
      bySimilarity: [{ id: 'm', similarity: 0.8 }],
      byImportance: [{ id: 'm', importance: 0.5 }],
      candidateLimit: 1,
      weights: { recency: 0, ...SIMILARITY_IMPORTANCE_WEIGHTS },
    })
    expect(scores.get('m')?.score).toBeCloseTo(0.7 * 0.8 + 0.3 * 0.5)
  })

  it('reads each strategy to candidateLimit only', () => {
    const scores = weightedStrategyScores({
      byRecency: ['a', 'b', 'c'],
      bySimilarity: [],
      byImportance: [],
      candidateLimit: 2,
      weights: DEFAULT_WEIGHTED_STRATEGY_WEIGHTS,
    })
    expect([...scores.keys()]).toEqual(['a', 'b'])
    expect(scores.get('b')?.recency).toBe(0.5)
  })

  it('rejects a candidateLimit below 1', () => {
    expect(() =>
      weightedStrategyScores({
        byRecency: [],
        bySimilarity: [],
        byImportance: [],
        candidateLimit: 0,
        weights: DEFAULT_WEIGHTED_STRATEGY_WEIGHTS,
      }),
    ).toThrow(ValidationError)
  })
})

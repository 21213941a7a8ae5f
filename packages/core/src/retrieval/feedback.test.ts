import { describe, expect, it } from 'vitest'
import { ValidationError } from '../errors.ts'
import {
  DEFAULT_FEEDBACK_OPTIONS,
  feedbackTermScores,
  feedbackTerms,
  MAX_FEEDBACK_TERMS_PER_DOCUMENT,
} from './feedback.ts'

// The agent's own statistics: 100 documents.
const N = 100
const frequencies: Record<string, number> = {
  canvas: 10,
  sunset: 5,
  lake: 2,
  acrylic: 3,
  kids: 50,
  paint: 20,
}
const df = (term: string) => frequencies[term] ?? 0

const top = [
  ['paint', 'canvas', 'sunset', 'canvas', 'lake'],
  ['paint', 'canvas', 'acrylic', 'sunset'],
  ['canvas', 'kids', 'the'],
]

describe('feedbackTerms', () => {
  it('ranks terms shared by the top documents by summed tf · ln(N/df)', () => {
    const scored = feedbackTermScores(top, ['paint'], df, N)
    // canvas: tf 2 + 1 + 1 = 4, idf ln(100/10); sunset: tf 2, idf ln(100/5). lake, acrylic and
    // kids occur in one document only; "the" is a stop word; "paint" is the query's.
    expect(scored.map((t) => t.term)).toEqual(['canvas', 'sunset'])
    expect(scored[0]?.score).toBeCloseTo(4 * Math.log(10), 12)
    expect(scored[1]?.score).toBeCloseTo(2 * Math.log(20), 12)
    expect(feedbackTerms(top, ['paint'], df, N)).toEqual(['canvas', 'sunset'])
  })

  it('keeps a term of the only document when one was given', () => {
    expect(feedbackTerms([top[0] as string[]], ['paint'], df, N)).toEqual(['canvas', 'lake', 'sunset'])
    // canvas 2·ln 10 = 4.61, lake ln 50 = 3.91, sunset ln 20 = 3.00.
  })

  it('reads only the top `documents` and returns at most `terms`', () => {
    const two = feedbackTermScores(top, ['paint'], df, N, { documents: 2 })
    expect(two.map((t) => t.term)).toEqual(['canvas', 'sunset'])
    expect(two[0]?.score).toBeCloseTo(3 * Math.log(10), 12)
    expect(feedbackTerms(top, ['paint'], df, N, { terms: 1 })).toEqual(['canvas'])
    expect(feedbackTerms(top, ['paint'], df, N, { terms: 0 })).toEqual([])
    expect(DEFAULT_FEEDBACK_OPTIONS).toEqual({ documents: 5, terms: 5 })
  })

  it('breaks ties by term, whatever the order of the documents', () => {
    const tied = [
      ['zebra', 'apple'],
      ['apple', 'zebra'],
    ]
    const same = () => 10
    expect(feedbackTerms(tied, [], same, N)).toEqual(['apple', 'zebra'])
    expect(feedbackTerms([...tied].reverse(), [], same, N)).toEqual(['apple', 'zebra'])
  })

  it('never expands with a term every document holds, and survives stale statistics', () => {
    expect(feedbackTerms(top, [], () => N, N)).toEqual([])
    // A reported df of 0 (or NaN) counts as the documents seen holding it: canvas in 3 of 100.
    const scored = feedbackTermScores(top, ['paint'], () => 0, N)
    expect(scored[0]).toEqual({ term: 'canvas', score: 4 * Math.log(100 / 3) })
    expect(feedbackTermScores(top, ['paint'], () => Number.NaN, N)[0]?.term).toBe('canvas')
    // A document count below df is raised to df: idf 0, nothing to add.
    expect(feedbackTerms(top, ['paint'], df, 0)).toEqual([])
  })

  it('returns nothing without documents', () => {
    expect(feedbackTerms([], ['paint'], df, N)).toEqual([])
    expect(feedbackTerms([[], []], ['paint'], df, N)).toEqual([])
  })

  it('reads at most MAX_FEEDBACK_TERMS_PER_DOCUMENT terms of a document', () => {
    const huge = Array.from({ length: MAX_FEEDBACK_TERMS_PER_DOCUMENT * 3 }, () => 'lake')
    expect(feedbackTermScores([huge], [], df, N)).toEqual([
      { term: 'lake', score: MAX_FEEDBACK_TERMS_PER_DOCUMENT * Math.log(50) },
    ])
  })

  it('rejects options out of range, naming the field and limit', () => {
    try {
      feedbackTerms(top, [], df, N, { documents: 0 })
      expect.unreachable()
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError)
      expect((error as ValidationError).issues[0]).toMatchObject({ field: 'documents', limit: 1 })
    }
    expect(() => feedbackTerms(top, [], df, N, { terms: 101 })).toThrow(ValidationError)
  })
})

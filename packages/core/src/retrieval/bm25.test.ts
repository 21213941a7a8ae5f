import { describe, expect, it } from 'vitest'
import { BM25_B, BM25_K1, bm25Idf, bm25Scores } from './bm25.ts'

describe('bm25 over an agent-s own counts', () => {
  it("uses FTS5's idf, floored for a term in most documents", () => {
    expect(bm25Idf(1, 10)).toBeCloseTo(Math.log(9.5 / 1.5), 12)
    expect(bm25Idf(9, 10)).toBe(1e-6)
  })

  it('saturates frequency and normalises by length against the average', () => {
    const term = {
      documentFrequency: 2,
      frequencies: new Map([
        ['a', 1],
        ['b', 3],
      ]),
    }
    const lengths: Record<string, number> = { a: 10, b: 20, c: 5 }
    const scores = bm25Scores(['a', 'b', 'c'], [term], (id) => lengths[id] ?? 0, {
      documents: 10,
      averageLength: 10,
    })
    const idf = Math.log(8.5 / 2.5)
    const expected = (f: number, len: number) =>
      (idf * (f * (BM25_K1 + 1))) / (f + BM25_K1 * (1 - BM25_B + (BM25_B * len) / 10))
    expect(scores.get('a')).toBeCloseTo(expected(1, 10), 12)
    expect(scores.get('b')).toBeCloseTo(expected(3, 20), 12)
    expect(scores.get('c')).toBe(0)
  })
})

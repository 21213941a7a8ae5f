import { describe, expect, it } from 'vitest'
import { ValidationError } from '../errors.ts'
import { bytesToVector, cosineSimilarity, ExactVectorIndex, vectorNorm, vectorToBytes } from './vector.ts'

// A small seeded generator so the "random" vectors are the same on every run.
function seeded(seed: number) {
  let state = seed >>> 0
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0
    return state / 2 ** 32 - 0.5
  }
}

describe('vector storage', () => {
  it('round-trips Float32 bytes, even from an unaligned offset', () => {
    const vector = Float32Array.from([1.5, -2.25, 3e-8, 0])
    const bytes = vectorToBytes(vector)
    expect(bytes.byteLength).toBe(16)
    const padded = new Uint8Array(17)
    padded.set(bytes, 1)
    expect(bytesToVector(padded.subarray(1))).toEqual(vector)
    expect(() => bytesToVector(new Uint8Array(5))).toThrow(ValidationError)
  })

  it('computes cosine similarity', () => {
    expect(cosineSimilarity([1, 0], [0, 1])).toBe(0)
    expect(cosineSimilarity([1, 1], [2, 2])).toBeCloseTo(1)
    expect(cosineSimilarity([1, 0], [-1, 0])).toBe(-1)
    expect(cosineSimilarity([0, 0], [1, 0])).toBe(0)
    expect(() => cosineSimilarity([1, 0], [1, 0, 0])).toThrow(ValidationError)
    expect(vectorNorm([3, 4])).toBe(5)
  })
})

describe('ExactVectorIndex', () => {
  it('returns the same top-k as a full sort of cosine scores', () => {
    const random = seeded(42)
    const index = new ExactVectorIndex()
    const vectors = new Map<string, Float32Array>()
    for (let i = 0; i < 500; i++) {
      const v = Float32Array.from({ length: 34 }, random)
      vectors.set(`v${i}`, v)
      index.upsert(`v${i}`, v)
    }
    const query = Float32Array.from({ length: 34 }, random)
    const expected = [...vectors]
      .map(([id, v]) => ({ id, similarity: cosineSimilarity(query, v) }))
      .sort((a, b) => b.similarity - a.similarity)
      .slice(0, 10)
    const hits = index.search(query, 10)
    expect(hits.map((h) => h.id)).toEqual(expected.map((e) => e.id))
    for (const [i, h] of hits.entries()) expect(h.similarity).toBeCloseTo(expected[i]!.similarity, 5)
  })

  it('replaces, removes and keeps the buffer dense', () => {
    const index = new ExactVectorIndex()
    index.upsert('a', Float32Array.from([1, 0]))
    index.upsert('b', Float32Array.from([0, 1]))
    index.upsert('c', Float32Array.from([1, 1]))
    index.upsert('a', Float32Array.from([-1, 0]))
    expect(index.size).toBe(3)
    expect(index.search(Float32Array.from([-1, 0]), 1)[0]).toEqual({ id: 'a', similarity: 1 })
    expect(index.remove('a')).toBe(true)
    expect(index.remove('a')).toBe(false)
    expect(index.size).toBe(2)
    expect(index.search(Float32Array.from([1, 1]), 5).map((h) => h.id)).toEqual(['c', 'b'])
  })

  it('refuses a vector of another dimension, naming the expected one', () => {
    const index = new ExactVectorIndex()
    index.upsert('a', Float32Array.from([1, 2, 3]))
    const error = (() => {
      try {
        index.search(Float32Array.from([1, 2]), 1)
      } catch (e) {
        return e as ValidationError
      }
    })()
    expect(error?.issues[0]).toMatchObject({ field: 'vector', limit: 3 })
    expect(() => index.upsert('b', Float32Array.from([1]))).toThrow(ValidationError)
  })

  it('scores a stored zero vector 0, takes the whole part of a limit, and caps it at the size', () => {
    const index = new ExactVectorIndex()
    index.upsert('zero', Float32Array.from([0, 0]))
    index.upsert('x', Float32Array.from([3, 0]))
    index.upsert('y', Float32Array.from([0, -2]))
    const query = Float32Array.from([1, 0])
    expect(index.search(query, 10)).toEqual([
      { id: 'x', similarity: 1 },
      { id: 'zero', similarity: 0 },
      { id: 'y', similarity: 0 },
    ])
    expect(index.search(query, 1.9)).toEqual([{ id: 'x', similarity: 1 }])
    expect(index.search(query, 0.5)).toEqual([])
    expect(index.search(query, Number.NaN)).toEqual([])
  })

  it('accepts a new dimension once emptied', () => {
    const index = new ExactVectorIndex()
    index.upsert('a', Float32Array.from([1, 0]))
    expect(index.dimensions).toBe(2)
    index.remove('a')
    expect(index.dimensions).toBeNull()
    index.upsert('b', Float32Array.from([1, 0, 0]))
    expect(index.dimensions).toBe(3)
    expect(index.size).toBe(1)
  })

  it('grows its buffer past the initial capacity without losing vectors', () => {
    const index = new ExactVectorIndex()
    for (let i = 0; i < 40; i++) index.upsert(`v${i}`, Float32Array.from([i + 1, 1]))
    expect(index.size).toBe(40)
    expect(index.search(Float32Array.from([1, 0]), 1)[0]?.id).toBe('v39')
    expect(index.search(Float32Array.from([0, 1]), 1)[0]?.id).toBe('v0')
  })

  it('returns nothing for a zero query, an empty index or a zero limit', () => {
    const index = new ExactVectorIndex()
    expect(index.search(Float32Array.from([1]), 3)).toEqual([])
    index.upsert('a', Float32Array.from([1, 0]))
    expect(index.search(Float32Array.from([0, 0]), 3)).toEqual([])
    expect(index.search(Float32Array.from([1, 0]), 0)).toEqual([])
  })
})

describe('ExactVectorIndex scan config', () => {
  it('rejects a kernel threshold or mode out of range', () => {
    expect(() => new ExactVectorIndex({ kernelAbove: -1 })).toThrow(ValidationError)
    expect(() => new ExactVectorIndex({ kernel: 'gpu' as never })).toThrow(ValidationError)
  })

  it('scans in JavaScript below the threshold and moves to the kernel from it', () => {
    const index = new ExactVectorIndex({ kernelAbove: 40 })
    const random = seeded(7)
    for (let i = 0; i < 20; i++) index.upsert(`v${i}`, Float32Array.from({ length: 8 }, random))
    expect(index.usesKernel).toBe(false)
    for (let i = 20; i < 60; i++) index.upsert(`v${i}`, Float32Array.from({ length: 8 }, random))
    expect(index.usesKernel).toBe(true)
    expect(index.search(index.vectorOf('v3')!, 1)[0]!.id).toBe('v3')
  })
})

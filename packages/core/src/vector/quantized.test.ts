import { describe, expect, it } from 'vitest'
import { ValidationError } from '../errors.ts'
import { seededRandom } from '../random.ts'
import { recallAtK } from './calibration.ts'
import { QuantizedVectorIndex } from './quantized.ts'
import { type ClusteredVectorsOptions, clusteredVectors } from './synthetic.ts'
import { cosineSimilarity, ExactVectorIndex, type VectorIndex } from './vector.ts'

const SETS: { name: string; seed: number; options: Partial<ClusteredVectorsOptions> }[] = [
  {
    name: 'clustered in a 16-dim subspace',
    seed: 1,
    options: { dimensions: 64, latentDimensions: 16, clusters: 50 },
  },
  {
    name: 'clustered in the full space',
    seed: 2,
    options: { dimensions: 64, latentDimensions: 0, clusters: 50 },
  },
  {
    name: 'tight clusters (near-duplicates)',
    seed: 3,
    options: { dimensions: 64, clusterSpread: 0.05, clusters: 20 },
  },
  { name: 'isotropic Gaussian', seed: 4, options: { dimensions: 64, latentDimensions: 0, clusters: 1 } },
  { name: 'odd dimension count', seed: 5, options: { dimensions: 37, latentDimensions: 8, clusters: 30 } },
]

/** Fills both indexes with the same writes: inserts, some replaced, some removed. */
function fill(random: () => number, source: ReturnType<typeof clusteredVectors>, indexes: VectorIndex[]) {
  for (let i = 0; i < 3_000; i++) {
    const vector = source.next()
    // Unnormalised input: the index must normalise it itself.
    for (let j = 0; j < vector.length; j++) vector[j] = (vector[j] as number) * (1 + 3 * random())
    for (const index of indexes) index.upsert(`v${i}`, vector)
  }
  for (let i = 0; i < 300; i++) {
    const id = `v${Math.floor(random() * 3_000)}`
    const vector = source.next()
    for (const index of indexes) {
      if (i % 2 === 0) index.remove(id)
      else index.upsert(id, vector)
    }
  }
}

describe('QuantizedVectorIndex', () => {
  it.each(SETS)('matches the exact top-10 (recall@10 ≥ 0.99) on $name', ({ seed, options }) => {
    const random = seededRandom(seed)
    const source = clusteredVectors(random, options)
    const exact = new ExactVectorIndex()
    const quantized = new QuantizedVectorIndex()
    fill(random, source, [exact, quantized])
    expect(quantized.size).toBe(exact.size)
    const truth = []
    const found = []
    for (let q = 0; q < 60; q++) {
      const query = source.next()
      truth.push(exact.search(query, 10))
      found.push(quantized.search(query, 10))
    }
    expect(recallAtK(truth, found, 10)).toBeGreaterThanOrEqual(0.99)
    // Rescoring is exact: a hit both return carries the same similarity.
    for (const [q, hits] of found.entries()) {
      const exactById = new Map(truth[q]!.map((h) => [h.id, h.similarity]))
      for (const hit of hits)
        if (exactById.has(hit.id)) expect(hit.similarity).toBeCloseTo(exactById.get(hit.id)!, 6)
    }
  })

  it('returns exact similarities, best first, and handles small and degenerate cases', () => {
    const index = new QuantizedVectorIndex({ rescoreFactor: 1 })
    expect(index.search(Float32Array.from([1, 0]), 3)).toEqual([])
    index.upsert('zero', Float32Array.from([0, 0, 0]))
    index.upsert('x', Float32Array.from([3, 0, 0]))
    index.upsert('xy', Float32Array.from([1, 1, 0]))
    const hits = index.search(Float32Array.from([2, 0, 0]), 10)
    expect(hits.map((h) => h.id)).toEqual(['x', 'xy', 'zero'])
    expect(hits[1]!.similarity).toBeCloseTo(cosineSimilarity([1, 1, 0], [1, 0, 0]), 6)
    expect(index.search(Float32Array.from([0, 0, 0]), 3)).toEqual([])
    expect(() => index.search(Float32Array.from([1, 0]), 3)).toThrow(ValidationError)
    index.remove('x')
    index.remove('xy')
    index.remove('zero')
    // Emptied, it takes another dimension, with no stale codes from the old layout.
    index.upsert('a', Float32Array.from([1, 2, 3, 4, 5]))
    index.upsert('b', Float32Array.from([-1, 0, 0, 0, 0]))
    expect(index.search(Float32Array.from([-1, 0, 0, 0, 0]), 1)).toEqual([{ id: 'b', similarity: 1 }])
  })

  it('keeps int32 sums exact at high dimension (no overflow at 3,072)', () => {
    const index = new QuantizedVectorIndex()
    const dims = 3_072
    const ones = new Float32Array(dims).fill(1)
    const almost = new Float32Array(dims).fill(1)
    almost[0] = 0.5
    const opposite = new Float32Array(dims).fill(-1)
    index.upsert('ones', ones)
    index.upsert('almost', almost)
    index.upsert('opposite', opposite)
    expect(index.search(ones, 3).map((h) => h.id)).toEqual(['ones', 'almost', 'opposite'])
  })

  it('rejects a rescore factor out of range', () => {
    expect(() => new QuantizedVectorIndex({ rescoreFactor: 0 })).toThrow(ValidationError)
  })
})

describe('ExactVectorIndex, randomized', () => {
  it.each([
    { scan: 'in JavaScript', config: { kernel: 'javascript' as const } },
    { scan: 'on the SIMD kernel', config: { kernelAbove: 0 } },
    { scan: 'moving to the kernel midway', config: { kernelAbove: 200 } },
  ])('matches a full sort of cosine scores after inserts, replacements and removals, $scan', ({ config }) => {
    for (const [seed, dims] of [
      [11, 5],
      [12, 34],
      [13, 64],
    ] as const) {
      const random = seededRandom(seed)
      const source = clusteredVectors(random, { dimensions: dims, latentDimensions: 0, clusters: 10 })
      const index = new ExactVectorIndex(config)
      const truth = new Map<string, Float32Array>()
      for (let i = 0; i < 800; i++) {
        const id = `v${Math.floor(random() * 600)}`
        if (random() < 0.2) {
          expect(index.remove(id)).toBe(truth.delete(id))
        } else {
          const vector = source.next()
          index.upsert(id, vector)
          truth.set(id, vector)
        }
      }
      for (let q = 0; q < 20; q++) {
        const query = source.next()
        const expected = [...truth]
          .map(([id, v]) => ({ id, similarity: cosineSimilarity(query, v) }))
          .sort((a, b) => b.similarity - a.similarity)
          .slice(0, 10)
        const hits = index.search(query, 10)
        expect(hits.map((h) => h.id)).toEqual(expected.map((e) => e.id))
        for (const [i, h] of hits.entries()) expect(h.similarity).toBeCloseTo(expected[i]!.similarity, 5)
      }
      expect(index.usesKernel).toBe(config.kernel !== 'javascript')
    }
  })
})

describe('the SIMD kernel against the JavaScript scan', () => {
  it.each([37, 64, 384])(
    'gives the same hits at %i dims, also for an index that moves to the kernel as it grows',
    (dims) => {
      const random = seededRandom(dims)
      const source = clusteredVectors(random, { dimensions: dims, latentDimensions: 16, clusters: 40 })
      const javascript = new QuantizedVectorIndex({ kernel: 'javascript' })
      const kernel = new QuantizedVectorIndex({ kernelAbove: 0 })
      const moved = new QuantizedVectorIndex({ kernelAbove: 1_000 })
      fill(random, source, [javascript, kernel, moved])
      expect([javascript.usesKernel, kernel.usesKernel, moved.usesKernel]).toEqual([false, true, true])
      for (let q = 0; q < 40; q++) {
        const query = source.next()
        // The int8 scan is integer arithmetic on both sides and rescoring reads the same floats.
        const expected = javascript.search(query, 10)
        expect(kernel.search(query, 10)).toEqual(expected)
        expect(moved.search(query, 10)).toEqual(expected)
        // The exact scan sums in f32 on the kernel, in f64 in JavaScript.
        const exact = javascript.searchExact(query, 10)
        for (const index of [kernel, moved]) {
          const hits = index.searchExact(query, 10)
          expect(hits.map((h) => h.id)).toEqual(exact.map((h) => h.id))
          for (const [i, hit] of hits.entries()) expect(hit.similarity).toBeCloseTo(exact[i]!.similarity, 5)
        }
      }
    },
  )

  it('leaves no copy of a removed vector in the float or int8 buffers, and lets the kernel go when emptied', () => {
    for (const config of [{ kernelAbove: 0 }, { kernel: 'javascript' as const }]) {
      const index = new QuantizedVectorIndex(config)
      const random = seededRandom(9)
      const vectors = Array.from({ length: 5 }, () => Float32Array.from({ length: 20 }, () => random() - 0.5))
      for (const [i, vector] of vectors.entries()) index.upsert(`v${i}`, vector)
      const internals = index as any
      const codesOf = (slot: number) => Array.from(internals.codes.subarray(slot * 32, slot * 32 + 20))
      const removedCodes = codesOf(1)
      const removedFloats = Array.from(index.vectorOf('v1')!)
      index.remove('v1')
      index.remove('v4')
      const floats: Float32Array = internals.data
      const codes: Int8Array = internals.codes
      for (let slot = 0; slot * 20 < floats.length && slot < 16; slot++) {
        expect(Array.from(floats.subarray(slot * 20, slot * 20 + 20))).not.toEqual(removedFloats)
      }
      for (let slot = 0; slot * 32 < codes.length && slot < 16; slot++)
        expect(codesOf(slot)).not.toEqual(removedCodes)
      // Slots 3 and 4, freed by the two removals (each moves the last vector into the hole), are zeros.
      expect(Array.from(floats.subarray(3 * 20, 5 * 20)).every((x) => x === 0)).toBe(true)
      expect(Array.from(codes.subarray(3 * 32, 5 * 32)).every((x) => x === 0)).toBe(true)
      expect(index.search(vectors[1]!, 5).map((h) => h.id)).not.toContain('v1')
      for (const id of ['v0', 'v2', 'v3']) index.remove(id)
      expect(index.usesKernel).toBe(false)
      expect(index.size).toBe(0)
    }
  })
})

import { describe, expect, it } from 'vitest'
import { createHashingEmbedder } from '../embedding/hashing-embedder.ts'
import { ValidationError } from '../errors.ts'
import { seededRandom } from '../random.ts'
import { recallAtK } from './calibration.ts'
import { SLOT_POSTINGS_MAX_VECTORS, SlotPostingsIndex } from './slot-postings.ts'
import { ExactVectorIndex } from './vector.ts'

const DIMS = 384

/**
 * The offline embedder's vectors of seeded synthetic turns (Zipfian vocabulary of made-up words)
 * and short queries made of a few words of one turn, like the bench's corpus at a test's size.
 */
function corpus(seed: number, turns: number, queries: number) {
  const random = seededRandom(seed)
  const embedder = createHashingEmbedder({ dimensions: DIMS })
  const vocabulary = Array.from({ length: 3_000 }, (_, i) => `w${i.toString(36)}z`)
  const word = () => vocabulary[Math.floor(vocabulary.length ** random()) - 1] as string
  const texts = Array.from({ length: turns }, () =>
    Array.from({ length: 6 + Math.floor(random() * 25) }, word),
  )
  const queryTexts = Array.from({ length: queries }, () => {
    const source = texts[Math.floor(random() * texts.length)] as string[]
    return Array.from({ length: 2 + Math.floor(random() * 4) }, () =>
      random() < 0.8 ? (source[Math.floor(random() * source.length)] as string) : word(),
    ).join(' ')
  })
  return {
    vectors: texts.map((words) => embedder.embedOne(words.join(' '))),
    queries: queryTexts.map((text) => embedder.embedOne(text)),
  }
}

describe('SlotPostingsIndex', () => {
  const { vectors, queries } = corpus(18, 4_000, 100)

  it('finds at least 0.95 of the exact top 10 for short queries with its defaults', () => {
    const exact = new ExactVectorIndex()
    const index = new SlotPostingsIndex()
    for (const [i, vector] of vectors.entries()) {
      exact.upsert(String(i), vector)
      index.upsert(String(i), vector)
    }
    const truth = queries.map((q) => exact.search(q, 10))
    const found = queries.map((q) => index.search(q, 10))
    expect(recallAtK(truth, found, 10)).toBeGreaterThanOrEqual(0.95)
    // Hits carry exact similarities (rescored), best first.
    for (const [q, hits] of found.entries()) {
      for (const hit of hits) {
        const expected = truth[q]?.find((t) => t.id === hit.id)
        if (expected) expect(hit.similarity).toBeCloseTo(expected.similarity, 5)
      }
      expect(hits.map((h) => h.similarity)).toEqual([...hits.map((h) => h.similarity)].sort((a, b) => b - a))
    }
  })

  it('loses recall when too few candidates are rescored, so the recall check can fail', () => {
    const exact = new ExactVectorIndex()
    const index = new SlotPostingsIndex({ queryMass: 0.3, minImpact: 0.2, candidatesPerHit: 1 })
    for (const [i, vector] of vectors.entries()) {
      exact.upsert(String(i), vector)
      index.upsert(String(i), vector)
    }
    index.setSearchBreadth(10)
    const truth = queries.map((q) => exact.search(q, 10))
    expect(
      recallAtK(
        truth,
        queries.map((q) => index.search(q, 10)),
        10,
      ),
    ).toBeLessThan(0.95)
  })

  it("scores several candidates per hit for a search pool's many hits (hybrid asks for 150-225)", () => {
    const exact = new ExactVectorIndex()
    const perHit = new SlotPostingsIndex()
    const onePerHit = new SlotPostingsIndex({ candidatesPerHit: 1 })
    for (const [i, vector] of vectors.entries()) {
      exact.upsert(String(i), vector)
      perHit.upsert(String(i), vector)
      onePerHit.upsert(String(i), vector)
    }
    const truth = queries.map((q) => exact.search(q, 150))
    const recall = (index: SlotPostingsIndex) =>
      recallAtK(
        truth,
        queries.map((q) => index.search(q, 150)),
        150,
      )
    const withDefault = recall(perHit)
    expect(withDefault).toBeGreaterThanOrEqual(0.95)
    // As many candidates as hits lets the lists' partial scores alone pick the pool.
    expect(recall(onePerHit)).toBeLessThan(withDefault - 0.02)
  })

  it('answers after adds, replacements and removals as an index built from the result does', () => {
    const changed = new SlotPostingsIndex()
    const rebuilt = new SlotPostingsIndex()
    const random = seededRandom(5)
    const live = new Map<string, Float32Array>()
    for (const [i, vector] of vectors.slice(0, 1_500).entries()) {
      changed.upsert(String(i), vector, `h${i}`)
      live.set(String(i), vector)
    }
    for (let step = 0; step < 600; step++) {
      const id = String(Math.floor(random() * 1_500))
      if (random() < 0.5) {
        changed.remove(id)
        live.delete(id)
      } else {
        const vector = vectors[1_500 + step] as Float32Array
        changed.upsert(id, vector, `r${step}`)
        live.set(id, vector)
      }
    }
    for (const [id, vector] of live) rebuilt.upsert(id, vector)
    expect(changed.size).toBe(live.size)
    expect(changed.postingCount).toBe(rebuilt.postingCount)
    for (const q of queries.slice(0, 30)) {
      const a = changed.search(q, 10)
      const b = rebuilt.search(q, 10)
      expect(a.map((h) => h.id).sort()).toEqual(b.map((h) => h.id).sort())
      for (const hit of a) expect(live.has(hit.id)).toBe(true)
    }
  })

  it('answers bit for bit alike on the kernel, in JavaScript and moving to the kernel as it grows', () => {
    // The same adds, replacements and removals; the lists' sums, the candidates' pre-filter and
    // the rescoring run on the WebAssembly kernel in one index and in JavaScript in the others.
    const onKernel = new SlotPostingsIndex({}, { kernelAbove: 0 })
    const inJavaScript = new SlotPostingsIndex({}, { kernel: 'javascript' })
    const moving = new SlotPostingsIndex({}, { kernelAbove: 1_200 })
    const indexes = [onKernel, inJavaScript, moving]
    const random = seededRandom(21)
    const check = (queryCount: number) => {
      for (const q of queries.slice(0, queryCount)) {
        const expected = inJavaScript.search(q, 10)
        expect(onKernel.search(q, 10)).toEqual(expected)
        expect(moving.search(q, 10)).toEqual(expected)
        // A hybrid search's pool: 150 hits from 600 candidates.
        const pool = inJavaScript.search(q, 150)
        expect(onKernel.search(q, 150)).toEqual(pool)
        expect(moving.search(q, 150)).toEqual(pool)
      }
    }
    for (const [i, vector] of vectors.slice(0, 1_000).entries())
      for (const index of indexes) index.upsert(String(i), vector)
    expect(moving.listsUseKernel).toBe(false)
    check(20)
    for (let step = 0; step < 2_500; step++) {
      const id = String(Math.floor(random() * 2_000))
      const vector = vectors[Math.floor(random() * vectors.length)] as Float32Array
      const remove = random() < 0.3
      for (const index of indexes) remove ? index.remove(id) : index.upsert(id, vector)
    }
    expect(onKernel.listsUseKernel).toBe(true)
    expect(inJavaScript.listsUseKernel).toBe(false)
    expect(moving.listsUseKernel).toBe(true)
    expect(onKernel.postingCount).toBe(inJavaScript.postingCount)
    check(60)
    for (const index of indexes) index.trim()
    check(10)
    for (const index of indexes) for (const id of index.idList()) index.remove(id)
    expect(onKernel.listsUseKernel).toBe(false)
  })

  it('keeps every vector its stamp through replacements, removals (slots move) and a trim', () => {
    const index = new SlotPostingsIndex()
    const random = seededRandom(9)
    const expected = new Map<string, string | undefined>()
    // The stores' stamps are SHA-256 hex (kept as bytes); any other string or none must round-trip too.
    const stampFor = (n: number): string | undefined => {
      const r = random()
      if (r < 0.6)
        return Array.from({ length: 64 }, () => '0123456789abcdef'[Math.floor(random() * 16)]).join('')
      if (r < 0.8) return `v${n}`
      if (r < 0.9) return 'ABCDEF'.repeat(10).padEnd(64, '0')
      return undefined
    }
    for (let step = 0; step < 2_000; step++) {
      const id = String(Math.floor(random() * 400))
      if (random() < 0.3) {
        index.remove(id)
        expected.delete(id)
      } else {
        const stamp = stampFor(step)
        index.upsert(id, vectors[step % vectors.length] as Float32Array, stamp)
        expected.set(id, stamp)
      }
      if (step === 1_000) index.trim()
    }
    index.trim()
    expect(index.size).toBe(expected.size)
    for (let i = 0; i < 400; i++) expect(index.stampOf(String(i))).toBe(expected.get(String(i)))
  })

  it('forgets a removed vector: never returned, its stamp and list entries gone', () => {
    const index = new SlotPostingsIndex()
    for (const [i, vector] of vectors.slice(0, 200).entries()) index.upsert(String(i), vector, `h${i}`)
    const before = index.postingCount
    const target = vectors[7] as Float32Array
    expect(index.search(target, 1)[0]?.id).toBe('7')
    expect(index.remove('7')).toBe(true)
    expect(index.remove('7')).toBe(false)
    expect(index.stampOf('7')).toBeUndefined()
    expect(index.postingCount).toBeLessThan(before)
    expect(index.search(target, 200).some((hit) => hit.id === '7')).toBe(false)
    for (let i = 0; i < 200; i++) if (i !== 7) index.remove(String(i))
    expect(index.size).toBe(0)
    expect(index.postingCount).toBe(0)
    expect(index.search(target, 10)).toEqual([])
    // Empty again: another width is accepted.
    index.upsert('small', new Float32Array([0, 1, 0, 0]))
    expect(index.search(new Float32Array([0, 2, 0, 0]), 5)).toEqual([{ id: 'small', similarity: 1 }])
  })

  it('returns every vector when the limit exceeds the size, and nothing for a zero query or limit', () => {
    const index = new SlotPostingsIndex()
    for (const [i, vector] of vectors.slice(0, 20).entries()) index.upsert(String(i), vector)
    expect(index.search(queries[0] as Float32Array, 50)).toHaveLength(20)
    expect(index.search(new Float32Array(DIMS), 5)).toEqual([])
    expect(index.search(queries[0] as Float32Array, 0)).toEqual([])
    expect(() => index.search(new Float32Array(8), 5)).toThrow(ValidationError)
    expect(() => index.upsert('x', new Float32Array(8))).toThrow(ValidationError)
  })

  it('rejects settings out of range with a typed error', () => {
    expect(() => new SlotPostingsIndex({ minImpact: 2 })).toThrow(ValidationError)
    expect(() => new SlotPostingsIndex({ queryMass: -0.1 })).toThrow(ValidationError)
    expect(() => new SlotPostingsIndex({ candidates: 0 })).toThrow(ValidationError)
    expect(() => new SlotPostingsIndex({ candidatesPerHit: 0.5 })).toThrow(ValidationError)
    expect(SLOT_POSTINGS_MAX_VECTORS).toBe(2 ** 23)
  })

  it('takes its search breadth from calibration, never below the limit', () => {
    const index = new SlotPostingsIndex({ candidates: 5 })
    for (const [i, vector] of vectors.slice(0, 100).entries()) index.upsert(String(i), vector)
    expect(index.searchBreadth).toBe(5)
    expect(index.search(queries[1] as Float32Array, 20)).toHaveLength(20)
    index.setSearchBreadth(128)
    expect(index.searchBreadth).toBe(128)
  })
})

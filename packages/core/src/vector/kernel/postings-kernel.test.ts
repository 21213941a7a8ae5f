import { describe, expect, it } from 'vitest'
import { seededRandom } from '../../random.ts'
import { ScanKernel } from './scan-kernel.ts'

/**
 * The slot-postings functions of the scan kernel against the JavaScript they replace. Scores must
 * be bit-identical (`toEqual` on the f32/f64 arrays), not merely close: the index promises the
 * same candidates and hits on either path.
 */
function kernelWith(bytes: number): ScanKernel {
  const kernel = ScanKernel.create()
  if (kernel === null || !kernel.reserve(bytes)) throw new Error('no WebAssembly SIMD kernel here')
  return kernel
}

describe('accumulate_impacts', () => {
  // Lengths 0-3 beyond a multiple of 4 take the tail loop; 0 entries must be a no-op.
  it.each([0, 1, 3, 4, 7, 1_000, 4_099])(
    'adds weight × impact as JavaScript does for %i entries',
    (count) => {
      const random = seededRandom(count + 1)
      const slots = 5_000
      const kernel = kernelWith(1 << 20)
      const partialAt = 0
      const entriesAt = slots * 4
      const partial = new Float32Array(kernel.buffer, partialAt, slots)
      const expected = new Float32Array(slots)
      // Several lists in a row, as a search adds them: the partial scores carry over between calls.
      for (let list = 0; list < 5; list++) {
        // A slot is in a list at most once: draw distinct slots.
        const chosen = new Set<number>()
        while (chosen.size < Math.min(count, slots)) chosen.add(Math.floor(random() * slots))
        const entries = new Int32Array(kernel.buffer, entriesAt, chosen.size)
        let n = 0
        for (const slot of chosen) entries[n++] = (slot << 8) | Math.floor(random() * 256)
        const weight = random() / 255
        kernel.accumulateImpacts(entriesAt, chosen.size, weight, partialAt)
        for (const entry of entries) {
          const slot = entry >>> 8
          expected[slot] = (expected[slot] as number) + weight * (entry & 255)
        }
      }
      expect(partial).toEqual(expected)
      if (count > 0) expect(partial.some((score) => score !== 0)).toBe(true)
    },
  )

  it('reaches the largest slot an entry can name (2^23 - 1)', () => {
    const slot = 2 ** 23 - 1
    const kernel = kernelWith((slot + 1) * 4 + 64)
    const entriesAt = (slot + 1) * 4
    new Int32Array(kernel.buffer, entriesAt, 1)[0] = (slot << 8) | 255
    kernel.accumulateImpacts(entriesAt, 1, 0.5, 0)
    expect(new Float32Array(kernel.buffer, slot * 4, 1)[0]).toBe(127.5)
  })
})

describe('select_above', () => {
  it.each([
    [0, true],
    [5, true],
    [16, false],
    [4_096, true],
    [4_091, false],
  ])('keeps exactly the scores above the threshold in slot order (%i scores, zeroing %s)', (count, zero) => {
    const random = seededRandom(count + 3)
    const kernel = kernelWith(1 << 20)
    const slotsAt = 65_536
    const scoresAt = 131_072
    const partial = new Float32Array(kernel.buffer, 0, count)
    // Mostly zeros with a few large scores, as after a search (a whole 16-score group often has none).
    for (let i = 0; i < count; i++) partial[i] = random() < 0.1 ? Math.fround(random()) : 0
    const before = Float32Array.from(partial)
    for (const threshold of [Number.NEGATIVE_INFINITY, 0, Math.fround(0.5)]) {
      partial.set(before)
      const kept = kernel.selectAbove(0, count, threshold, slotsAt, scoresAt, zero)
      const expected = [...before.keys()].filter((i) => (before[i] as number) > threshold)
      expect(Array.from(new Int32Array(kernel.buffer, slotsAt, kept))).toEqual(expected)
      expect(Array.from(new Float32Array(kernel.buffer, scoresAt, kept))).toEqual(
        expected.map((i) => before[i]),
      )
      expect(Array.from(partial)).toEqual(zero ? new Array(count).fill(0) : Array.from(before))
    }
    // Past `count` nothing is read or written.
    new Float32Array(kernel.buffer, count * 4, 1)[0] = 9
    kernel.selectAbove(0, count, 0, slotsAt, scoresAt, true)
    expect(new Float32Array(kernel.buffer, count * 4, 1)[0]).toBe(9)
  })
})

describe('sparse_dots', () => {
  it.each([1, 3, 4, 9, 600])(
    'sums the query’s non-zero dimensions in f64 as JavaScript does (%i slots)',
    (count) => {
      const random = seededRandom(count + 11)
      const dims = 384
      const stride = dims * 4
      const vectors = 2_000
      const kernel = kernelWith(1 << 22)
      const queryAt = 0
      const dimsAt = 2_048
      const slotsAt = 4_096
      const outAt = 8_192
      const base = 16_384
      const query = new Float32Array(kernel.buffer, queryAt, dims)
      const nonZero: number[] = []
      for (let i = 0; i < dims; i++)
        if (random() < 0.1) {
          query[i] = random() * 2 - 1
          nonZero.push(i)
        }
      new Int32Array(kernel.buffer, dimsAt, nonZero.length).set(nonZero.map((i) => i * 4))
      const data = new Float32Array(kernel.buffer, base, vectors * dims)
      for (let i = 0; i < data.length; i++) data[i] = random() * 2 - 1
      const slots = Int32Array.from({ length: count }, () => Math.floor(random() * vectors))
      new Int32Array(kernel.buffer, slotsAt, count).set(slots)
      kernel.sparseDots(queryAt, dimsAt, nonZero.length, base, stride, slotsAt, count, outAt)
      const expected = Array.from(slots, (slot) => {
        let dot = 0
        for (const i of nonZero) dot += (data[slot * dims + i] as number) * (query[i] as number)
        return dot
      })
      expect(Array.from(new Float64Array(kernel.buffer, outAt, count))).toEqual(expected)
    },
  )
})

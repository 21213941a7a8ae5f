import type { WordRuns } from './word-ids.ts'

/**
 * Float error (0.7 × 10 = 7.000000000000001) must never tighten a bound: a bound too tight loses a
 * pair, one too loose only costs a verification, which then decides with the exact division.
 */
export const FLOAT_SLACK = 1e-9

/** Where a join reports each pair of sets at or above the threshold. */
export interface PairSink {
  pair(a: number, b: number, similarity: number): void
}

/**
 * The non-empty sets among `included`, laid out shortest first (stable, so equal sizes keep their
 * input order) in one array, so a probe and its candidates read nearby memory. Both exact joins
 * (prefix and partition) probe in this order against the sets before it, so a partner is never
 * longer than its probe, and measure candidates with `overlapAtLeast`.
 */
export class SetsBySize {
  /** Probe order (ascending size) → entry. */
  readonly entryOf: Int32Array
  /** Set p's word ids are `tokens[setStart[p]] … tokens[setStart[p + 1] - 1]`, ascending. */
  readonly setStart: Int32Array
  readonly sizeOf: Int32Array
  readonly tokens: Int32Array
  readonly maxSize: number
  readonly vocabulary: number
  /**
   * A 64-bit signature per set, bit (id mod 64) for each word: a bit set in one signature only
   * stands for at least one word in one set only, so |x ∩ y| ≤ (|x| + |y| − popcount(x ⊕ y)) / 2
   * (the bitmap filter of Sandes et al., 2020). It settles most candidates without a merge, and
   * with a vocabulary of at most 64 words it is the exact overlap.
   */
  private readonly signatureLow: Int32Array
  private readonly signatureHigh: Int32Array

  constructor(runs: WordRuns, included: Int32Array) {
    const { start, ids } = runs
    const sizeOfEntry = (e: number) => (start[e + 1] as number) - (start[e] as number)
    // Counting sort by size, stable; empty sets dropped.
    let maxSize = 0
    for (const e of included) maxSize = Math.max(maxSize, sizeOfEntry(e))
    const bySize = new Int32Array(maxSize + 2)
    for (const e of included) {
      const slot = sizeOfEntry(e) + 1
      bySize[slot] = (bySize[slot] as number) + 1
    }
    for (let s = 1; s <= maxSize + 1; s++) bySize[s] = (bySize[s] as number) + (bySize[s - 1] as number)
    const empty = bySize[1] as number
    const order = new Int32Array(included.length)
    let total = 0
    for (const e of included) {
      const size = sizeOfEntry(e)
      order[bySize[size] as number] = e
      bySize[size] = (bySize[size] as number) + 1
      total += size
    }

    const m = included.length - empty
    this.maxSize = maxSize
    this.vocabulary = runs.words.length
    this.entryOf = order.subarray(empty)
    this.setStart = new Int32Array(m + 1)
    this.sizeOf = new Int32Array(m)
    this.tokens = new Int32Array(total)
    this.signatureLow = new Int32Array(m)
    this.signatureHigh = new Int32Array(m)
    let length = 0
    for (let p = 0; p < m; p++) {
      const e = this.entryOf[p] as number
      this.setStart[p] = length
      this.sizeOf[p] = sizeOfEntry(e)
      this.tokens.set(ids.subarray(start[e], start[e + 1]), length)
      length += sizeOfEntry(e)
      this.sign(p)
    }
    this.setStart[m] = length
  }

  get count(): number {
    return this.sizeOf.length
  }

  private sign(p: number): void {
    let low = 0
    let high = 0
    const from = this.setStart[p] as number
    const to = from + (this.sizeOf[p] as number)
    for (let k = from; k < to; k++) {
      const bit = (this.tokens[k] as number) & 63
      if (bit < 32) low |= 1 << bit
      else high |= 1 << (bit - 32)
    }
    this.signatureLow[p] = low
    this.signatureHigh[p] = high
  }

  /** |x ∩ y| when it is at least `needed`, else -1 (often from the signatures alone). */
  overlapAtLeast(x: number, y: number, needed: number): number {
    const { tokens, setStart, sizeOf } = this
    const xSize = sizeOf[x] as number
    const ySize = sizeOf[y] as number
    const apart =
      bitCount((this.signatureLow[x] as number) ^ (this.signatureLow[y] as number)) +
      bitCount((this.signatureHigh[x] as number) ^ (this.signatureHigh[y] as number))
    if (xSize + ySize - apart < 2 * needed) return -1
    let a = setStart[x] as number
    const aEnd = a + xSize
    let b = setStart[y] as number
    const bEnd = b + ySize
    let shared = 0
    // Stop as soon as the words left on the shorter side cannot make up the overlap needed.
    while (a < aEnd && b < bEnd && shared + Math.min(aEnd - a, bEnd - b) >= needed) {
      const u = tokens[a] as number
      const v = tokens[b] as number
      if (u === v) {
        shared++
        a++
        b++
      } else if (u < v) a++
      else b++
    }
    return shared < needed ? -1 : shared
  }
}

/** Set bits in a 32-bit integer (SWAR popcount). */
function bitCount(bits: number): number {
  let v = bits - ((bits >>> 1) & 0x55555555)
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333)
  return Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24
}

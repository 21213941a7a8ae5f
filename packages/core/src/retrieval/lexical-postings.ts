/**
 * One term's postings in an agent's in-process lexical index: document slots in ascending order
 * with the term's frequency in each, in growable typed arrays (8 bytes a posting, no object per
 * posting), and per block of BLOCK_SIZE postings the largest frequency and the shortest document
 * length, which bound the term's BM25 contribution inside the block for any corpus figures.
 */

/** Postings per block: small enough for tight block bounds, large enough to skip well. */
export const BLOCK_SIZE = 64
const BLOCK_SHIFT = 6
const INITIAL_CAPACITY = 2

export class TermPostings {
  slots: Int32Array = new Int32Array(INITIAL_CAPACITY)
  frequencies: Int32Array = new Int32Array(INITIAL_CAPACITY)
  size = 0
  /** Per block: its largest frequency and shortest length (never lowered by removals: still bounds). */
  blockMaxFrequency: Int32Array = new Int32Array(1)
  blockMinLength: Int32Array = new Int32Array(1)
  /** Over every posting ever added: bounds of the whole list. */
  maxFrequency = 0
  minLength = 0x7fffffff
  /** Live documents holding the term, all of them and the summaries among them (documentFrequency per set). */
  documents = 0
  summaries = 0

  /** Appends a posting; slots only grow, so the list stays sorted. */
  append(slot: number, frequency: number, length: number): void {
    if (this.size === this.slots.length) {
      const capacity = this.slots.length * 2
      this.slots = grow(this.slots, capacity)
      this.frequencies = grow(this.frequencies, capacity)
    }
    const at = this.size++
    this.slots[at] = slot
    this.frequencies[at] = frequency
    const block = at >> BLOCK_SHIFT
    if (block >= this.blockMaxFrequency.length) {
      const blocks = this.blockMaxFrequency.length * 2
      this.blockMaxFrequency = grow(this.blockMaxFrequency, blocks)
      this.blockMinLength = grow(this.blockMinLength, blocks)
    }
    if ((at & (BLOCK_SIZE - 1)) === 0) {
      this.blockMaxFrequency[block] = frequency
      this.blockMinLength[block] = length
    } else {
      if (frequency > (this.blockMaxFrequency[block] as number)) this.blockMaxFrequency[block] = frequency
      if (length < (this.blockMinLength[block] as number)) this.blockMinLength[block] = length
    }
    if (frequency > this.maxFrequency) this.maxFrequency = frequency
    if (length < this.minLength) this.minLength = length
  }

  /** The first position at or after `from` whose slot is at least `slot` (galloping, then binary). */
  seek(from: number, slot: number): number {
    const slots = this.slots
    const size = this.size
    if (from >= size || (slots[from] as number) >= slot) return from
    let step = 1
    let low = from
    let high = from + 1
    while (high < size && (slots[high] as number) < slot) {
      low = high
      step *= 2
      high = from + step
    }
    if (high > size) high = size
    // slots[low] < slot; the answer is in (low, high].
    while (low + 1 < high) {
      const middle = (low + high) >>> 1
      if ((slots[middle] as number) < slot) low = middle
      else high = middle
    }
    return high
  }

  /** Bytes the arrays take (capacity, not size: what the process holds). */
  bytes(): number {
    return (this.slots.length + this.frequencies.length) * 4 + this.blockMaxFrequency.length * 8 + 64
  }

  /** Keeps only the postings whose slot `renumber` maps (to a new slot, order kept); -1 drops. */
  compact(renumber: Int32Array, lengthOf: (slot: number) => number): void {
    const slots = this.slots
    const frequencies = this.frequencies
    const size = this.size
    this.slots = new Int32Array(Math.max(INITIAL_CAPACITY, size))
    this.frequencies = new Int32Array(Math.max(INITIAL_CAPACITY, size))
    this.blockMaxFrequency = new Int32Array(1)
    this.blockMinLength = new Int32Array(1)
    this.size = 0
    this.maxFrequency = 0
    this.minLength = 0x7fffffff
    for (let i = 0; i < size; i++) {
      const slot = renumber[slots[i] as number] as number
      if (slot >= 0) this.append(slot, frequencies[i] as number, lengthOf(slot))
    }
  }
}

function grow(array: Int32Array, capacity: number): Int32Array {
  const next = new Int32Array(capacity)
  next.set(array)
  return next
}

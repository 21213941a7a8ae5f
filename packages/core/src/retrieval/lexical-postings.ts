/**
 * One term's postings in an agent's in-process lexical index: document slots in ascending order
 * with the term's frequency in each, interleaved in one growable Int32Array (8 bytes a posting, no
 * object per posting, one array object per term: most terms are rare and the object costs more than
 * their postings). A term one document holds (ids, numbers, names: at 100K memories most of the
 * vocabulary) keeps its posting in two fields and no array at all, ~110 bytes less a term. And, once the list outgrows one block, per block of BLOCK_SIZE postings the
 * largest frequency and the shortest document length, which bound the term's BM25 contribution
 * inside the block for any corpus figures. A list of one block is bounded by its list-wide figures.
 */

/** Postings per block: small enough for tight block bounds, large enough to skip well. */
export const BLOCK_SIZE = 64
const BLOCK_SHIFT = 6
const INITIAL_POSTINGS = 2

export class TermPostings {
  /** slot, frequency, slot, frequency, ...; null while the list holds one posting (or none). */
  private data: Int32Array | null = null
  /** The only posting while `data` is null. */
  private onlySlot = 0
  private onlyFrequency = 0
  /** Per block: largest frequency, shortest length (never lowered by removals: still bounds); null within one block. */
  private blocks: Int32Array | null = null
  size = 0
  /** Over every posting ever added: bounds of the whole list. */
  maxFrequency = 0
  minLength = 0x7fffffff
  /** Live documents holding the term, all of them and the summaries among them (documentFrequency per set). */
  documents = 0
  summaries = 0

  slotAt(at: number): number {
    return this.data === null ? this.onlySlot : (this.data[at * 2] as number)
  }

  frequencyAt(at: number): number {
    return this.data === null ? this.onlyFrequency : (this.data[at * 2 + 1] as number)
  }

  /** The largest frequency in the block holding position `at`. */
  blockMaxFrequency(at: number): number {
    return this.blocks ? (this.blocks[(at >> BLOCK_SHIFT) * 2] as number) : this.maxFrequency
  }

  /** The shortest document length in the block holding position `at`. */
  blockMinLength(at: number): number {
    return this.blocks ? (this.blocks[(at >> BLOCK_SHIFT) * 2 + 1] as number) : this.minLength
  }

  /** Appends a posting; slots only grow, so the list stays sorted. */
  append(slot: number, frequency: number, length: number): void {
    const at = this.size++
    if (at === 0) {
      this.onlySlot = slot
      this.onlyFrequency = frequency
    } else {
      let data = this.data
      if (data === null) {
        data = new Int32Array(INITIAL_POSTINGS * 2)
        data[0] = this.onlySlot
        data[1] = this.onlyFrequency
      } else if (at * 2 === data.length) data = grow(data, data.length * 2)
      this.data = data
      data[at * 2] = slot
      data[at * 2 + 1] = frequency
    }
    if (at === BLOCK_SIZE) {
      // Past one block: the first block's bounds are the list's so far.
      this.blocks = new Int32Array(8)
      this.blocks[0] = this.maxFrequency
      this.blocks[1] = this.minLength
    }
    if (this.blocks) {
      const block = at >> BLOCK_SHIFT
      if (block * 2 >= this.blocks.length) this.blocks = grow(this.blocks, this.blocks.length * 2)
      if ((at & (BLOCK_SIZE - 1)) === 0) {
        this.blocks[block * 2] = frequency
        this.blocks[block * 2 + 1] = length
      } else {
        if (frequency > (this.blocks[block * 2] as number)) this.blocks[block * 2] = frequency
        if (length < (this.blocks[block * 2 + 1] as number)) this.blocks[block * 2 + 1] = length
      }
    }
    if (frequency > this.maxFrequency) this.maxFrequency = frequency
    if (length < this.minLength) this.minLength = length
  }

  /** The first position at or after `from` whose slot is at least `slot` (galloping, then binary). */
  seek(from: number, slot: number): number {
    const data = this.data
    const size = this.size
    if (data === null) return from >= size || this.onlySlot >= slot ? from : size
    if (from >= size || (data[from * 2] as number) >= slot) return from
    let step = 1
    let low = from
    let high = from + 1
    while (high < size && (data[high * 2] as number) < slot) {
      low = high
      step *= 2
      high = from + step
    }
    if (high > size) high = size
    // data[low] < slot; the answer is in (low, high].
    while (low + 1 < high) {
      const middle = (low + high) >>> 1
      if ((data[middle * 2] as number) < slot) low = middle
      else high = middle
    }
    return high
  }

  /** Bytes held: the arrays' capacity and the objects (V8's typed array and buffer headers, about). */
  bytes(): number {
    return (
      (this.data ? this.data.byteLength + 100 : 0) + (this.blocks ? this.blocks.byteLength + 100 : 0) + 100
    )
  }

  /** Gives back the growth slack (after a build: doubling leaves up to half unused). */
  trim(): void {
    if (this.data && this.data.length > this.size * 2) this.data = this.data.slice(0, this.size * 2)
  }

  /** Keeps only the postings whose slot `renumber` maps (to a new slot, order kept); -1 drops. */
  compact(renumber: Int32Array, lengthOf: (slot: number) => number): void {
    const size = this.size
    const data = this.data ?? Int32Array.of(this.onlySlot, this.onlyFrequency)
    this.data = null
    this.blocks = null
    this.size = 0
    this.maxFrequency = 0
    this.minLength = 0x7fffffff
    for (let i = 0; i < size; i++) {
      const slot = renumber[data[i * 2] as number] as number
      if (slot >= 0) this.append(slot, data[i * 2 + 1] as number, lengthOf(slot))
    }
  }
}

function grow(array: Int32Array, capacity: number): Int32Array {
  const next = new Int32Array(capacity)
  next.set(array)
  return next
}

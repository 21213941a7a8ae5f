/**
 * One term's postings in an agent's in-process lexical index: document slots in ascending order
 * with the term's frequency in each, one Int32 a posting (`slot << 4 | frequency`, a frequency of
 * 15 or more kept beside in a small map: 4 bytes a posting instead of 8, most frequencies are 1-3),
 * in one growable array (no object per posting, one array object per term; a term one document
 * holds has no object at all, see LexicalIndex). Once the list outgrows one
 * block, per block of BLOCK_SIZE postings the largest frequency and the shortest document length,
 * which bound the term's BM25 contribution inside the block for any corpus figures. A list of one
 * block is bounded by its list-wide figures.
 */

/** Postings per block: small enough for tight block bounds, large enough to skip well. */
export const BLOCK_SIZE = 64
const BLOCK_SHIFT = 6
const INITIAL_POSTINGS = 2
const FREQUENCY_BITS = 4
/** A packed frequency of this value means "this or more": the frequency is in `largeFrequencies`. */
const FREQUENCY_ESCAPE = (1 << FREQUENCY_BITS) - 1
/** Slots a packed posting can name (2^27): the index compacts long before (its slots are documents). */
export const LEXICAL_MAX_SLOTS = 2 ** (31 - FREQUENCY_BITS)

export class TermPostings {
  /** `slot << 4 | min(frequency, 15)` per posting. */
  private data: Int32Array = new Int32Array(INITIAL_POSTINGS)
  /** Frequencies of 15 or more, by position (rare: a word repeated that often in one text). */
  private largeFrequencies: Map<number, number> | null = null
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
    return (this.data[at] as number) >>> FREQUENCY_BITS
  }

  frequencyAt(at: number): number {
    const packed = (this.data[at] as number) & FREQUENCY_ESCAPE
    return packed === FREQUENCY_ESCAPE ? (this.largeFrequencies?.get(at) as number) : packed
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
    if (slot >= LEXICAL_MAX_SLOTS)
      throw new RangeError(`a lexical index holds at most ${LEXICAL_MAX_SLOTS} slots`)
    const at = this.size++
    if (at === this.data.length) this.data = grow(this.data, this.data.length * 2)
    this.put(at, slot, frequency)
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

  private put(at: number, slot: number, frequency: number): void {
    const data = this.data
    if (frequency < FREQUENCY_ESCAPE) data[at] = (slot << FREQUENCY_BITS) | frequency
    else {
      data[at] = (slot << FREQUENCY_BITS) | FREQUENCY_ESCAPE
      this.largeFrequencies ??= new Map()
      this.largeFrequencies.set(at, frequency)
    }
  }

  /** The first position at or after `from` whose slot is at least `slot` (galloping, then binary). */
  seek(from: number, slot: number): number {
    const data = this.data
    const size = this.size
    // Packed entries order as their slots do: an entry is below slot << 4 exactly when its slot is below.
    const key = slot << FREQUENCY_BITS
    if (from >= size || (data[from] as number) >= key) return from
    let step = 1
    let low = from
    let high = from + 1
    while (high < size && (data[high] as number) < key) {
      low = high
      step *= 2
      high = from + step
    }
    if (high > size) high = size
    // data[low] < key; the answer is in (low, high].
    while (low + 1 < high) {
      const middle = (low + high) >>> 1
      if ((data[middle] as number) < key) low = middle
      else high = middle
    }
    return high
  }

  /** Bytes held: the arrays' capacity and the objects (V8's typed array and buffer headers, about). */
  bytes(): number {
    return (
      this.data.byteLength +
      100 +
      (this.blocks ? this.blocks.byteLength + 100 : 0) +
      (this.largeFrequencies ? this.largeFrequencies.size * 40 + 80 : 0) +
      100
    )
  }

  /** Gives back the growth slack (after a build: doubling leaves up to half unused). */
  trim(): void {
    if (this.data.length > this.size) this.data = this.data.slice(0, Math.max(1, this.size))
  }

  /** Keeps only the postings whose slot `renumber` maps (to a new slot, order kept); -1 drops. */
  compact(renumber: Int32Array, lengthOf: (slot: number) => number): void {
    const size = this.size
    const slots = new Int32Array(size)
    const frequencies = new Int32Array(size)
    for (let i = 0; i < size; i++) {
      slots[i] = this.slotAt(i)
      frequencies[i] = this.frequencyAt(i)
    }
    this.data = new Int32Array(Math.max(INITIAL_POSTINGS, size))
    this.largeFrequencies = null
    this.blocks = null
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

import { ScanKernel } from './kernel/scan-kernel.ts'
import { TopK } from './top-k.ts'

/** An entry is `slot << IMPACT_BITS | impact`, the impact a value's magnitude as 0-255 for 0-1. */
export const IMPACT_BITS = 8
export const IMPACT_SCALE = 255

/** Partial scores the kernel's pre-filter hands back per call; JavaScript re-checks each. */
const SELECT_BLOCK = 4_096
/** One partial score in this many is sampled to estimate the candidates' threshold. */
const SAMPLE_EVERY = 32
/** Room a new list starts with, and the slack `trim` leaves each list. */
const LIST_SLACK = 16
/**
 * Free room a repacking leaves for runs that move, as a share of the lists' words. While the index
 * grows, as much again: a build of 100K vectors repacked 30-40 times (0.3-0.5 s of 1.5 s) with half
 * as much. The room is address space until runs move into it (fresh pages are not resident until
 * written). After `trim`, an eighth, so a built index holds little slack.
 */
const GROWTH_ROOM = 1
const TRIMMED_ROOM = 0.125

/**
 * The posting lists of a slot-postings index and the per-slot partial scores a search adds into,
 * all in one buffer of 4-byte words: the partial scores (f32, one per slot), the kernel's
 * pre-filter output (slots, scores), then the lists, each a run of words with room to grow.
 *
 * One buffer because the WebAssembly kernel reads the lists and writes the scores in its own
 * linear memory: once the index is large enough (`wantKernel`), the buffer lives there, so a
 * search copies nothing. A list that outgrows its run moves to a run twice as long at the end;
 * when the buffer is full, every list is packed again into a new one (a fresh kernel memory, since
 * wasm memory cannot shrink). Below the threshold, or without WebAssembly SIMD, the buffer is a
 * plain array and the same layout is read by the JavaScript loops, which the kernel equals bit for
 * bit (f64 arithmetic rounded to f32 alike; tested).
 *
 * Removed entries are overwritten with zeros, and a moved list's old run is zeroed, so a deleted
 * vector leaves no impact behind in either buffer.
 */
export class PostingLists {
  private words: Int32Array<ArrayBufferLike> = new Int32Array(0)
  private floats: Float32Array<ArrayBufferLike> = new Float32Array(0)
  private kernel: ScanKernel | null = null
  /** Set once a kernel could not be had: these lists then stay in JavaScript. */
  private kernelRefused = false
  private readonly offsets: Int32Array
  private readonly lengths: Int32Array
  private readonly capacities: Int32Array
  /** Slots the partial scores have room for; the pre-filter's output follows them. */
  private partialCapacity = 0
  /** The next free word after the last list's run. */
  private top = 0

  constructor(
    readonly listCount: number,
    private readonly wantKernel: (slots: number) => boolean,
  ) {
    this.offsets = new Int32Array(listCount)
    this.lengths = new Int32Array(listCount)
    this.capacities = new Int32Array(listCount)
  }

  /** Whether searches accumulate on the WebAssembly kernel. */
  get usesKernel(): boolean {
    return this.kernel !== null
  }

  /** Entries in all lists. */
  get entryCount(): number {
    let count = 0
    for (let list = 0; list < this.listCount; list++) count += this.lengths[list] as number
    return count
  }

  length(list: number): number {
    return this.lengths[list] as number
  }

  /** Room for the partial scores of `slots` slots; moves to the kernel when it becomes worth it. */
  reserveSlots(slots: number): void {
    const toKernel = this.kernel === null && !this.kernelRefused && this.wantKernel(slots)
    if (slots <= this.partialCapacity && !toKernel) return
    // Four times the slots: partial scores cost 4 bytes a slot, and each growth repacks every list.
    this.repack(Math.max(slots, this.partialCapacity * 4, 1_024), GROWTH_ROOM)
  }

  append(list: number, entry: number): void {
    let length = this.lengths[list] as number
    if (length === this.capacities[list]) this.growList(list)
    length = this.lengths[list] as number
    this.words[(this.offsets[list] as number) + length] = entry
    this.lengths[list] = length + 1
  }

  /** Where `slot`'s entry is in `list`, -1 when absent. */
  indexOf(list: number, slot: number): number {
    const words = this.words
    const start = this.offsets[list] as number
    const end = start + (this.lengths[list] as number)
    for (let n = start; n < end; n++) if ((words[n] as number) >>> IMPACT_BITS === slot) return n - start
    return -1
  }

  /** Renames the entry at `index` to `slot`, keeping its impact. */
  rename(list: number, index: number, slot: number): void {
    const at = (this.offsets[list] as number) + index
    this.words[at] = (slot << IMPACT_BITS) | ((this.words[at] as number) & IMPACT_SCALE)
  }

  /** Drops the entry at `index`: order within a list does not matter, so the last entry fills the hole. */
  removeAt(list: number, index: number): void {
    const start = this.offsets[list] as number
    const last = start + (this.lengths[list] as number) - 1
    this.words[start + index] = this.words[last] as number
    this.words[last] = 0
    this.lengths[list] = last - start
  }

  /** Forgets every list and lets the buffer (and its kernel memory) go. */
  clear(): void {
    this.words = new Int32Array(0)
    this.floats = new Float32Array(0)
    this.kernel = null
    this.offsets.fill(0)
    this.lengths.fill(0)
    this.capacities.fill(0)
    this.partialCapacity = 0
    this.top = 0
  }

  /** Gives back the runs' growth slack (runs grow by half, and a growing buffer keeps as much room again): after a build. */
  trim(): void {
    if (this.partialCapacity === 0) return
    for (let list = 0; list < this.listCount; list++)
      this.capacities[list] = (this.lengths[list] as number) + LIST_SLACK
    this.repack(this.partialCapacity, 0, TRIMMED_ROOM)
  }

  /** Adds `weight × impact` of each entry of `list` to its slot's partial score. */
  accumulate(list: number, weight: number): void {
    const length = this.lengths[list] as number
    if (length === 0) return
    const start = this.offsets[list] as number
    if (this.kernel !== null) {
      this.kernel.accumulateImpacts(start * 4, length, weight, 0)
      return
    }
    const words = this.words
    const partial = this.floats
    const end = start + length
    for (let n = start; n < end; n++) {
      const entry = words[n] as number
      const slot = entry >>> IMPACT_BITS
      partial[slot] = (partial[slot] as number) + weight * (entry & IMPACT_SCALE)
    }
  }

  /**
   * The `breadth` best partial scores among the slots below `count` (the rest score 0 and still
   * count: a query sharing little with the index still gets its candidates), then zeroes the
   * partial scores for the next search.
   *
   * Offering every slot to a heap of 600 (a hybrid search's pool: 150 hits × 4) cost ~0.5 ms at
   * 100K, most of it in pushes while the heap's threshold was still low. So the threshold is first
   * estimated from every 32nd score: the sample's (2 × breadth / 32 + 2)-th best, above which about
   * twice `breadth` slots lie. Only those are offered, in slot order; if fewer than `breadth` pass
   * (an unlucky sample, or few non-zero scores), every slot is offered as before. The heap then holds
   * the same best scores as a pass over every slot, except which of several equal scores at the
   * cut it keeps (the heap's history differs). The kernel and JavaScript paths offer the same slots
   * in the same order, so they keep the same candidates.
   */
  select(count: number, breadth: number): TopK {
    const rank = Math.ceil((2 * breadth) / SAMPLE_EVERY) + 2
    if (count >= 4 * SAMPLE_EVERY * rank) {
      const threshold = this.sampledThreshold(count, rank)
      if (threshold > Number.NEGATIVE_INFINITY) {
        const best = new TopK(breadth)
        this.offerAbove(count, threshold, best, false)
        if (best.size === breadth) {
          this.floats.fill(0, 0, count)
          return best
        }
      }
    }
    const best = new TopK(breadth)
    this.offerAbove(count, Number.NEGATIVE_INFINITY, best, true)
    return best
  }

  /** The `rank`-th best of every SAMPLE_EVERY-th partial score; -Infinity when fewer. */
  private sampledThreshold(count: number, rank: number): number {
    const sample = new TopK(rank)
    const partial = this.floats
    for (let slot = 0; slot < count; slot += SAMPLE_EVERY) {
      const score = partial[slot] as number
      if (score > sample.threshold) sample.push(score, slot)
    }
    return sample.threshold
  }

  /**
   * Offers the slots scoring above `threshold` to `best`, in slot order; with `zero`, zeroes every
   * partial score read. The kernel passes on only scores above the higher of `threshold` and the
   * heap's threshold when a block starts; the heap's threshold only rises, so re-checking against it
   * here makes exactly the pushes of the JavaScript loop.
   */
  private offerAbove(count: number, threshold: number, best: TopK, zero: boolean): void {
    const words = this.words
    const partial = this.floats
    const kernel = this.kernel
    if (kernel === null) {
      // The heap's threshold is a field read, so the common case compares with a local first.
      let above = Math.max(threshold, best.threshold)
      for (let slot = 0; slot < count; slot++) {
        const score = partial[slot] as number
        if (score > above) {
          best.push(score, slot)
          above = Math.max(threshold, best.threshold)
        }
      }
      if (zero) partial.fill(0, 0, count)
      return
    }
    const slotsAt = this.partialCapacity
    const scoresAt = slotsAt + SELECT_BLOCK
    for (let start = 0; start < count; start += SELECT_BLOCK) {
      const block = Math.min(SELECT_BLOCK, count - start)
      const above = Math.max(best.threshold, threshold)
      const kept = kernel.selectAbove(start * 4, block, above, slotsAt * 4, scoresAt * 4, zero)
      for (let i = 0; i < kept; i++) {
        const score = partial[scoresAt + i] as number
        if (score > best.threshold) best.push(score, start + (words[slotsAt + i] as number))
      }
    }
  }

  /** Moves a full list to a run twice as long at the end of the buffer, repacking when none is left. */
  private growList(list: number): void {
    const capacity = this.capacities[list] as number
    const grown = capacity + Math.max(LIST_SLACK, capacity >> 1)
    if (this.partialCapacity === 0 || this.top + grown > this.words.length) {
      this.repack(Math.max(this.partialCapacity, 1_024), GROWTH_ROOM, grown - capacity, list)
      return
    }
    const start = this.offsets[list] as number
    const length = this.lengths[list] as number
    this.words.copyWithin(this.top, start, start + length)
    this.words.fill(0, start, start + capacity)
    this.offsets[list] = this.top
    this.capacities[list] = grown
    this.top += grown
  }

  /**
   * Lays everything out again: `partialCapacity` partial scores (zeros), the pre-filter's output,
   * then the lists packed in order with their capacities (`extra` more words for `growing`), and
   * `room` × their words free for runs that move. In the kernel's memory when `wantKernel` says so
   * and one can be had, a plain array otherwise. A kernel memory that only grows is grown in place
   * (a fresh one per repacking cost a third of a 100K build, in page faults); a smaller layout (after
   * `trim`) takes a fresh memory, as wasm memory cannot shrink.
   */
  private repack(partialCapacity: number, room: number, extra = 0, growing = -1): void {
    if (growing >= 0) this.capacities[growing] = (this.capacities[growing] as number) + extra
    const partialWords = Math.ceil(partialCapacity / 16) * 16
    const listsStart = partialWords + 2 * SELECT_BLOCK
    let reserved = 0
    let held = 0
    for (let list = 0; list < this.listCount; list++) {
      if ((this.capacities[list] as number) === 0) this.capacities[list] = LIST_SLACK
      reserved += this.capacities[list] as number
      held += this.lengths[list] as number
    }
    const size = listsStart + reserved + Math.ceil(reserved * room)
    // The entries, gathered first: in place, the new layout overlaps the old one.
    const entries = new Int32Array(held)
    for (let list = 0, at = 0; list < this.listCount; list++) {
      const start = this.offsets[list] as number
      const length = this.lengths[list] as number
      entries.set(this.words.subarray(start, start + length), at)
      at += length
    }
    const oldTop = this.top
    let words: Int32Array<ArrayBufferLike> | null = null
    let kernel: ScanKernel | null = null
    if (!this.kernelRefused && this.wantKernel(partialCapacity)) {
      const inPlace = this.kernel !== null && size * 4 >= this.words.byteLength
      kernel = inPlace ? this.kernel : ScanKernel.create()
      if (kernel?.reserve(size * 4)) words = new Int32Array(kernel.buffer)
      else {
        kernel = null
        this.kernelRefused = true
      }
    }
    const reused = kernel !== null && kernel === this.kernel
    words ??= new Int32Array(size)
    // A reused memory holds the old layout: everything not written below must be zeros again.
    if (reused) words.fill(0, 0, listsStart)
    for (let list = 0, at = listsStart, from = 0; list < this.listCount; list++) {
      const length = this.lengths[list] as number
      const capacity = this.capacities[list] as number
      words.set(entries.subarray(from, from + length), at)
      // Only below the old top: the memory grown past it is fresh zeros, and writing it would
      // commit pages the room only reserves.
      if (reused && at + length < oldTop) words.fill(0, at + length, Math.min(at + capacity, oldTop))
      this.offsets[list] = at
      at += capacity
      from += length
    }
    const top = listsStart + reserved
    if (reused && oldTop > top) words.fill(0, top, oldTop)
    this.words = words
    this.floats = new Float32Array(words.buffer, 0, words.length)
    this.kernel = kernel
    this.partialCapacity = partialWords
    this.top = top
  }
}

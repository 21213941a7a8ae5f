import type { MemoryEntry } from '../types.ts'
import { DuplicateChoice, type RedundantEntry, wordSet } from './redundancy.ts'

const FLOAT_SLACK = 1e-9
/** Past this share of entries changed since the last run, rebuilding is as cheap as updating. */
export const DEFAULT_REBUILD_SHARE = 0.5

/**
 * The redundancy join kept from one optimizer run to the next, so a run compares only the entries
 * that are new or whose text changed, against all the others. Its answer is exactly
 * findRedundantEntries(entries, threshold) for the entries of the call.
 *
 * Every pair at or above the threshold is kept (not only each entry's best), so an entry whose
 * partner went still finds its next best. Candidates come from prefix filtering (as in
 * findRedundantEntries) under an order of words fixed while the join lives: rarest first by the
 * frequencies seen when it was built, words unseen then first of all. Any fixed order keeps the
 * filter exact; rarity keeps it fast. Only each entry's prefix words are indexed, and of each entry
 * only a hash of its text, its size and its prefix are held: a fraction of the texts' own size.
 */
export class IncrementalRedundancy {
  private frequency = new Map<string, number>()
  /** Each known entry has a slot; the arrays below are indexed by it. */
  private readonly slotOf = new Map<string, number>()
  private idAt: (string | undefined)[] = []
  private hashAt = new Uint32Array(1_024)
  private sizeAt = new Int32Array(1_024)
  private prefixAt: (string[] | undefined)[] = []
  private seenAt = new Int32Array(1_024)
  /**
   * Per slot, 128 bits: bit (hash of a word) mod 128 set for each of its words. A probe's bits
   * missing from a candidate's are words certainly missing from it, so most candidates met through
   * one shared rare word are turned down with four popcounts instead of a comparison of word sets
   * (most of an update with 1,000 new entries at 100K). A lower bound only: the answer is exact.
   */
  private bitsAt = new Int32Array(1_024 * SIGNATURE_WORDS)
  private readonly freeSlots: number[] = []
  private readonly postings = new Map<string, Set<number>>()
  private readonly empties = new Set<number>()
  private readonly pairs = new Map<number, Map<number, number>>()
  private builtFor = 0
  private probe = 0
  /** The update that last found each slot's entry with its text unchanged. */
  private lastUpdateAt = new Int32Array(1_024)
  private updates = 0
  /** This call's entries and word sets by slot (released when the call returns). */
  private entryAt: (MemoryEntry | undefined)[] = []
  private setAt: (Set<string> | undefined)[] = []

  constructor(
    readonly threshold: number,
    private readonly rebuildShare = DEFAULT_REBUILD_SHARE,
  ) {
    if (!(threshold > 0 && threshold <= 1)) throw new RangeError('threshold must be in (0, 1]')
  }

  /** How many entries the last update compared (new or changed); for tests and reports. */
  lastCompared = 0

  /**
   * The redundant entries among `entries`, as findRedundantEntries finds them. `textUnchanged`
   * names entries the caller knows still have the text they had at the last update (the
   * optimizer's kept entries, whose rows it read again only when they changed): those are not
   * hashed again, which at 100K entries was most of an update with few changes. Without it every
   * text is hashed and compared with the last.
   */
  update(entries: readonly MemoryEntry[], textUnchanged?: (entry: MemoryEntry) => boolean): RedundantEntry[] {
    const run = ++this.updates
    if (this.lastUpdateAt.length < this.hashAt.length)
      this.lastUpdateAt = widened(this.lastUpdateAt, this.hashAt.length)
    // Each entry's slot, looked up once (-1: new, or its text changed): at 100K entries the id
    // look-ups repeated per step were most of an update with nothing changed.
    const slotOfEntry = new Int32Array(entries.length)
    const hashes = new Uint32Array(entries.length)
    entries.forEach((entry, i) => {
      const slot = this.slotOf.get(entry.id) ?? -1
      slotOfEntry[i] = slot
      if (slot >= 0 && textUnchanged?.(entry)) {
        this.lastUpdateAt[slot] = run
        return
      }
      const hash = textHash(entry.content)
      hashes[i] = hash
      if (slot >= 0 && this.hashAt[slot] === hash) this.lastUpdateAt[slot] = run
      else slotOfEntry[i] = -1
    })
    // Known entries not in this call, or whose text changed, are forgotten (then added as new).
    for (let slot = 0; slot < this.idAt.length; slot++) {
      if (this.idAt[slot] !== undefined && this.lastUpdateAt[slot] !== run) this.forget(slot)
    }
    let changedCount = 0
    for (let i = 0; i < entries.length; i++) if ((slotOfEntry[i] as number) < 0) changedCount++
    const grown = entries.length > 2 * this.builtFor || entries.length < this.builtFor / 2
    const rebuild = this.builtFor === 0 || grown || changedCount > entries.length * this.rebuildShare
    if (rebuild) {
      this.reset()
      slotOfEntry.fill(-1)
    }
    // Slots for the new ones first, so every entry of this call can be looked up by slot.
    const fresh: number[] = []
    entries.forEach((entry, i) => {
      if ((slotOfEntry[i] as number) >= 0) return
      // Not hashed above (its text was known unchanged) when a rebuild drops every slot.
      if (hashes[i] === 0) hashes[i] = textHash(entry.content)
      slotOfEntry[i] = this.assign(entry.id, hashes[i] as number)
      fresh.push(slotOfEntry[i] as number)
    })
    this.entryAt = []
    this.setAt = []
    entries.forEach((entry, i) => {
      this.entryAt[slotOfEntry[i] as number] = entry
    })
    if (rebuild) {
      for (const slot of slotOfEntry)
        for (const word of this.wordsOf(slot)) this.frequency.set(word, (this.frequency.get(word) ?? 0) + 1)
      this.builtFor = entries.length
    }
    for (const slot of fresh) this.add(slot)
    this.lastCompared = fresh.length
    const found = this.best(entries, slotOfEntry)
    this.entryAt = []
    this.setAt = [] // not kept between calls: the texts' own size again
    return found
  }

  private reset(): void {
    this.slotOf.clear()
    this.idAt = []
    this.prefixAt = []
    this.freeSlots.length = 0
    this.postings.clear()
    this.empties.clear()
    this.pairs.clear()
    this.frequency = new Map()
  }

  private assign(id: string, hash: number): number {
    const slot = this.freeSlots.pop() ?? this.idAt.length
    if (slot >= this.hashAt.length) {
      const grow = <T extends Uint32Array | Int32Array>(from: T, to: T): T => {
        to.set(from)
        return to
      }
      const length = this.hashAt.length * 2
      this.hashAt = grow(this.hashAt, new Uint32Array(length))
      this.sizeAt = grow(this.sizeAt, new Int32Array(length))
      this.seenAt = grow(this.seenAt, new Int32Array(length))
      this.lastUpdateAt = grow(this.lastUpdateAt, new Int32Array(length))
      this.bitsAt = grow(this.bitsAt, new Int32Array(length * SIGNATURE_WORDS))
    }
    this.slotOf.set(id, slot)
    this.idAt[slot] = id
    this.hashAt[slot] = hash
    this.seenAt[slot] = 0
    return slot
  }

  private forget(slot: number): void {
    for (const word of this.prefixAt[slot] ?? []) {
      const list = this.postings.get(word)
      list?.delete(slot)
      if (list?.size === 0) this.postings.delete(word)
    }
    this.empties.delete(slot)
    for (const partner of this.pairs.get(slot)?.keys() ?? []) this.pairs.get(partner)?.delete(slot)
    this.pairs.delete(slot)
    this.slotOf.delete(this.idAt[slot] as string)
    this.idAt[slot] = undefined
    this.prefixAt[slot] = undefined
    this.freeSlots.push(slot)
  }

  private pair(a: number, b: number, similarity: number): void {
    this.partnersOf(a).set(b, similarity)
    this.partnersOf(b).set(a, similarity)
  }

  private partnersOf(slot: number): Map<number, number> {
    const known = this.pairs.get(slot)
    if (known) return known
    const partners = new Map<number, number>()
    this.pairs.set(slot, partners)
    return partners
  }

  private wordsOf(slot: number): Set<string> {
    const known = this.setAt[slot]
    if (known) return known
    const words = wordSet((this.entryAt[slot] as MemoryEntry).content)
    this.setAt[slot] = words
    return words
  }

  /** Compares one entry with every indexed one that can reach the threshold, then indexes it. */
  private add(slot: number): void {
    const words = this.wordsOf(slot)
    this.sizeAt[slot] = words.size
    if (words.size === 0) {
      // Two empty sets are identical (similarity 1): they pair with each other only.
      for (const other of this.empties) this.pair(slot, other, 1)
      this.empties.add(slot)
      this.prefixAt[slot] = []
      return
    }
    const frequency = this.frequency
    // Each word's frequency looked up once, not twice per comparison.
    const keyed = [...words].map((word) => ({ word, count: frequency.get(word) ?? 0 }))
    keyed.sort((a, b) => a.count - b.count || (a.word < b.word ? -1 : a.word > b.word ? 1 : 0))
    const ordered = keyed.map((k) => k.word)
    const bits = this.bitsAt
    const base = slot * SIGNATURE_WORDS
    bits.fill(0, base, base + SIGNATURE_WORDS)
    for (const word of ordered) {
      const bit = wordHash(word) & (SIGNATURE_WORDS * 32 - 1)
      bits[base + (bit >>> 5)] = (bits[base + (bit >>> 5)] as number) | (1 << (bit & 31))
    }
    const p0 = bits[base] as number
    const p1 = bits[base + 1] as number
    const p2 = bits[base + 2] as number
    const p3 = bits[base + 3] as number
    const t = this.threshold
    const prefix = ordered.slice(0, ordered.length - Math.ceil(t * ordered.length - FLOAT_SLACK) + 1)
    const minSize = t * words.size - FLOAT_SLACK
    const maxSize = words.size / t + FLOAT_SLACK
    const stamp = ++this.probe
    const seen = this.seenAt
    const sizes = this.sizeAt
    for (const word of prefix) {
      const list = this.postings.get(word)
      if (!list) continue
      for (const other of list) {
        if (seen[other] === stamp) continue
        seen[other] = stamp
        const size = sizes[other] as number
        if (size < minSize || size > maxSize) continue
        // Overlap needed for J >= t, against what each side's missing bits leave at most.
        const needed = (t * (words.size + size)) / (1 + t) - FLOAT_SLACK
        const o = other * SIGNATURE_WORDS
        const c0 = bits[o] as number
        const c1 = bits[o + 1] as number
        const c2 = bits[o + 2] as number
        const c3 = bits[o + 3] as number
        const probeMissing = popcount(p0 & ~c0) + popcount(p1 & ~c1) + popcount(p2 & ~c2) + popcount(p3 & ~c3)
        if (words.size - probeMissing < needed) continue
        const otherMissing = popcount(c0 & ~p0) + popcount(c1 & ~p1) + popcount(c2 & ~p2) + popcount(c3 & ~p3)
        if (size - otherMissing < needed) continue
        const similarity = similarityIfAtLeast(words, this.wordsOf(other), t)
        if (similarity >= t) this.pair(slot, other, similarity)
      }
    }
    for (const word of prefix) {
      const list = this.postings.get(word)
      if (list) list.add(slot)
      else this.postings.set(word, new Set([slot]))
    }
    this.prefixAt[slot] = prefix
  }

  /** findRedundantEntries' choice over the kept pairs: the same rules, the same order. */
  private best(entries: readonly MemoryEntry[], slotOfEntry: Int32Array): RedundantEntry[] {
    const position = new Int32Array(this.idAt.length).fill(-1)
    for (let i = 0; i < entries.length; i++) position[slotOfEntry[i] as number] = i
    const choice = new DuplicateChoice(Float64Array.from(entries, (e) => e.timestamp.getTime()))
    for (const [a, partners] of this.pairs) {
      const i = position[a] as number
      if (i < 0) continue
      for (const [b, similarity] of partners) {
        const j = position[b] as number
        if (j > i) choice.offer(i, j, similarity)
      }
    }
    return choice.result(entries)
  }
}

function widened(from: Int32Array, length: number): Int32Array<ArrayBuffer> {
  const to = new Int32Array(length)
  to.set(from)
  return to
}

/**
 * jaccardSimilarity(a, b) when it can reach `threshold`, else 0 as soon as too many words of the
 * smaller set are missing from the larger one: most candidates fail after a word or two.
 * J >= t exactly when the overlap is at least t(|a| + |b|) / (1 + t).
 */
function similarityIfAtLeast(a: ReadonlySet<string>, b: ReadonlySet<string>, threshold: number): number {
  const [small, large] = a.size <= b.size ? [a, b] : [b, a]
  const allowedMisses = small.size - ((threshold * (a.size + b.size)) / (1 + threshold) - FLOAT_SLACK)
  let shared = 0
  let missed = 0
  for (const word of small) {
    if (large.has(word)) shared++
    else if (++missed > allowedMisses) return 0
  }
  // The same expression as jaccardSimilarity, so the same value to the last bit.
  return shared / (a.size + b.size - shared)
}

const SIGNATURE_WORDS = 4

function popcount(x: number): number {
  let v = x - ((x >>> 1) & 0x55555555)
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333)
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24
}

/** FNV-1a of a word, mixed so its low bits spread (they pick the signature bit). */
function wordHash(word: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < word.length; i++) hash = Math.imul(hash ^ word.charCodeAt(i), 0x01000193)
  hash ^= hash >>> 15
  return Math.imul(hash, 0x2c1b3c6d) >>> 15
}

/** FNV-1a of a text: a changed text is missed only on a 32-bit collision (1 in 4 billion). */
function textHash(text: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  return (hash ^ text.length) >>> 0
}

/**
 * Word sets as sorted runs of integer ids, for the redundancy join. The words are exactly those of
 * `wordSet` (the lowercased text's matches of /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/u), read by a
 * hand-written scanner: matching with the regex and looking each match up in a Map<string> took
 * two thirds of the join's time at 100K entries, as every match is a fresh string to allocate and
 * hash. Here a word is hashed as it is scanned, found in an open-addressing table by comparing
 * in place, and only a word never seen before becomes a string.
 */

export interface WordRuns {
  /** Text t's word ids are `ids[start[t]] … ids[start[t + 1] - 1]`, ascending, no repeats. */
  start: Int32Array
  /** Ids rank words rarest first (fewest texts; ties by the word), so id order is rarity order. */
  ids: Int32Array
  /** The word each id stands for. */
  words: string[]
}

const OTHER = 1
const LETTER = 2
const NUMBER = 3
const IS_LETTER = /^\p{L}$/u
const IS_NUMBER = /^\p{N}$/u

/**
 * The class of each code point, looked up with the regex once and remembered (BMP: 0 = not yet
 * known; ASCII filled up front). Shared by every call: a pure function of the character, so
 * sharing changes no answer.
 */
const bmpClass = new Uint8Array(0x10000)
for (let c = 0; c < 128; c++) {
  bmpClass[c] = (c >= 97 && c <= 122) || (c >= 65 && c <= 90) ? LETTER : c >= 48 && c <= 57 ? NUMBER : OTHER
}
const astralClass = new Map<number, number>()

function classOf(codePoint: number): number {
  const known = codePoint < 0x10000 ? (bmpClass[codePoint] as number) : (astralClass.get(codePoint) ?? 0)
  if (known !== 0) return known
  const char = String.fromCodePoint(codePoint)
  // A lone surrogate is a code point of its own under the u flag, and neither letter nor number.
  const found = IS_LETTER.test(char) ? LETTER : IS_NUMBER.test(char) ? NUMBER : OTHER
  if (codePoint < 0x10000) bmpClass[codePoint] = found
  // Bounded: text could walk a million astral code points; the few in use (emoji) fit.
  else if (astralClass.size < 4_096) astralClass.set(codePoint, found)
  return found
}

/** The class of the code point at k, a surrogate pair read as one (as the u flag reads it). */
function classAt(text: string, k: number): number {
  const unit = text.charCodeAt(k)
  if (unit < 0xd800 || unit >= 0xe000) return (bmpClass[unit] as number) || classOf(unit)
  return classOf(text.codePointAt(k) as number)
}

/** Code units in the code point at k: 2 for a surrogate pair. */
function widthAt(text: string, k: number): number {
  const unit = text.charCodeAt(k)
  return unit >= 0xd800 && unit < 0xdc00 && (text.codePointAt(k) as number) > 0xffff ? 2 : 1
}

const APOSTROPHE = 0x27
const RIGHT_QUOTE = 0x2019
const FNV_OFFSET = 0x811c9dc5 | 0
const FNV_PRIME = 0x01000193

/** Each text's word set as a sorted run of global word ids. */
export function indexWords(texts: readonly string[]): WordRuns {
  const scanner = new WordScanner(texts.length)
  for (const text of texts) scanner.add(text)
  return scanner.finish()
}

/**
 * Reads texts one by one into runs of provisional ids (in order of first sight), then ranks the
 * ids. One method call per text rather than one long loop: V8 then optimizes the scan as a
 * function instead of entering the loop half-way and falling out of it after each call.
 */
class WordScanner {
  /** Provisional id → word. */
  private readonly words: string[] = []
  private hashes = new Int32Array(256)
  /** Texts the word is in. */
  private frequency = new Int32Array(256)
  /** The last text the word was seen in, to count each text once. */
  private lastText = new Int32Array(256)
  /** Open addressing on the hash of a word's code units: word id + 1, 0 = empty; at most half full. */
  private slots = new Int32Array(1024)
  private mask = 1023
  private readonly start: Int32Array
  private raw = new Int32Array(1024)
  private length = 0
  private texts = 0

  constructor(texts: number) {
    this.start = new Int32Array(texts + 1)
  }

  add(original: string): void {
    const t = this.texts++
    this.start[t] = this.length
    const text = original.toLowerCase()
    const end = text.length
    let at = 0
    while (at < end) {
      if (classAt(text, at) === OTHER) {
        at += widthAt(text, at)
        continue
      }
      const begin = at
      // [\p{L}\p{N}]+, greedily,
      do at += widthAt(text, at)
      while (at < end && classAt(text, at) !== OTHER)
      // then (?:['’][\p{L}]+)?, taken only when a letter follows the apostrophe.
      if (at + 1 < end) {
        const unit = text.charCodeAt(at)
        if ((unit === APOSTROPHE || unit === RIGHT_QUOTE) && classAt(text, at + 1) === LETTER) {
          at++
          do at += widthAt(text, at)
          while (at < end && classAt(text, at) === LETTER)
        }
      }
      const id = this.idOf(text, begin, at)
      if (this.lastText[id] === t) continue // a set: the second "the" adds nothing
      this.lastText[id] = t
      this.frequency[id] = (this.frequency[id] as number) + 1
      this.append(id)
    }
    this.start[t + 1] = this.length
  }

  /** Ranks the words rarest first and returns the runs in those ids, each sorted. */
  finish(): WordRuns {
    const { words, frequency, start, raw, length } = this
    // Rarest first puts each set's most selective words in its prefix; ties by the word itself
    // make the order (and so the work done) independent of the order of the texts.
    const byRarity = Array.from(words.keys()).sort(
      (a, b) =>
        (frequency[a] as number) - (frequency[b] as number) ||
        ((words[a] as string) < (words[b] as string) ? -1 : 1),
    )
    const rank = new Int32Array(words.length)
    for (let r = 0; r < byRarity.length; r++) rank[byRarity[r] as number] = r
    const ids = new Int32Array(length)
    for (let k = 0; k < length; k++) ids[k] = rank[raw[k] as number] as number
    for (let t = 0; t < this.texts; t++) sortRun(ids, start[t] as number, start[t + 1] as number)
    return { start, ids, words: byRarity.map((id) => words[id] as string) }
  }

  /** The id of the word `text[begin, end)`; a new id if never seen. Only a new word is sliced. */
  private idOf(text: string, begin: number, end: number): number {
    let hash = FNV_OFFSET
    for (let u = begin; u < end; u++) hash = Math.imul(hash ^ text.charCodeAt(u), FNV_PRIME)
    const size = end - begin
    let slot = hash & this.mask
    for (let entry = this.slots[slot] as number; entry !== 0; entry = this.slots[slot] as number) {
      const id = entry - 1
      const word = this.words[id] as string
      if (this.hashes[id] === hash && word.length === size && text.startsWith(word, begin)) return id
      slot = (slot + 1) & this.mask
    }
    const id = this.words.length
    if (id === this.hashes.length) {
      this.hashes = doubled(this.hashes)
      this.frequency = doubled(this.frequency)
      this.lastText = doubled(this.lastText)
    }
    this.words.push(text.slice(begin, end))
    this.hashes[id] = hash
    this.lastText[id] = -1
    this.slots[slot] = id + 1
    if (this.words.length * 2 > this.slots.length) this.rehash()
    return id
  }

  private append(id: number): void {
    if (this.length === this.raw.length) this.raw = doubled(this.raw)
    this.raw[this.length++] = id
  }

  private rehash(): void {
    this.slots = new Int32Array(this.slots.length * 2)
    this.mask = this.slots.length - 1
    for (let id = 0; id < this.words.length; id++) {
      let slot = (this.hashes[id] as number) & this.mask
      while (this.slots[slot] !== 0) slot = (slot + 1) & this.mask
      this.slots[slot] = id + 1
    }
  }
}

function doubled(from: Int32Array): Int32Array<ArrayBuffer> {
  const to = new Int32Array(from.length * 2)
  to.set(from)
  return to
}

/** Ascending in place. Runs are a sentence's worth of words: insertion sort, without a view each. */
function sortRun(ids: Int32Array, from: number, to: number): void {
  if (to - from > 64) {
    ids.subarray(from, to).sort()
    return
  }
  for (let k = from + 1; k < to; k++) {
    const id = ids[k] as number
    let j = k - 1
    while (j >= from && (ids[j] as number) > id) {
      ids[j + 1] = ids[j] as number
      j--
    }
    ids[j + 1] = id
  }
}

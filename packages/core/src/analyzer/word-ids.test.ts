import { describe, expect, it } from 'vitest'
import { seededRandom as seeded } from '../random.ts'
import { wordSet } from './redundancy.ts'
import { indexWords } from './word-ids.ts'

// Pieces chosen for the edges of /[\p{L}\p{N}]+(?:['’][\p{L}]+)?/u on lowercased text: both
// apostrophes, letters and numbers outside ASCII and outside the BMP (surrogate pairs), a
// combining mark (neither letter nor number), lone surrogates, and capitals whose lowercase
// differs in length (İ) or depends on what follows (final Σ).
const PIECES = [
  'a',
  'b',
  'Z',
  'q',
  '7',
  '0',
  ' ',
  ' ',
  ',',
  '.',
  '-',
  '_',
  "'",
  "'",
  '’',
  '’',
  '"',
  'é',
  'ß',
  'ª',
  '²',
  '٣',
  '中',
  'Ж',
  'İ',
  'Σ',
  'ǅ',
  '\u0301',
  '\u00a0',
  '𝐀',
  '𠀀',
  '𝟘',
  '😀',
  '\ud800',
  '\udc00',
  'ok',
  "don't",
  'rock’n’roll',
  "it'5",
]

describe('indexWords', () => {
  it('reads exactly the words of wordSet, on random text full of edge cases', () => {
    const random = seeded(99)
    const texts = Array.from({ length: 3_000 }, () =>
      Array.from(
        { length: Math.floor(random() * 30) },
        () => PIECES[Math.floor(random() * PIECES.length)],
      ).join(''),
    )
    texts.push('', '   ', 'The cat, the HAT!', "Don't stop: it’s 3 o'clock")
    const { start, ids, words } = indexWords(texts)
    const frequency = new Map<string, number>()
    texts.forEach((text, t) => {
      const run = Array.from(ids.subarray(start[t], start[t + 1]))
      for (let k = 1; k < run.length; k++) expect(run[k]).toBeGreaterThan(run[k - 1] as number)
      const read = run.map((id) => words[id] as string)
      expect(new Set(read), JSON.stringify(text)).toEqual(wordSet(text))
      for (const word of read) frequency.set(word, (frequency.get(word) ?? 0) + 1)
    })
    expect(new Set(words).size).toBe(words.length)
    expect(frequency.size).toBe(words.length)
    // Ids rank the words rarest first, ties in word order.
    for (let id = 1; id < words.length; id++) {
      const [before, after] = [words[id - 1] as string, words[id] as string]
      const order =
        (frequency.get(before) as number) - (frequency.get(after) as number) || (before < after ? -1 : 1)
      expect(order).toBeLessThan(0)
    }
  })

  it('gives the same word the same id across texts, however it was written', () => {
    const { start, ids } = indexWords(['Hello world', 'WORLD, hello!', 'hello'])
    const run = (t: number) => Array.from(ids.subarray(start[t], start[t + 1]))
    expect(run(0)).toEqual(run(1))
    expect(run(2)).toHaveLength(1)
    expect(run(0)).toContain(run(2)[0])
  })
})

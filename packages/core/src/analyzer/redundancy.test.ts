import { describe, expect, it } from 'vitest'
import { seededRandom as seeded } from '../random.ts'
import type { MemoryEntry } from '../types.ts'
import { findRedundantEntries, findRedundantEntriesNaive, type JoinChoice } from './redundancy.ts'

const BASE = Date.UTC(2026, 0, 15)
/** Each join alone must give the all-pairs answer, whichever 'cheaper' would pick. */
const JOINS: JoinChoice[] = ['cheaper', 'prefix', 'partition']
const SEPARATORS = [' ', ' ', ' ', ', ', '. ', ' - ', '! ']
const EMPTY_CONTENTS = ['', '!!', ' — ', '...']

/**
 * One random input. Each knob is drawn per input so the cases range from sparse text over a big
 * vocabulary to a handful of words where almost every pair is close, with clusters of exact and
 * near duplicates, shared timestamps, word sets with nothing in them and the odd invalid Date.
 */
function randomEntries(random: () => number): MemoryEntry[] {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T
  const n = pick([0, 1, 2, 3, 10, 40, 80, 120, 150])
  const vocabulary = pick([2, 5, 12, 30, 100, 400, 3_000])
  const maxWords = pick([1, 4, 12, 25, 45])
  const duplicateRate = pick([0, 0.1, 0.3, 0.6])
  const emptyRate = pick([0, 0, 0.05, 0.3])
  const distinctTimes = pick([1, 3, 20, 1_000])
  const invalidTimeRate = pick([0, 0, 0, 0.1])
  // Skewed towards the first words, as real text is.
  const word = () => {
    const k = Math.floor(vocabulary ** random()) - 1
    const text = `w${k.toString(36)}`
    return random() < 0.1 ? text.toUpperCase() : random() < 0.05 ? `${text}'s` : text
  }
  const sentence = (length: number) => {
    let text = ''
    for (let w = 0; w < length; w++) text += (w > 0 ? pick(SEPARATORS) : '') + word()
    return text
  }
  const contents: string[] = []
  for (let i = 0; i < n; i++) {
    if (random() < emptyRate) contents.push(pick(EMPTY_CONTENTS))
    else if (i > 0 && random() < duplicateRate) {
      const words = pick(contents).split(' ')
      const edits = pick([0, 0, 1, 1, 2, 3])
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(random() * (words.length + 1))
        const edit = random()
        if (edit < 0.4) words[at] = word()
        else if (edit < 0.7) words.splice(at, 1)
        else words.splice(at, 0, word())
      }
      contents.push(words.join(' '))
    } else contents.push(sentence(1 + Math.floor(random() * maxWords)))
  }
  return contents.map((content, i) => ({
    id: `e${i}`,
    type: 'short_term',
    role: 'assistant',
    content,
    tokenCount: 10,
    relevance: 0.5,
    isCompressed: false,
    timestamp: new Date(
      random() < invalidTimeRate ? Number.NaN : BASE + Math.floor(random() * distinctTimes),
    ),
    sessionId: 's',
  }))
}

describe('findRedundantEntries against the all-pairs scan', () => {
  it('gives exactly the naive answer on many random inputs, at every threshold', () => {
    const random = seeded(20260115)
    let inputs = 0
    let marked = 0
    for (let run = 0; run < 120; run++) {
      const entries = randomEntries(random)
      for (const threshold of [0.5, 0.8, 0.9, 1]) {
        const expected = findRedundantEntriesNaive(entries, threshold)
        // toStrictEqual compares the similarities bit for bit and the order of the list.
        for (const join of JOINS)
          expect(
            findRedundantEntries(entries, threshold, join),
            `run ${run}, threshold ${threshold}, ${join}`,
          ).toStrictEqual(expected)
        inputs++
        marked += expected.length
      }
    }
    // Not a vacuous comparison: the inputs hold plenty of duplicates.
    expect(inputs).toBe(480)
    expect(marked).toBeGreaterThan(4_000)
  })

  it('agrees at thresholds that put float error on the bounds, and outside (0, 1]', () => {
    const random = seeded(7)
    for (let run = 0; run < 40; run++) {
      const entries = randomEntries(random)
      for (const threshold of [0, 0.1, 0.3, 0.7, 0.75, 0.95, 1.2]) {
        const expected = findRedundantEntriesNaive(entries, threshold)
        for (const join of JOINS)
          expect(
            findRedundantEntries(entries, threshold, join),
            `run ${run}, threshold ${threshold}, ${join}`,
          ).toStrictEqual(expected)
      }
    }
  })

  it('picks among many identical empty entries as the scan does, invalid dates included', () => {
    const at = [3, 1, 3, Number.NaN, 2, 1, Number.NaN, 3, 0]
    const entries = at.map(
      (t, i): MemoryEntry => ({
        id: `e${i}`,
        type: 'short_term',
        role: 'user',
        content: i % 2 ? '' : '?!',
        tokenCount: 1,
        relevance: 0.5,
        isCompressed: false,
        timestamp: new Date(BASE + t),
        sessionId: null,
      }),
    )
    const expected = findRedundantEntriesNaive(entries, 0.9)
    expect(expected.length).toBeGreaterThan(5)
    expect(findRedundantEntries(entries, 0.9)).toStrictEqual(expected)
  })
})

/**
 * The dense-vocabulary case the partition join is for: every word in a large share of the sets,
 * sizes spread so that partners of every allowed size meet, near copies (a word or two swapped,
 * added or dropped: the pairs right at the threshold), exact copies, and empty and one-word
 * entries among them.
 */
function denseEntries(random: () => number): MemoryEntry[] {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T
  const n = pick([2, 30, 90, 160])
  const vocabulary = pick([3, 8, 20, 30, 64, 65, 100])
  const draws = pick([4, 12, 30, 60])
  const nearRate = pick([0, 0.2, 0.5])
  const word = () => `v${Math.floor(random() * vocabulary)}`
  const contents: string[] = []
  for (let i = 0; i < n; i++) {
    const roll = random()
    if (roll < 0.04) contents.push(pick(['', '...', 'v0']))
    else if (i > 0 && roll < 0.04 + nearRate) {
      const words = pick(contents).split(' ')
      const edits = pick([0, 1, 1, 2])
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(random() * (words.length + 1))
        const edit = random()
        if (edit < 0.4) words[at] = word()
        else if (edit < 0.7) words.splice(at, 1)
        else words.splice(at, 0, word())
      }
      contents.push(words.join(' '))
    } else contents.push(Array.from({ length: 1 + Math.floor(random() * draws) }, word).join(' '))
  }
  return contents.map((content, i) => ({
    id: `d${i}`,
    type: 'short_term',
    role: 'user',
    content,
    tokenCount: 10,
    relevance: 0.5,
    isCompressed: false,
    timestamp: new Date(BASE + Math.floor(random() * 40)),
    sessionId: 's',
  }))
}

describe('findRedundantEntries on dense vocabularies', () => {
  it('gives the naive answer with every join, at thresholds on and between exact ratios', () => {
    const random = seeded(18)
    let marked = 0
    for (let run = 0; run < 90; run++) {
      const entries = denseEntries(random)
      // 9/10, 18/19, 2/3, 4/5 are similarities pairs here reach exactly; 0.901 and 0.85 fall between.
      for (const threshold of [0.5, 2 / 3, 0.8, 0.85, 0.9, 0.901, 18 / 19, 1]) {
        const expected = findRedundantEntriesNaive(entries, threshold)
        marked += expected.length
        for (const join of JOINS)
          expect(
            findRedundantEntries(entries, threshold, join),
            `run ${run}, threshold ${threshold}, ${join}`,
          ).toStrictEqual(expected)
      }
    }
    expect(marked).toBeGreaterThan(3_000)
  })

  it('finds pairs exactly at the threshold and not one word below it, with each join', () => {
    const words = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => `v${from + k}`)
    const entry = (content: string[], i: number): MemoryEntry => ({
      id: `b${i}`,
      type: 'short_term',
      role: 'user',
      content: content.join(' '),
      tokenCount: 10,
      relevance: 0.5,
      isCompressed: false,
      timestamp: new Date(BASE + i),
      sessionId: 's',
    })
    // 27 of 30 words shared: exactly 0.9. 26 shared of 30 ∪ 29: 26/33, below; swapping one word of
    // a 19-word set: 18/20 = 0.9 again, found through any class the swap leaves alone.
    const cases = [
      { pair: [words(0, 30), words(0, 27)], similarity: 0.9 },
      { pair: [words(0, 30), [...words(0, 26), 'x1', 'x2', 'x3']], similarity: null },
      { pair: [words(0, 19), [...words(0, 18), 'x1']], similarity: 18 / 20 },
      { pair: [words(0, 10), words(0, 9)], similarity: 0.9 },
    ]
    for (const join of JOINS)
      for (const { pair, similarity } of cases) {
        const found = findRedundantEntries(pair.map(entry), 0.9, join)
        expect(found, join).toStrictEqual(
          similarity === null ? [] : [{ entryId: 'b0', duplicateOfId: 'b1', similarity }],
        )
      }
  })
})

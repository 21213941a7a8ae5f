import { describe, expect, it } from 'vitest'
import { seededRandom as seeded } from '../random.ts'
import type { MemoryEntry } from '../types.ts'
import { IncrementalRedundancy } from './incremental-redundancy.ts'
import { findRedundantEntries } from './redundancy.ts'

const base = new Date('2026-01-15T12:00:00.000Z').getTime()

function world(seed: number) {
  const random = seeded(seed)
  const vocabulary = Array.from({ length: 60 }, (_, i) => `w${i}`)
  let next = 0
  const text = () =>
    Array.from(
      { length: Math.floor(random() * 12) },
      () => vocabulary[Math.floor(vocabulary.length ** random()) - 1],
    ).join(' ')
  const entry = (content = text()): MemoryEntry => ({
    id: String(++next),
    type: 'short_term',
    role: 'user',
    content,
    tokenCount: 10,
    relevance: 0.5,
    isCompressed: false,
    // Some timestamps tie: input order then decides which of a pair is older.
    timestamp: new Date(base + Math.floor(random() * 50) * 1_000),
    sessionId: 's',
  })
  return { random, text, entry }
}

describe('IncrementalRedundancy', () => {
  it('answers exactly as findRedundantEntries while entries are added, changed and removed', () => {
    for (const threshold of [0.5, 0.8, 0.9]) {
      const { random, text, entry } = world(threshold * 100)
      const join = new IncrementalRedundancy(threshold)
      let entries = Array.from({ length: 150 }, () => entry())
      let found = 0
      // Near-duplicates and exact copies, so there are pairs to find.
      for (let i = 0; i < 30; i++) {
        const source = entries[Math.floor(random() * entries.length)] as MemoryEntry
        entries.push(entry(random() < 0.5 ? source.content : `${source.content} w1`))
      }
      for (let step = 0; step < 25; step++) {
        const expected = findRedundantEntries(entries, threshold)
        expect(join.update(entries)).toEqual(expected)
        found += expected.length
        const next = entries.filter(() => random() > 0.03)
        for (let i = 0; i < 5; i++) {
          const at = Math.floor(random() * next.length)
          const changed = next[at] as MemoryEntry
          next[at] = { ...changed, content: random() < 0.5 ? text() : `${changed.content} w2` }
        }
        for (let i = 0; i < 8; i++) {
          const source = next[Math.floor(random() * next.length)] as MemoryEntry
          next.push(entry(random() < 0.3 ? source.content : text()))
        }
        entries = next
      }
      expect(found).toBeGreaterThan(100)
    }
  })

  it('compares only the new and changed entries once built', () => {
    const { entry } = world(3)
    const join = new IncrementalRedundancy(0.9)
    const entries = Array.from({ length: 400 }, () => entry())
    join.update(entries)
    expect(join.lastCompared).toBe(400)
    join.update(entries)
    expect(join.lastCompared).toBe(0)
    const more = [
      ...entries.slice(1),
      entry('a brand new text'),
      { ...(entries[5] as MemoryEntry), content: 'edited' },
    ]
    more.splice(4, 1) // the old entry 6 is replaced by its edited copy at the end
    expect(join.update(more)).toEqual(findRedundantEntries(more, 0.9))
    expect(join.lastCompared).toBe(2)
  })
})

describe('IncrementalRedundancy on dense vocabularies, told which texts are unchanged', () => {
  it('answers exactly as findRedundantEntries while entries are added, edited and removed', () => {
    const random = seeded(18)
    let found = 0
    for (const threshold of [2 / 3, 0.8, 0.9, 18 / 19, 1]) {
      // 30 words drawn uniformly: every word in a large share of the texts, as in the bench's hard case.
      const word = () => `v${Math.floor(random() * 30)}`
      let next = 0
      const text = () =>
        random() < 0.05 ? '' : Array.from({ length: 1 + Math.floor(random() * 30) }, word).join(' ')
      const entry = (content = text()): MemoryEntry => ({
        id: String(++next),
        type: 'short_term',
        role: 'user',
        content,
        tokenCount: 10,
        relevance: 0.5,
        isCompressed: false,
        timestamp: new Date(base + Math.floor(random() * 20) * 1_000),
        sessionId: 's',
      })
      const join = new IncrementalRedundancy(threshold)
      let entries = Array.from({ length: 120 }, () => entry())
      let seen = new Map<string, string>()
      for (let step = 0; step < 20; step++) {
        // What the optimizer's kept entries tell it: the texts it did not read again are as they were.
        const before = seen
        const unchanged = (e: MemoryEntry) => before.get(e.id) === e.content && random() < 0.9
        expect(join.update(entries, unchanged), `threshold ${threshold}, step ${step}`).toEqual(
          findRedundantEntries(entries, threshold),
        )
        found += join.update(entries, () => true).length
        seen = new Map(entries.map((e) => [e.id, e.content]))
        const kept = entries.filter(() => random() > 0.05)
        for (let i = 0; i < 4; i++) {
          const at = Math.floor(random() * kept.length)
          const changed = kept[at] as MemoryEntry
          // A near copy of another entry (a word swapped): a pair right at the threshold.
          const source = (kept[Math.floor(random() * kept.length)] as MemoryEntry).content.split(' ')
          source[Math.floor(random() * source.length)] = word()
          kept[at] = { ...changed, content: random() < 0.5 ? source.join(' ') : text() }
        }
        for (let i = 0; i < 6; i++) {
          const source = kept[Math.floor(random() * kept.length)] as MemoryEntry
          kept.push(entry(random() < 0.4 ? source.content : text()))
        }
        entries = kept
      }
    }
    expect(found).toBeGreaterThan(200)
  })
})

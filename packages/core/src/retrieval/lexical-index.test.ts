import { describe, expect, it } from 'vitest'
import { seededRandom } from '../random.ts'
import { bm25Scores } from './bm25.ts'
import {
  type LexicalDocument,
  type LexicalDocumentSet,
  LexicalIndex,
  type LexicalTopKQuery,
} from './lexical-index.ts'

/**
 * The reference the index must match, from plain documents (no index bookkeeping): the agent's
 * figures of the set, every matching document scored by bm25Scores, sorted by score then id
 * newest first (search-lexical's scoreByBm25 before issue 18).
 */
function reference(documents: Map<string, LexicalDocument>, query: LexicalTopKQuery): [string, number][] {
  const inSet = [...documents.values()].filter(
    (d) => query.set === 'all' || d.summary === (query.set === 'summaries'),
  )
  const total = inSet.reduce((sum, d) => sum + d.terms.length, 0)
  const corpus = { documents: inSet.length, averageLength: inSet.length > 0 ? total / inSet.length : 0 }
  const counts = new Map(
    inSet.map((d) => {
      const c = new Map<string, number>()
      for (const t of d.terms) c.set(t, (c.get(t) ?? 0) + 1)
      return [d.id, c] as const
    }),
  )
  const terms = query.terms.map((term) => {
    const frequencies = new Map<string, number>()
    for (const [id, c] of counts) if (c.has(term)) frequencies.set(id, c.get(term) as number)
    return { documentFrequency: frequencies.size, frequencies }
  })
  const candidates = inSet
    .filter((d) => terms.some((t) => t.frequencies.has(d.id)))
    .filter((d) => !query.every || terms.every((t) => t.frequencies.has(d.id)))
    .filter((d) => !query.sessionId || d.sessionId === query.sessionId)
    .map((d) => d.id)
  const lengths = new Map(inSet.map((d) => [d.id, d.terms.length]))
  const scores = bm25Scores(candidates, terms, (id) => lengths.get(id) ?? 0, corpus)
  return [...scores].sort((a, b) => b[1] - a[1] || Number(b[0]) - Number(a[0])).slice(0, query.limit)
}

/** A Zipfian word: small ranks are common, so many documents tie and bounds matter. */
function zipfWord(random: () => number, vocabulary: number): string {
  const rank = Math.floor(vocabulary ** random())
  return `w${Math.min(rank, vocabulary - 1)}`
}

describe('the in-process lexical index', () => {
  it('answers a pruned top-k identical to exhaustive BM25 over random corpora, queries and edits', () => {
    let checked = 0
    for (let seed = 1; seed <= 60; seed++) {
      const random = seededRandom(seed)
      const vocabulary = 4 + Math.floor(random() * 60)
      const index = new LexicalIndex()
      const documents = new Map<string, LexicalDocument>()
      let nextId = 1
      const sessions = ['s1', 's2', 's3']
      // Rare terms (one or two documents: ids, numbers, names) are most of a real vocabulary, and
      // a list of one posting is stored apart (no array), so every corpus holds them too.
      const rare = 50 + Math.floor(random() * 2_000)
      const term = () => (random() < 0.1 ? `r${Math.floor(random() * rare)}` : zipfWord(random, vocabulary))
      const write = () => {
        const length = 1 + Math.floor(random() * (random() < 0.2 ? 40 : 8))
        const terms = Array.from({ length }, term)
        // Edits reuse an id (the index replaces the document); new ids are mostly increasing.
        const id =
          random() < 0.1 && documents.size > 0
            ? ([...documents.keys()][Math.floor(random() * documents.size)] as string)
            : String(nextId++)
        const document: LexicalDocument = {
          id,
          sessionId: random() < 0.15 ? null : (sessions[Math.floor(random() * 3)] as string),
          summary: random() < 0.2,
          terms,
        }
        index.add(document)
        documents.set(id, document)
      }
      const documentsToWrite = 20 + Math.floor(random() * (seed % 5 === 0 ? 3_000 : 300))
      for (let i = 0; i < documentsToWrite; i++) write()
      // What a build does once filled: give back the growth slack (later writes grow it again).
      if (random() < 0.5) index.trim()
      for (let round = 0; round < 30; round++) {
        // Deletions (sometimes many at once: the compaction path), then a few writes.
        const deletions = random() < 0.1 ? Math.floor(documents.size * 0.6) : Math.floor(random() * 5)
        for (let i = 0; i < deletions && documents.size > 0; i++) {
          const id = [...documents.keys()][Math.floor(random() * documents.size)] as string
          expect(index.remove(id)).toBe(true)
          documents.delete(id)
        }
        for (let i = Math.floor(random() * 10); i > 0; i--) write()
        if (random() < 0.1) index.trim()
        const termCount = 1 + Math.floor(random() * 5)
        const terms = Array.from({ length: termCount }, () => (random() < 0.05 ? 'absent' : term()))
        if (random() < 0.2 && terms.length > 0) terms.push(terms[0] as string)
        const query: LexicalTopKQuery = {
          terms,
          set: (['all', 'messages', 'summaries'] as LexicalDocumentSet[])[
            Math.floor(random() * 3)
          ] as LexicalDocumentSet,
          every: random() < 0.25,
          sessionId: random() < 0.25 ? (sessions[Math.floor(random() * 4)] ?? 'unknown') : null,
          limit: 1 + Math.floor(random() * (random() < 0.3 ? 200 : 12)),
        }
        const expected = reference(documents, query)
        expect(index.topK(query)).toEqual(expected)
        expect(index.exhaustiveTopK(query)).toEqual(expected)
        expect(index.size).toBe(documents.size)
        checked++
      }
    }
    expect(checked).toBe(60 * 30)
  })

  it('counts each set apart: summaries, ordinary turns and both', () => {
    const index = new LexicalIndex()
    index.add({ id: '1', sessionId: 's', summary: false, terms: ['garden', 'tomato', 'garden'] })
    index.add({ id: '2', sessionId: 's', summary: true, terms: ['garden'] })
    expect(index.corpus('all')).toEqual({ documents: 2, averageLength: 2 })
    expect(index.corpus('messages')).toEqual({ documents: 1, averageLength: 3 })
    expect(index.corpus('summaries')).toEqual({ documents: 1, averageLength: 1 })
    expect(index.documentFrequency('garden', 'all')).toBe(2)
    expect(index.documentFrequency('garden', 'messages')).toBe(1)
    expect(index.documentsHolding('garden', 'summaries')).toEqual(['2'])
  })

  it('forgets a removed document at once: not found, not counted, its only terms gone', () => {
    const index = new LexicalIndex()
    index.add({ id: '1', sessionId: null, summary: false, terms: ['secret', 'plan'] })
    index.add({ id: '2', sessionId: null, summary: false, terms: ['plan'] })
    expect(index.remove('1')).toBe(true)
    expect(index.remove('1')).toBe(false)
    expect(index.has('1')).toBe(false)
    expect(index.documentFrequency('secret', 'all')).toBe(0)
    expect(index.topK({ terms: ['secret'], set: 'all', every: false, sessionId: null, limit: 5 })).toEqual([])
    expect(
      index.topK({ terms: ['plan'], set: 'all', every: false, sessionId: null, limit: 5 }).map(([id]) => id),
    ).toEqual(['2'])
    expect([...index.documentIds()]).toEqual(['2'])
  })

  it('ranks equal scores newest id first, also across a cut at the limit', () => {
    const index = new LexicalIndex()
    for (let id = 1; id <= 10; id++)
      index.add({ id: String(id), sessionId: null, summary: false, terms: ['same'] })
    const ids = index
      .topK({ terms: ['same'], set: 'all', every: false, sessionId: null, limit: 3 })
      .map(([id]) => id)
    expect(ids).toEqual(['10', '9', '8'])
  })
})

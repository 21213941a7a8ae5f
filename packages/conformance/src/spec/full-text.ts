import { bm25Scores, CONTEXT_SUMMARY_PREFIX } from '@engram/core'
import type { FullTextCollection, FullTextIndex } from '@engram/engine'
import { describe, expect, it } from 'vitest'
import type { StorageInitializer } from '../types.ts'
import { useFixture } from './fixture.ts'

/** BM25 as the engine ranks: candidates and the agent's statistics from the port, scores from core. */
async function rank(index: FullTextIndex, collection: FullTextCollection, agentId: string, query: string) {
  const corpus = await index.corpus(collection, agentId, 'all')
  const lengths = new Map<string, number>()
  const terms = []
  for (const term of index.terms(query)) {
    const postings = await index.postings(collection, agentId, 'all', term)
    for (const [id, posting] of postings) lengths.set(id, posting.length)
    terms.push({
      documentFrequency: postings.size,
      frequencies: new Map([...postings].map(([id, p]) => [id, p.frequency])),
    })
  }
  const scores = bm25Scores(lengths.keys(), terms, (id) => lengths.get(id) ?? 0, corpus)
  return [...scores].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).map(([id]) => id)
}

export function describeFullText(initializer: StorageInitializer): void {
  describe(`${initializer.name}: full text`, () => {
    const fixture = useFixture(initializer)

    for (const collection of ['knowledge', 'memories', 'messages'] as const) {
      it(`stems query words as the documents were, and ranks ${collection} by BM25 on the agent's own statistics`, async () => {
        const { storage, addDocuments } = fixture()
        const [dense, sparse, unrelated] = await addDocuments(collection, [
          { agentId: 'agent-a', text: 'gardens gardens garden party in spring' },
          {
            agentId: 'agent-a',
            text: 'a long walk past the old garden wall and down to the river bank at dusk',
          },
          { agentId: 'agent-a', text: 'the quarterly budget review' },
        ])
        expect(storage.fullText.terms('Gardens')).toEqual(storage.fullText.terms('garden'))
        expect(await rank(storage.fullText, collection, 'agent-a', 'gardens')).toEqual([dense, sparse])
        expect(await storage.fullText.corpus(collection, 'agent-a', 'all')).toMatchObject({ documents: 3 })
        const [term] = storage.fullText.terms('garden')
        const postings = await storage.fullText.postings(collection, 'agent-a', 'all', term as string)
        expect(postings.get(dense as string)?.frequency).toBe(3)
        expect(postings.has(unrelated as string)).toBe(false)
      })
    }

    it("keeps tenants apart: another agent's documents are neither candidates nor counted", async () => {
      const { storage, addDocuments } = fixture()
      const [mine] = await addDocuments('knowledge', [
        { agentId: 'agent-a', text: 'pottery class on tuesday' },
      ])
      const alone = await storage.fullText.corpus('knowledge', 'agent-a', 'all')
      await addDocuments('knowledge', [
        { agentId: 'agent-b', text: 'pottery pottery pottery wheel' },
        { agentId: 'agent-b', text: 'pottery kiln' },
        { agentId: 'agent-b', text: 'tuesday' },
      ])
      const [term] = storage.fullText.terms('pottery')
      const postings = await storage.fullText.postings('knowledge', 'agent-a', 'all', term as string)
      expect([...postings.keys()]).toEqual([mine])
      // Another tenant's documents move neither the document count nor the mean length.
      expect(await storage.fullText.corpus('knowledge', 'agent-a', 'all')).toEqual(alone)
      expect(alone.documents).toBe(1)
      expect(
        await storage.fullText.documentFrequencies('knowledge', 'agent-a', 'all', [term as string]),
      ).toEqual(new Map([[term, 1]]))
      expect(await storage.fullText.corpus('knowledge', 'agent-c', 'all')).toEqual({
        documents: 0,
        averageLength: 0,
      })
    })

    it('counts and finds messages by set: summaries (the summary prefix) apart from ordinary turns', async () => {
      const { storage, addDocuments } = fixture()
      const [turn, other, summary] = await addDocuments('messages', [
        { agentId: 'agent-a', text: 'we planted tomatoes in the garden' },
        { agentId: 'agent-a', text: 'the garden needs water' },
        { agentId: 'agent-a', text: `${CONTEXT_SUMMARY_PREFIX} they talked about the garden and tomatoes` },
      ])
      const { fullText } = storage
      const [garden] = fullText.terms('garden')
      const [tomato] = fullText.terms('tomatoes')
      const all = await fullText.corpus('messages', 'agent-a', 'all')
      const turns = await fullText.corpus('messages', 'agent-a', 'messages')
      const summaries = await fullText.corpus('messages', 'agent-a', 'summaries')
      expect([all.documents, turns.documents, summaries.documents]).toEqual([3, 2, 1])
      // Lengths follow the set: the summary is the longest document, so it alone moves the mean.
      expect(summaries.averageLength).toBeGreaterThan(all.averageLength)
      expect(turns.averageLength).toBeLessThan(all.averageLength)
      const postings = async (set: 'all' | 'messages' | 'summaries') =>
        [...(await fullText.postings('messages', 'agent-a', set, garden as string)).keys()].sort()
      expect(await postings('all')).toEqual([turn, other, summary].sort())
      expect(await postings('messages')).toEqual([turn, other].sort())
      expect(await postings('summaries')).toEqual([summary])
      const frequencies = (set: 'all' | 'messages' | 'summaries') =>
        fullText.documentFrequencies('messages', 'agent-a', set, [garden as string, tomato as string])
      expect(await frequencies('messages')).toEqual(
        new Map([
          [garden, 2],
          [tomato, 1],
        ]),
      )
      expect(await frequencies('summaries')).toEqual(
        new Map([
          [garden, 1],
          [tomato, 1],
        ]),
      )
    })

    it("streams an agent's documents with their index terms, then from a cursor only what was written after", async () => {
      const { storage, addDocuments, addTurns } = fixture()
      const { fullText } = storage
      const collect = async (cursor: string | null) => {
        const documents = []
        let last = cursor
        for await (const batch of fullText.indexedDocuments('messages', 'agent-a', cursor)) {
          documents.push(...batch.documents)
          last = batch.cursor
        }
        return { documents, cursor: last }
      }
      const [turn, summary] = await addDocuments('messages', [
        { agentId: 'agent-a', text: 'Gardens and gardens of tomatoes', sessionId: null },
        { agentId: 'agent-a', text: `${CONTEXT_SUMMARY_PREFIX} the garden` },
      ])
      await addDocuments('messages', [{ agentId: 'agent-b', text: 'gardens elsewhere' }])
      const first = await collect(null)
      expect(first.documents.map((d) => d.id)).toEqual([turn, summary])
      const [garden] = fullText.terms('garden')
      const byId = new Map(first.documents.map((d) => [d.id, d]))
      // The terms FTS5 holds, stop words too: their count is the document's BM25 length.
      expect(byId.get(turn as string)?.terms.filter((t) => t === garden)).toHaveLength(2)
      const corpus = await fullText.corpus('messages', 'agent-a', 'all')
      const total = first.documents.reduce((sum, d) => sum + d.terms.length, 0)
      expect(total / first.documents.length).toBeCloseTo(corpus.averageLength, 9)
      expect(byId.get(summary as string)?.summary).toBe(true)
      expect(byId.get(turn as string)?.summary).toBe(false)
      // A turn carries its stored time (the timeline dialogue context reads), to the millisecond.
      const at = new Date('2026-02-03T04:05:06.789Z')
      const { ids: timed } = await addTurns('agent-t', 'timed', [
        { content: 'a timed garden turn', timestamp: at },
      ])
      const timedDocuments = []
      for await (const batch of fullText.indexedDocuments('messages', 'agent-t', null))
        timedDocuments.push(...batch.documents)
      expect(timedDocuments.map((d) => [d.id, d.time])).toEqual([[timed[0], at.getTime()]])
      // The summary flag is the set recall reads (the prefix in any letter case): search ranks
      // candidates on it before reading their rows (issue 18, hybridmsg18).
      // And each turn's speaker as stored (null when none was named).
      const { ids: cased } = await addTurns('agent-s', 'cased', [
        { content: `${CONTEXT_SUMMARY_PREFIX.toLowerCase()} they talked about gardens`, timestamp: at },
        { content: 'an ordinary garden turn', timestamp: at, speaker: 'Ann' },
      ])
      const casedDocuments = []
      for await (const batch of fullText.indexedDocuments('messages', 'agent-s', null))
        casedDocuments.push(...batch.documents)
      expect(casedDocuments.map((d) => [d.id, d.summary, d.speaker])).toEqual([
        [cased[0], true, null],
        [cased[1], false, 'Ann'],
      ])
      expect(first.cursor).not.toBeNull()
      expect((await collect(first.cursor)).documents).toEqual([])
      const [later] = await addDocuments('messages', [{ agentId: 'agent-a', text: 'a later garden turn' }])
      expect((await collect(first.cursor)).documents.map((d) => d.id)).toEqual([later])
      expect((await fullText.documentIds('messages', 'agent-a')).sort()).toEqual(
        [turn, summary, later].sort(),
      )
      expect(await fullText.documentIds('memories', 'agent-a')).toEqual([])
      expect(await fullText.documentCount('messages', 'agent-a')).toBe(3)
      const version = await fullText.changeVersion()
      expect(version === null || typeof version === 'string').toBe(true)
    })
  })
}

// Issue 18 (hybrid18): hybrid search reads fewer turns for dialogue context (the episodes from
// the turns beside the candidates, a context turn's row only when it can reach the hits) and
// ranks exactly as reading whole episode spans did, on the real store of each backend.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'
import { addPausedHistory } from './paused-history.ts'

const SEARCH = `query($input: SearchInput!) { search(input: $input) { __typename
  ... on SearchResult { hits { score rank components { bm25 vector context episode time speaker } message { id } } } } }`
let t: TestApp
let key: string

beforeAll(async () => {
  t = await createTestApp()
  key = await createAgentKey(t, 'dialogue-reads')
  await addPausedHistory(t, key, 1_818)
})

afterAll(async () => {
  await t?.close()
})

describe('dialogue context read fewer ways (ENGRAM_SEARCH_DIALOGUE_READS)', () => {
  it('ranks the same hits with the same scores as whole-span reads, from the timeline or the store', async () => {
    const search = t.app.services.search
    expect(search.dialogueReads).toBe('index')
    // The store's dialogue reads, counted: `index` answers them from the agent's timeline.
    const { recall } = search as unknown as { recall: { turnsBeside: (...a: unknown[]) => Promise<unknown> } }
    const storeRead = recall.turnsBeside.bind(recall)
    const storeReads: Record<string, number> = { index: 0, fewer: 0, all: 0 }
    let way: 'index' | 'fewer' | 'all' = 'index'
    recall.turnsBeside = (...a: unknown[]) => {
      storeReads[way] = (storeReads[way] ?? 0) + 1
      return storeRead(...a)
    }
    let compared = 0
    for (const query of [
      'garden party',
      'cello in winter',
      'what did Alice say about the storm',
      'tea',
      'lake',
    ]) {
      for (const limit of [5, 20]) {
        const ranked: Record<string, unknown> = {}
        for (way of ['index', 'fewer', 'all'] as const) {
          search.dialogueReads = way
          const r = await t.gql(SEARCH, { input: { query, limit } }, key)
          expect(r.data.search.__typename).toBe('SearchResult')
          ranked[way] = r.data.search.hits
        }
        search.dialogueReads = 'index'
        expect(ranked.fewer).toEqual(ranked.all)
        expect(ranked.index).toEqual(ranked.all)
        compared += (ranked.fewer as unknown[]).length
      }
    }
    recall.turnsBeside = storeRead
    expect(compared).toBeGreaterThan(50)
    expect(storeReads).toEqual({ index: 0, fewer: 10, all: 10 })
    expect(t.app.services.lexicalIndexes.timeline('dialogue-reads')?.size).toBe(12 * 40)
  })

  it('takes the setting from the environment', async () => {
    const old = await createTestApp({ env: { ENGRAM_SEARCH_DIALOGUE_READS: 'all' } })
    try {
      expect(old.app.services.search.dialogueReads).toBe('all')
    } finally {
      await old.close()
    }
  })
})

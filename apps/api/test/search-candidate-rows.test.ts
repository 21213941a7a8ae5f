// Issue 18 (hybridmsg18): hybrid MESSAGES search ranks its candidates on the agent's turn timeline
// and reads only the rows of the turns that reach MMR's pool; the hits, their rows and scores are
// those of reading every candidate's row first (ENGRAM_SEARCH_CANDIDATE_ROWS=all), on the real
// store of each backend, with the vector side on and summaries (either letter case) in the index.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'
import { addPausedHistory } from './paused-history.ts'

const SEARCH = `query($input: SearchInput!) { search(input: $input) { __typename
  ... on SearchResult { hits { score rank relevance redundancy redundantWithRank text timestamp conversationId
    components { bm25 vector context episode time speaker decay recency }
    message { id content speaker role timestamp } } } } }`
let t: TestApp
let key: string

beforeAll(async () => {
  t = await createTestApp()
  key = await createAgentKey(t, 'candidate-rows')
  await addPausedHistory(t, key, 1_819, { summaries: true })
  await t.app.services.embeddings.settled()
})

afterAll(async () => {
  await t?.close()
})

describe("hybrid MESSAGES candidates' rows read for the pool only (ENGRAM_SEARCH_CANDIDATE_ROWS)", () => {
  it('ranks the same hits with the same rows and scores as reading every candidate, reading fewer rows', async () => {
    const search = t.app.services.search
    expect(search.candidateRows).toBe('pool')
    // The store's row reads, counted by ids asked for.
    const { recall } = search as unknown as {
      recall: { messages: (agentId: string, ids: readonly string[], ...rest: unknown[]) => Promise<unknown> }
    }
    const storeRead = recall.messages.bind(recall)
    const rowsRead: Record<string, number> = { pool: 0, all: 0 }
    let way: 'pool' | 'all' = 'pool'
    recall.messages = (agentId, ids, ...rest) => {
      rowsRead[way] = (rowsRead[way] ?? 0) + ids.length
      return storeRead(agentId, ids, ...rest)
    }
    let compared = 0
    let withVector = 0
    // Hits the speaker factor lifted: a query naming a participant ranks on the timeline's speakers.
    let named = 0
    try {
      for (const query of [
        'garden party',
        'cello in winter',
        'tea',
        'lake storm river',
        'summary of the drama',
        'what did Alice say about the storm',
      ]) {
        for (const limit of [5, 20]) {
          const ranked: Record<string, { text: string; components: { vector: number; speaker: number } }[]> =
            {}
          for (way of ['pool', 'all'] as const) {
            search.candidateRows = way
            const r = await t.gql(SEARCH, { input: { query, limit, scopes: ['MESSAGES'] } }, key)
            expect(r.data.search.__typename).toBe('SearchResult')
            ranked[way] = r.data.search.hits
          }
          search.candidateRows = 'pool'
          expect(ranked.pool).toEqual(ranked.all)
          for (const hit of ranked.pool ?? []) {
            expect(hit.text.toLowerCase().startsWith('[context summary]')).toBe(false)
            if (hit.components.vector > 0) withVector++
            if (hit.components.speaker > 1) named++
          }
          compared += ranked.pool?.length ?? 0
        }
      }
    } finally {
      recall.messages = storeRead
      search.candidateRows = 'pool'
    }
    expect(compared).toBeGreaterThan(80)
    // No search had to run again (a pool row gone or moved since the timeline caught up).
    expect(search.candidateRowsRetries).toBe(0)
    expect(withVector).toBeGreaterThan(0)
    expect(named).toBeGreaterThan(0)
    // Made to fail by reading every row (ENGRAM_SEARCH_CANDIDATE_ROWS=all as the default): it does.
    expect(rowsRead.pool).toBeLessThan((rowsRead.all ?? 0) / 2)
  })

  it('takes the setting from the environment', async () => {
    const old = await createTestApp({ env: { ENGRAM_SEARCH_CANDIDATE_ROWS: 'all' } })
    try {
      expect(old.app.services.search.candidateRows).toBe('all')
    } finally {
      await old.close()
    }
  })
})

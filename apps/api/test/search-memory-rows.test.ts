import { createHashingEmbedder } from '@engram/core'
import { loadWordNetLexicon } from '@engram/providers'
import type { MemoryRowReads } from '@engram/store-sqlite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { seededRandom } from '../../../packages/core/bench/report.ts'
import { textMaker } from '../bench/load.ts'
import { benchMemoryContents, seedMemoriesDirect } from '../bench/memory-seed.ts'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

// Search reads its candidate memories' rows by primary key since issue 18's memsearch18 slice (on
// SQLite the planner had walked the agent's whole index for them). The answers must not move:
// every search gives the same hits, scores and score components with the rows read either way
// (MemoryRowReads 'planner' is the statement as before), on this backend, while another agent's
// memories sit in the same tables.

const AGENT = 'memory-rows'
const OTHER = 'memory-rows-other'
const SEARCH = `query($q: String!, $s: SearchStrategy) {
  search(input: { query: $q, limit: 10, strategy: $s, scopes: [MEMORIES] }) {
    __typename
    ... on SearchResult {
      hits {
        id rank score mmrScore text
        components { bm25 vector confidence decay importance feedback cooccurrence context graph }
        memory { id validFrom tags metadata accessCount }
      }
    }
  }
}`

describe('search reads candidate memories by primary key', () => {
  const embedder = createHashingEmbedder({ lexicon: loadWordNetLexicon() })
  let t: TestApp
  let key: string

  beforeAll(async () => {
    t = await createTestApp({ embedder })
    key = await createAgentKey(t, AGENT)
    await createAgentKey(t, OTHER)
    // The other agent's rows first and last: ids on both sides of this agent's.
    await seedMemoriesDirect(t, OTHER, benchMemoryContents(100, 61), embedder)
    await seedMemoriesDirect(t, AGENT, benchMemoryContents(400, 59), embedder)
    await seedMemoriesDirect(t, OTHER, benchMemoryContents(100, 67), embedder)
  }, 120_000)

  afterAll(async () => {
    await t?.close()
  })

  it('gives the same hits and scores as the statement before', async () => {
    const recall = (t.app.services.search as unknown as { recall: { memoryRowReads: MemoryRowReads } }).recall
    const text = textMaker(seededRandom(71))
    let compared = 0
    for (let i = 0; i < 12; i++) {
      const q = text.sentence(2, 5)
      for (const s of ['HYBRID', 'LEXICAL']) {
        const ask = async (way: MemoryRowReads) => {
          recall.memoryRowReads = way
          try {
            const result = await t.gql(SEARCH, { q, s }, key)
            expect(result.data?.search?.__typename).toBe('SearchResult')
            return result.data.search.hits as { id: string; memory: { accessCount: number } }[]
          } finally {
            recall.memoryRowReads = 'primary-key'
          }
        }
        // Each search counts an access of its hits: compared without the count, which the
        // first search of the pair moves for the second.
        const strip = (hits: { memory: { accessCount: number } }[]) =>
          hits.map((h) => ({ ...h, memory: { ...h.memory, accessCount: 0 } }))
        const before = await ask('planner')
        const after = await ask('primary-key')
        expect(strip(after)).toEqual(strip(before))
        compared += after.length
      }
    }
    // Not an empty comparison: most searches find hits.
    expect(compared).toBeGreaterThan(100)
  })
})

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
// memories sit in the same tables. And hybrid memory search no longer searches the agent's turns
// for their context when none of its memories has a source turn: the same hits without it.

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

const ADD = `mutation($c: String!, $m: [MessageInput!]!) { addMessages(input: { conversationId: $c, messages: $m }) { __typename } }`

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
    // Turns of the same agent, sharing the memories' words: none is any memory's source turn.
    const turns = textMaker(seededRandom(73))
    const added = await t.gql(
      ADD,
      { c: 'c1', m: Array.from({ length: 60 }, () => ({ role: 'USER', content: turns.turn() })) },
      key,
    )
    expect(added.data?.addMessages?.__typename).toBe('AddMessagesPayload')
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

  it("skips the turns' context when no memory has a source turn, with the same hits", async () => {
    const search = t.app.services.search as any
    const recall = search.recall
    const own = recall.hasMemoryItemsFromTurns
    const scopes: string[] = []
    const candidates = search.sources.candidates.bind(search.sources)
    search.sources.candidates = (agentId: string, scope: string, ...rest: unknown[]) => {
      scopes.push(scope)
      return candidates(agentId, scope, ...rest)
    }
    try {
      const text = textMaker(seededRandom(79))
      let compared = 0
      for (let i = 0; i < 8; i++) {
        const q = text.sentence(2, 5)
        const ask = async () => {
          scopes.length = 0
          const result = await t.gql(SEARCH, { q, s: 'HYBRID' }, key)
          return {
            hits: (result.data?.search?.hits ?? []) as { memory: { accessCount: number } }[],
            scopes: [...scopes],
          }
        }
        // As before: the source turns' context read for every agent.
        recall.hasMemoryItemsFromTurns = async () => true
        const before = await ask()
        recall.hasMemoryItemsFromTurns = own
        const after = await ask()
        expect(before.scopes).toEqual(['MEMORIES', 'MESSAGES'])
        expect(after.scopes).toEqual(['MEMORIES'])
        const strip = (hits: { memory: { accessCount: number } }[]) =>
          hits.map((h) => ({ ...h, memory: { ...h.memory, accessCount: 0 } }))
        expect(strip(after.hits)).toEqual(strip(before.hits))
        compared += after.hits.length
      }
      expect(compared).toBeGreaterThan(40)
    } finally {
      recall.hasMemoryItemsFromTurns = own
      search.sources.candidates = candidates
    }
  })
})

import { createHashingEmbedder } from '@engram/core'
import { loadWordNetLexicon } from '@engram/providers'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { seededRandom } from '../../../packages/core/bench/report.ts'
import { textMaker } from '../bench/load.ts'
import { BENCH_MEMORY_CATEGORY, benchMemoryContents, seedMemoriesDirect } from '../bench/memory-seed.ts'
import { createAgentKey, createTestApp, TEST_BACKEND, type TestApp } from './helpers.ts'

// backends-scale seeds its 100K memories by direct SQL (bench/memory-seed.ts): a bench is only
// worth its figures if search sees those rows exactly as it sees memories the memory service
// stored. One app gets the memories through the verification pipeline, another by direct SQL;
// every search must give both the same hits, scores and score components, on this backend.

const AGENT = 'bench-seed-memories'
const COUNT = 200
const SEARCH = `query($q: String!, $s: SearchStrategy) {
  search(input: { query: $q, limit: 10, strategy: $s, scopes: [MEMORIES] }) {
    __typename
    ... on SearchResult {
      hits { id rank score mmrScore text components { bm25 vector confidence decay importance feedback cooccurrence } }
    }
  }
}`

describe('bench memories seeded by direct SQL', () => {
  const embedder = createHashingEmbedder({ lexicon: loadWordNetLexicon() })
  const contents = benchMemoryContents(COUNT, 59)
  let piped: TestApp
  let seeded: TestApp
  let pipedKey: string
  let seededKey: string

  beforeAll(async () => {
    piped = await createTestApp({ embedder })
    seeded = await createTestApp({ embedder })
    pipedKey = await createAgentKey(piped, AGENT)
    seededKey = await createAgentKey(seeded, AGENT)
    // With verification on, the pipeline supersedes some of these texts (they share words: 47 of
    // the first 500 replaced an earlier one); direct SQL stores every memory as current, as
    // load.ts's seed does, so the pipeline's side is asked to do the same.
    await piped.app.services.memoryItems.updateSettings(AGENT, { settings: { verificationEnabled: false } })
    for (const content of contents) {
      const result = await piped.app.services.memoryItems.create(AGENT, {
        content,
        category: BENCH_MEMORY_CATEGORY,
      })
      // Direct SQL stores every memory as current: the text must be such that the pipeline does too.
      expect(result.outcome).toBe('STORED')
    }
    await seedMemoriesDirect(seeded, AGENT, contents, embedder)
  }, 120_000)

  afterAll(async () => {
    await piped?.close()
    await seeded?.close()
  })

  it('stores the rows the memory service stores', async () => {
    const list = async (t: TestApp) =>
      (await t.app.services.memoryItems.list(AGENT, {}, 'createdAt')).page(0, COUNT + 1)
    const [a, b] = [await list(piped), await list(seeded)]
    expect(b).toHaveLength(COUNT)
    expect(b).toEqual(a)
    const stats = async (t: TestApp) => {
      const s = await t.app.services.memoryItems.stats(AGENT)
      return { total: s.total, current: s.current, embedded: s.embedded, vectorBytes: s.vectorBytes }
    }
    expect(await stats(seeded)).toEqual(await stats(piped))
    expect((await stats(seeded)).embedded).toBe(COUNT)
  })

  it.runIf(TEST_BACKEND === 'postgres')(
    'writes the tokens the Prisma client writes (no catch-up at the first search)',
    async () => {
      // Without them search would still match (it tokenises unindexed rows first), one UPDATE a
      // row: at 100K the bench would measure that instead.
      const tokens = async (t: TestApp) => {
        const client = new pg.Client({ connectionString: t.postgresUrl as string })
        await client.connect()
        try {
          const { rows } = await client.query(
            `SELECT "searchVector"::text AS v, "searchLength" AS n, "searchCounts" AS c FROM "MemoryItem" WHERE "agentId" = $1 ORDER BY "id"`,
            [AGENT],
          )
          return rows
        } finally {
          await client.end()
        }
      }
      const [a, b] = [await tokens(piped), await tokens(seeded)]
      expect(b).toHaveLength(COUNT)
      expect(b.every((row) => row.v !== null)).toBe(true)
      expect(b).toEqual(a)
    },
  )

  it('gives the same hits and scores: hybrid, lexical and by similarity', async () => {
    const text = textMaker(seededRandom(53))
    let found = 0
    for (let i = 0; i < 20; i++) {
      const q = text.sentence(2, 5)
      for (const s of ['HYBRID', 'LEXICAL', 'SIMILARITY'] as const) {
        const [a, b] = [
          await piped.gql(SEARCH, { q, s }, pipedKey),
          await seeded.gql(SEARCH, { q, s }, seededKey),
        ]
        expect(a.data?.search?.__typename, JSON.stringify(a.errors)).toBe('SearchResult')
        expect(b.data?.search?.hits, `${s} "${q}"`).toEqual(a.data.search.hits)
        found += a.data.search.hits.length
      }
    }
    // Queries that found nothing on either side would compare nothing.
    expect(found).toBeGreaterThan(200)
  })
})

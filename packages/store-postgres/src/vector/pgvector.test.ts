import { createHashingEmbedder, createTokenCounter, ExactVectorIndex, vectorToBytes } from '@engram/core'
import { type PgliteServer, startPglite } from '@engram/test-servers/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createPostgresDatabase, type PostgresDatabase } from '../db/client.ts'
import { applyPostgresMigrations } from '../migrate.ts'
import { createPostgresEngine } from '../postgres-engine.ts'
import { createPostgresStorage, type PostgresStorage } from '../storage.ts'
import { approximateSearchSql, EXACT_SEARCH_SQL, PostgresVectorStore } from './postgres-vector-store.ts'

// The pgvector path on PGlite 0.3 (Postgres 17 + pgvector 0.8 in WASM), served on a socket so the
// production @prisma/adapter-pg code runs against it with a pool of one.

const clock = { now: () => new Date('2026-01-15T10:00:00.000Z') }
const WIDTH = 32

let seed = 7
function random(): number {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
  return seed / 2 ** 31
}
function gaussian(): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random())
}
/** Vectors around a few centres (embeddings cluster by topic; uniform noise is no model's output). */
const centres = Array.from({ length: 24 }, () => Float32Array.from({ length: WIDTH }, gaussian))
function clustered(): Float32Array {
  const centre = centres[Math.floor(random() * centres.length)] as Float32Array
  return Float32Array.from(centre, (x) => x + 0.45 * gaussian())
}

let server: PgliteServer
let db: PostgresDatabase
let storage: PostgresStorage

beforeAll(async () => {
  server = await startPglite()
  await applyPostgresMigrations(server.url)
  db = createPostgresDatabase(server.url, { poolSize: 1 })
  storage = createPostgresStorage({ db, clock })
  for (const agent of ['agent-a', 'agent-b', 'agent-c']) await storage.repositories.agents.upsert(agent, null)
}, 180_000)

afterAll(async () => {
  await storage?.close()
  await server?.stop()
})

async function store(
  vectors: PostgresVectorStore,
  agentId: string,
  kind: string,
  firstId: number,
  count: number,
  make = clustered,
) {
  const written = Array.from({ length: count }, (_, i) => ({ id: String(firstId + i), vector: make() }))
  for (let start = 0; start < written.length; start += 256)
    await vectors.upsert(agentId, kind, written.slice(start, start + 256))
  return written
}

function exactOf(written: { id: string; vector: Float32Array }[]): ExactVectorIndex {
  const exact = new ExactVectorIndex()
  for (const { id, vector } of written) exact.upsert(id, vector)
  return exact
}

describe('vectors with pgvector (PGlite)', () => {
  it('finds pgvector at start and creates the HNSW index of a width with the configured m and ef_construction', async () => {
    expect(await storage.vectors.ready()).toEqual({ pgvector: true, listening: false })
    const hnswIndexes = () =>
      db.$queryRawUnsafe<{ name: string; definition: string; options: string[] }[]>(
        `SELECT i.indexname AS name, i.indexdef AS definition, c.reloptions AS options
         FROM pg_indexes i JOIN pg_class c ON c.relname = i.indexname
         WHERE i.tablename = 'Embedding' AND i.indexdef LIKE '%hnsw%' ORDER BY name`,
      )
    await store(storage.vectors, 'agent-c', 'memory', 1, 3)
    const indexes = await hnswIndexes()
    expect(indexes.map((i) => [i.name, i.options])).toEqual([
      [`Embedding_hnsw_d${WIDTH}_m16_ef64`, ['m=16', 'ef_construction=64']],
    ])
    expect(indexes[0]?.definition).toContain('vector_cosine_ops')
    expect(indexes[0]?.definition).toContain(`WHERE (dimensions = ${WIDTH})`)
    // Other parameters: a new index, and the old one goes (the planner would keep using it).
    const other = new PostgresVectorStore(db, clock, 'vector-store', { hnsw: { m: 8, efConstruction: 40 } })
    await other.upsert('agent-c', 'memory', [{ id: '4', vector: clustered() }])
    expect((await hnswIndexes()).map((i) => [i.name, i.options])).toEqual([
      [`Embedding_hnsw_d${WIDTH}_m8_ef40`, ['m=8', 'ef_construction=40']],
    ])
    await other.close()
    const back = new PostgresVectorStore(db, clock, 'vector-store')
    await back.upsert('agent-c', 'memory', [{ id: '5', vector: clustered() }])
    expect((await hnswIndexes()).map((i) => i.name)).toEqual([`Embedding_hnsw_d${WIDTH}_m16_ef64`])
    await back.close()
  })

  it('rejects HNSW parameters out of pgvector bounds, naming the field and the limit', () => {
    const bad = (hnsw: object) => {
      try {
        new PostgresVectorStore(db, clock, 'vector-store', { hnsw, search: 'notify' })
      } catch (error) {
        return (error as { issues: unknown[] }).issues[0]
      }
      return null
    }
    expect(bad({ m: 101 })).toMatchObject({ field: 'hnsw.m', limit: 100 })
    expect(bad({ m: 16, efConstruction: 20 })).toMatchObject({ field: 'hnsw.efConstruction', limit: 1000 })
    expect(bad({ efSearch: 0 })).toMatchObject({ field: 'hnsw.efSearch' })
  })

  it('below the threshold: the results of the exact scan, and the mirror column written with the bytes', async () => {
    const written = await store(storage.vectors, 'agent-a', 'note', 1000, 600)
    await store(storage.vectors, 'agent-b', 'note', 5000, 300)
    const [mirrored] = await db.$queryRawUnsafe<{ n: bigint }[]>(
      `SELECT count(*) AS n FROM "Embedding" WHERE "kind" = 'note' AND "embedding" IS NULL`,
    )
    expect(Number(mirrored?.n)).toBe(0)
    // With statistics and the width's HNSW index there: the plan still scores every row.
    await db.$executeRawUnsafe('ANALYZE "Embedding"')
    const plan = await db.$queryRawUnsafe<{ 'QUERY PLAN': string }[]>(
      `EXPLAIN ${EXACT_SEARCH_SQL}`,
      'agent-a',
      'note',
      'vector-store',
      `[${Array.from(clustered()).join(',')}]`,
      10,
    )
    expect(plan.map((row) => row['QUERY PLAN']).join('\n')).not.toContain('hnsw')
    const exact = exactOf(written)
    for (let q = 0; q < 20; q++) {
      const query = clustered()
      const hits = await storage.vectors.topK('agent-a', 'note', query, 10)
      const expected = exact.search(query, 10)
      expect(hits.map((h) => h.id)).toEqual(expected.map((h) => h.id))
      for (const [i, hit] of hits.entries())
        expect(hit.similarity).toBeCloseTo(expected[i]?.similarity ?? 0, 5)
    }
  })

  it('above the threshold: the HNSW index with recall@10 ≥ 0.95 against exact, `limit` hits of the agent only', async () => {
    const vectors = new PostgresVectorStore(db, clock, 'vector-store', { exactUpTo: 100 })
    const written = await store(vectors, 'agent-a', 'fact', 10_000, 1500)
    // Another tenant's rows are in the same index: iterative scan must skip them, not return fewer.
    const theirs = await store(vectors, 'agent-b', 'fact', 20_000, 1500)
    const theirIds = new Set(theirs.map((t) => t.id))
    const literal = `[${Array.from(clustered()).join(',')}]`
    // With statistics, as autovacuum would have them: the plan must still walk the graph.
    await db.$executeRawUnsafe('ANALYZE "Embedding"')
    const plan = await db.$queryRawUnsafe<{ 'QUERY PLAN': string }[]>(
      `EXPLAIN ${approximateSearchSql(WIDTH)}`,
      'agent-a',
      'fact',
      'vector-store',
      literal,
      10,
    )
    expect(plan.map((row) => row['QUERY PLAN']).join('\n')).toContain(`Embedding_hnsw_d${WIDTH}_m16_ef64`)
    const exact = exactOf(written)
    let found = 0
    const queries = 40
    for (let q = 0; q < queries; q++) {
      const query = clustered()
      const hits = await vectors.topK('agent-a', 'fact', query, 10)
      expect(hits).toHaveLength(10)
      expect(hits.some((h) => theirIds.has(h.id))).toBe(false)
      const truth = new Set(exact.search(query, 10).map((h) => h.id))
      found += hits.filter((h) => truth.has(h.id)).length
    }
    const recall = found / (queries * 10)
    console.info(
      `[pgvector] recall@10 against exact: ${recall.toFixed(3)} (${queries} queries, 1,500 + 1,500 vectors)`,
    )
    expect(recall).toBeGreaterThanOrEqual(0.95)
    await vectors.close()
  })

  it('mirrors rows written without the column before searching, and searches wider models exactly', async () => {
    const vector = clustered()
    // A raw write (as an import would): bytes only.
    await db.embedding.create({
      data: {
        kind: 'raw',
        ownerId: 77,
        agentId: 'agent-a',
        model: 'vector-store',
        dimensions: WIDTH,
        vector: vectorToBytes(vector) as Uint8Array<ArrayBuffer>,
        contentHash: '',
        createdAt: clock.now(),
      },
    })
    expect((await storage.vectors.topK('agent-a', 'raw', vector, 1))[0]).toMatchObject({ id: '77' })
    const wide = () => Float32Array.from({ length: 2001 }, gaussian)
    const written = await store(storage.vectors, 'agent-a', 'wide', 90_000, 5, wide)
    const query = written[3]?.vector as Float32Array
    expect((await storage.vectors.topK('agent-a', 'wide', query, 1))[0]?.id).toBe('90003')
    const [index] = await db.$queryRawUnsafe<{ n: bigint }[]>(
      `SELECT count(*) AS n FROM pg_indexes WHERE indexname LIKE 'Embedding_hnsw_d2001%'`,
    )
    expect(Number(index?.n)).toBe(0)
  })

  it("hands the engine's search paths a handle on SQL: nothing held in memory, the exact scan's results, the catch-up first", async () => {
    const written = await store(storage.vectors, 'agent-c', 'handle', 300_000, 200)
    let caughtUp = 0
    const handle = await storage.vectors.searchIndex('agent-c', 'handle', {
      writeVersion: 'w1',
      catchUp: async () => {
        caughtUp++
      },
    })
    expect(caughtUp).toBe(1)
    expect(handle).toMatchObject({ size: 200, dimensions: WIDTH })
    const exact = exactOf(written)
    for (let q = 0; q < 5; q++) {
      const query = clustered()
      expect((await handle.search(query, 10)).map((h) => h.id)).toEqual(
        exact.search(query, 10).map((h) => h.id),
      )
    }
    // pgvector answered: no in-process index was built for the agent.
    expect(storage.vectors.held('agent-c')).toBe(0)
    // Written after: the next handle counts it, and the handle in hand finds it (the SQL is live).
    const late = clustered()
    await storage.vectors.upsert('agent-c', 'handle', [{ id: '399999', vector: late }])
    expect((await handle.search(late, 1))[0]?.id).toBe('399999')
    expect((await storage.vectors.searchIndex('agent-c', 'handle', { writeVersion: 'w2' })).size).toBe(201)
    // A query of other dimensions is refused, naming the field and the width.
    const refused = await Promise.resolve(handle.search(Float32Array.from([1, 0]), 1)).catch((e) => e)
    expect(refused.issues?.[0]).toMatchObject({ field: 'query', limit: WIDTH })
  })

  it("the engine's hybrid search of messages and its duplicate check of memories run on pgvector", async () => {
    const engine = createPostgresEngine({
      db,
      clock,
      tokenCounter: createTokenCounter('heuristic'),
      embedder: createHashingEmbedder({ dimensions: 64 }),
      log: { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} } as unknown as Console,
    })
    await engine.storage.repositories.agents.upsert('agent-e', null)
    for (const content of [
      'We moved the standup to Thursday mornings.',
      'The kayak trip on the lake is booked for June.',
      'Dana is the tech lead on the billing project.',
    ])
      await engine.sessions.addMessage('agent-e', 'c1', { role: 'user', speaker: 'dana', content })
    const hits = await engine.search.search('agent-e', 'kayak lake June', {
      scopes: ['MESSAGES'],
      strategy: 'SIMILARITY',
      limit: 3,
    })
    expect(hits[0]?.text).toContain('kayak')
    expect(hits[0]?.components.vector).toBeGreaterThan(0)
    const [row] = await db.$queryRawUnsafe<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM "Embedding" WHERE "agentId" = 'agent-e' AND "embedding" IS NOT NULL`,
    )
    expect(row?.n).toBe(3)
    // The memory write's duplicate check asks the memory vectors' handle for neighbours.
    const fact = { content: 'Dana prefers window seats on long flights.', category: 'preference' as const }
    expect((await engine.memoryItems.create('agent-e', fact)).outcome).toBe('STORED')
    expect((await engine.memoryItems.create('agent-e', fact)).outcome).toBe('DUPLICATE')
    expect(engine.storage.vectors.held('agent-e')).toBe(0)
  })
})

import type { SearchableVectors } from '@engram/engine'
import { createDatabase } from '@engram/test-servers'
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest'
import { createPostgresDatabase, type PostgresDatabase } from '../db/client.ts'
import { applyPostgresMigrations } from '../migrate.ts'
import { createPostgresStorage, type PostgresStorage } from '../storage.ts'

// Two replicas on one real postgresql-15 (no pgvector there): two pools, two listeners. A write
// on A must become searchable on B through NOTIFY, within a bound this test measures.

const clock = { now: () => new Date('2026-01-15T10:00:00.000Z') }
const DIMENSIONS = 16
const WRITES = 200
/** Past this a vector written on A and not found on B fails the test. */
const GIVE_UP_MS = 5_000

let seed = 42
function random(): number {
  // A fixed sequence: the same vectors on every run.
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
  return seed / 2 ** 31
}
function randomVector(): Float32Array {
  return Float32Array.from({ length: DIMENSIONS }, () => random() * 2 - 1)
}

let url: string
const databases: PostgresDatabase[] = []
const storages: PostgresStorage[] = []

function replica(reconnectMs = 100): PostgresStorage {
  const db = createPostgresDatabase(url, { poolSize: 4 })
  databases.push(db)
  const storage = createPostgresStorage({
    db,
    clock,
    vectors: {
      search: 'notify',
      listenUrl: url,
      reconnect: { minDelayMs: reconnectMs, maxDelayMs: reconnectMs },
    },
  })
  storages.push(storage)
  return storage
}

beforeAll(async () => {
  url = await createDatabase(inject('postgresUrl'))
  await applyPostgresMigrations(url)
})

afterAll(async () => {
  for (const storage of storages) await storage.close()
})

const searchOn = (storage: PostgresStorage, agentId: string): Promise<SearchableVectors> =>
  storage.vectors.searchIndex(agentId, 'memory', { writeVersion: null })

/** Searches B until `id` is the nearest to `vector` (or, with `gone`, until it no longer is); ms taken. */
async function untilSeen(
  storage: PostgresStorage,
  agentId: string,
  id: string,
  vector: Float32Array,
  gone = false,
) {
  const started = performance.now()
  for (;;) {
    const index = await searchOn(storage, agentId)
    const found = (await index.search(vector, 1))[0]?.id === id
    if (found !== gone) return performance.now() - started
    if (performance.now() - started > GIVE_UP_MS)
      throw new Error(`${id} not ${gone ? 'gone' : 'found'} after ${GIVE_UP_MS} ms`)
    await new Promise((resolve) => setImmediate(resolve))
  }
}

async function waitFor(condition: () => Promise<boolean>): Promise<void> {
  const started = performance.now()
  while (!(await condition())) {
    if (performance.now() - started > GIVE_UP_MS) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number
}

describe('vectors on postgresql-15 without pgvector: per-replica indexes kept in step by NOTIFY', () => {
  it('finds on B every vector written on A, within a measured delay, and a quiet index costs no query', async () => {
    const a = replica()
    const b = replica()
    expect(await a.vectors.ready()).toEqual({ pgvector: false, listening: true })
    expect(await b.vectors.ready()).toEqual({ pgvector: false, listening: true })
    await a.repositories.agents.upsert('agent-a', null)
    await a.repositories.agents.upsert('agent-b', null)
    // B holds the index before A writes (the case that needs a notification).
    await a.vectors.upsert('agent-a', 'memory', [{ id: '1', vector: randomVector(), contentHash: 'h1' }])
    expect((await searchOn(b, 'agent-a')).size).toBe(1)

    const delays: number[] = []
    for (let i = 0; i < WRITES; i++) {
      const id = String(i + 2)
      const vector = randomVector()
      await a.vectors.upsert('agent-a', 'memory', [{ id, vector, contentHash: `h${id}` }])
      delays.push(await untilSeen(b, 'agent-a', id, vector))
    }
    delays.sort((x, y) => x - y)
    const figures = { p50: percentile(delays, 50), p95: percentile(delays, 95), max: delays.at(-1) as number }
    console.info(
      `[vectors] write on A searchable on B (${WRITES} writes): p50 ${figures.p50.toFixed(1)} ms, p95 ${figures.p95.toFixed(1)} ms, max ${figures.max.toFixed(1)} ms`,
    )
    expect(figures.max).toBeLessThan(1000)
    expect((await searchOn(b, 'agent-a')).size).toBe(WRITES + 1)

    // Nothing written: B answers from memory, no count, no read of the table.
    const count = vi.spyOn(b.vectors, 'count')
    const patch = vi.spyOn(b.vectors as unknown as { patchFromTable: () => unknown }, 'patchFromTable')
    for (let i = 0; i < 50; i++) await searchOn(b, 'agent-a')
    expect(count).not.toHaveBeenCalled()
    expect(patch).not.toHaveBeenCalled()
    count.mockRestore()
    patch.mockRestore()

    // Another agent's writes leave agent-a's index alone, and are found on B under agent-b only.
    const other = randomVector()
    await a.vectors.upsert('agent-b', 'memory', [{ id: '9001', vector: other, contentHash: 'x' }])
    await untilSeen(b, 'agent-b', '9001', other)
    expect((await (await searchOn(b, 'agent-a')).search(other, 300)).some((hit) => hit.id === '9001')).toBe(
      false,
    )

    // A replaced vector (same id and count) and a removal reach B too.
    const replaced = randomVector()
    await a.vectors.upsert('agent-a', 'memory', [{ id: '5', vector: replaced, contentHash: 'h5-new' }])
    await untilSeen(b, 'agent-a', '5', replaced)
    expect(await a.vectors.remove('agent-a', 'memory', ['5'])).toBe(1)
    await untilSeen(b, 'agent-a', '5', replaced, true)
    expect((await searchOn(b, 'agent-a')).size).toBe(WRITES)

    // The agent deleted on A (its vectors go by cascade): B holds none of them after.
    await a.db.agent.delete({ where: { id: 'agent-b' } })
    await waitFor(async () => (await searchOn(b, 'agent-b')).size === 0)
  })

  it('refuses pgvector where the server has none, and sets up again after a failed start', async () => {
    const forced = createPostgresStorage({
      db: createPostgresDatabase(url, { poolSize: 1 }),
      clock,
      vectors: { search: 'pgvector' },
    })
    storages.push(forced)
    await expect(forced.vectors.ready()).rejects.toThrow(/no pgvector extension/)
    // Started before the tables exist (as if the server were not ready): the next call tries again.
    const later = await createDatabase(inject('postgresUrl'))
    const early = createPostgresStorage({ db: createPostgresDatabase(later, { poolSize: 1 }), clock })
    storages.push(early)
    await expect(early.vectors.ready()).rejects.toThrow()
    await applyPostgresMigrations(later)
    expect(await early.vectors.ready()).toEqual({ pgvector: false, listening: false })
    await early.repositories.agents.upsert('agent-e', null)
    const vector = randomVector()
    await early.vectors.upsert('agent-e', 'memory', [{ id: '1', vector }])
    expect((await early.vectors.topK('agent-e', 'memory', vector, 1))[0]?.id).toBe('1')
  })

  it("still finds every vector with B's listener killed, checking the table until it listens again", async () => {
    const a = replica()
    // A long first backoff: B stays without notifications for the writes below.
    const b = replica(2_500)
    await a.vectors.ready()
    expect((await b.vectors.ready()).listening).toBe(true)
    await a.repositories.agents.upsert('agent-k', null)
    await a.vectors.upsert('agent-k', 'memory', [{ id: '1', vector: randomVector(), contentHash: 'h1' }])
    expect((await searchOn(b, 'agent-k')).size).toBe(1)

    const pid = await b.vectors.listenerPid()
    expect(pid).not.toBeNull()
    await a.db.$queryRawUnsafe('SELECT pg_terminate_backend($1)', pid)
    await waitFor(async () => !(await b.vectors.ready()).listening)

    const count = vi.spyOn(b.vectors as unknown as { patchFromTable: () => unknown }, 'patchFromTable')
    for (let i = 0; i < 20; i++) {
      const id = String(i + 2)
      const vector = randomVector()
      await a.vectors.upsert('agent-k', 'memory', [{ id, vector, contentHash: `h${id}` }])
      // Found on the first search: with no listener every search checks the table.
      expect(await untilSeen(b, 'agent-k', id, vector)).toBeLessThan(1000)
      expect((await (await searchOn(b, 'agent-k')).search(vector, 1))[0]?.id).toBe(id)
    }
    expect(count.mock.calls.length).toBeGreaterThanOrEqual(40)
    count.mockRestore()
    // Nothing written meanwhile: each check is one aggregate row (the fingerprint), no rows read.
    const queries = vi.spyOn(b.db, '$queryRawUnsafe')
    for (let i = 0; i < 10; i++) await searchOn(b, 'agent-k')
    const sql = queries.mock.calls.map((call) => String(call[0]))
    queries.mockRestore()
    expect(sql.filter((text) => text.includes('hashtextextended'))).toHaveLength(10)
    expect(sql.filter((text) => text.includes('SELECT "ownerId", "contentHash"'))).toHaveLength(0)
    expect((await b.vectors.ready()).listening).toBe(false)

    // Back (a new connection, LISTEN again): notifications carry writes once more.
    await waitFor(async () => (await b.vectors.ready()).listening)
    expect(await b.vectors.listenerPid()).not.toBe(pid)
    const vector = randomVector()
    await a.vectors.upsert('agent-k', 'memory', [{ id: '100', vector, contentHash: 'h100' }])
    expect(await untilSeen(b, 'agent-k', '100', vector)).toBeLessThan(1000)
    expect((await searchOn(b, 'agent-k')).size).toBe(22)
  })
})

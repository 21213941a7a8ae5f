import { createDatabase } from '@engram/test-servers'
import pg from 'pg'
import { afterAll, beforeEach, describe, expect, inject, it } from 'vitest'
import { createPostgresDatabase, type PostgresDatabase } from '../db/client.ts'
import { applyPostgresMigrations } from '../migrate.ts'
import { createPostgresStorage, type PostgresStorage } from '../storage.ts'

// A store's start-up installs the NOTIFY triggers on "Embedding" and on the four tables whose
// rows own vectors. Deleting an owner row takes its table, then "Embedding" (the
// *_embedding_delete trigger): a start-up that held "Embedding" while waiting for the owner's
// table deadlocked such a delete (the conformance suite's flaky "deletes many at once").

const clock = { now: () => new Date('2026-01-15T10:00:00.000Z') }
/** Past this the awaited lock wait has not shown up: the test fails instead of hanging. */
const GIVE_UP_MS = 10_000

let url: string
const storages: PostgresStorage[] = []
const databases: PostgresDatabase[] = []
const clients: pg.Client[] = []

async function client(): Promise<pg.Client> {
  const connection = new pg.Client({ connectionString: url })
  await connection.connect()
  clients.push(connection)
  return connection
}

function store(): PostgresStorage {
  const db = createPostgresDatabase(url, { poolSize: 2 })
  databases.push(db)
  const storage = createPostgresStorage({ db, clock, vectors: { search: 'notify' } })
  storages.push(storage)
  return storage
}

/**
 * Polls until some session waits for a lock on `table` (true) or `done()` holds first (false);
 * throws past GIVE_UP_MS instead of hanging.
 */
async function waitsFor(
  observer: pg.Client,
  table: string,
  done: () => boolean = () => false,
): Promise<boolean> {
  const started = performance.now()
  for (;;) {
    const { rows } = await observer.query<{ waiting: number }>(
      `SELECT count(*)::int AS waiting FROM pg_locks WHERE NOT granted AND relation = $1::regclass`,
      [`"${table}"`],
    )
    if ((rows[0]?.waiting ?? 0) > 0) return true
    if (done()) return false
    if (performance.now() - started > GIVE_UP_MS) throw new Error(`nobody waited for "${table}"`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

/** Settles with the value or the error (never rejects), and says when it has. */
function settling<T>(work: Promise<T>): { result: Promise<T | Error>; settled: () => boolean } {
  let settled = false
  const result = work.then(
    (value) => value,
    (error: Error) => error,
  )
  void result.finally(() => {
    settled = true
  })
  return { result, settled: () => settled }
}

beforeEach(async () => {
  // A fresh database each: its triggers not installed yet, as on a first start.
  url = await createDatabase(inject('postgresUrl'))
  await applyPostgresMigrations(url)
})

afterAll(async () => {
  for (const connection of clients) await connection.end().catch(() => {})
  for (const storage of storages) await storage.close()
})

describe('the vector schema setup and concurrent deletes of vector owners', () => {
  it('a store starting while a transaction writes facts and deletes one does not deadlock either', async () => {
    const writer = await client()
    const observer = await client()
    await writer.query(`INSERT INTO "Agent" ("id", "name") VALUES ('agent-a', 'A')`)
    const ids: number[] = []
    for (const key of ['kept', 'gone']) {
      const { rows } = await writer.query<{ id: number }>(
        `INSERT INTO "Knowledge" ("agentId", "category", "key", "value", "confidence", "createdAt", "updatedAt")
         VALUES ('agent-a', 'domain', $1, 'v', 0.5, now(), now()) RETURNING "id"`,
        [key],
      )
      ids.push(rows[0]?.id as number)
    }
    // The writer holds "Knowledge" (a fact changed, uncommitted), as a knowledge transaction does.
    await writer.query('BEGIN')
    await writer.query(`UPDATE "Knowledge" SET "value" = 'changed' WHERE "id" = $1`, [ids[0]])
    const starting = store()
    const setup = settling(starting.vectors.ready())
    expect(await waitsFor(observer, 'Knowledge')).toBe(true)
    // Deleting a fact deletes its vectors too: the writer now needs "Embedding".
    const deleted = await writer.query(`DELETE FROM "Knowledge" WHERE "id" = $1`, [ids[1]]).then(
      (result) => result.rowCount,
      (error: Error) => error,
    )
    await writer.query(deleted instanceof Error ? 'ROLLBACK' : 'COMMIT')
    expect(deleted).toBe(1)
    expect(await setup.result).toEqual({ pgvector: false, listening: false })
  })

  it("a fact deleted while a store starts is deleted (the conformance suite's deleteMany)", async () => {
    const writer = await client()
    const observer = await client()
    const blocker = await client()
    const db = createPostgresDatabase(url, { poolSize: 2 })
    databases.push(db)
    await db.agent.create({ data: { id: 'agent-a', name: 'A' } })
    const facts = await Promise.all(
      ['kept', 'other'].map((key) =>
        db.knowledge.create({
          data: { agentId: 'agent-a', category: 'domain', key, value: 'v', confidence: 0.5 },
        }),
      ),
    )
    // A memory write in flight holds "MemoryItem": the start-up waits for it.
    await blocker.query('BEGIN')
    await blocker.query('LOCK TABLE "MemoryItem" IN ROW EXCLUSIVE MODE')
    const setup = settling(store().vectors.ready())
    expect(await waitsFor(observer, 'MemoryItem')).toBe(true)
    // One statement (Prisma's deleteMany is a single DELETE): "Knowledge", then its trigger's "Embedding".
    const deleting = settling(
      db.knowledge.deleteMany({ where: { agentId: 'agent-a', id: { in: facts.map((f) => f.id) } } }),
    )
    // Before the fix the delete waited for "Embedding", which the start-up held, and the start-up
    // then waited for "Knowledge", which the delete held: Postgres aborted the delete (P2034).
    await waitsFor(observer, 'Embedding', deleting.settled)
    await blocker.query('COMMIT')
    expect(await deleting.result).toEqual({ count: 2 })
    expect(await setup.result).toEqual({ pgvector: false, listening: false })
    expect(await writer.query('SELECT count(*)::int AS n FROM "Knowledge"')).toMatchObject({
      rows: [{ n: 0 }],
    })
  })

  it('a store starting on a database set up already takes no table lock', async () => {
    const first = store()
    await first.vectors.ready()
    const writer = await client()
    // A transaction holding every table the setup would lock, in the strongest mode a write takes.
    await writer.query('BEGIN')
    await writer.query(
      'LOCK TABLE "Embedding", "MemoryItem", "Message", "Knowledge", "Summary" IN ROW EXCLUSIVE MODE',
    )
    const locks = await writer.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_locks WHERE pid = pg_backend_pid() AND locktype = 'relation'`,
    )
    expect(locks.rows[0]?.n).toBeGreaterThanOrEqual(5)
    // Before the fix every start re-ran CREATE OR REPLACE TRIGGER and waited here for the writer.
    const observer = await client()
    const setup = settling(store().vectors.ready())
    expect(await waitsFor(observer, 'Embedding', setup.settled)).toBe(false)
    expect(await setup.result).toEqual({ pgvector: false, listening: false })
    await writer.query('COMMIT')
  })
})

import {
  applyPostgresMigrations,
  createPostgresDatabase,
  createPostgresStorage,
  type PostgresDatabase,
  sharedView,
} from '@engram/store-postgres'
import { type PgliteServer, startPglite } from '@engram/test-servers/pglite'
import { ManualClock, type StorageInitializer } from '../types.ts'
import { emptyTables } from './postgres.ts'
import { addRows, recallRows, VECTOR_APPROXIMATE_ABOVE } from './sqlite.ts'

/**
 * PGlite (Postgres 17 + pgvector 0.8 in WASM) on a socket, for the pgvector path: one per test
 * file, migrated, and one pool of one connection kept for the file (PGlite serves one at a time:
 * a pool closed and reopened per spec would race its own last connection).
 */
let started: Promise<{ server: PgliteServer; db: PostgresDatabase }> | null = null

export function startPgliteDatabase(): Promise<{ server: PgliteServer; db: PostgresDatabase }> {
  started ??= (async () => {
    const server = await startPglite()
    await applyPostgresMigrations(server.url)
    return { server, db: createPostgresDatabase(server.url, { poolSize: 1 }) }
  })()
  return started
}

export async function stopPgliteDatabase(): Promise<void> {
  if (!started) return
  const { server, db } = await started
  started = null
  await db.$disconnect()
  await server.stop()
}

export const pgliteInitializer: StorageInitializer = {
  name: 'postgres (pgvector, PGlite)',
  capabilities: { backup: false, multiProcess: true },
  persistsVectorIndexes: false,
  async create() {
    const { db } = await startPgliteDatabase()
    const clock = new ManualClock()
    await emptyTables(db)
    const vectorIndex = { approximateAbove: VECTOR_APPROXIMATE_ABOVE, hnsw: { initialCapacity: 64 } }
    // pgvector past the same small size as the in-process index: the HNSW SQL runs in the specs.
    const storage = createPostgresStorage({
      db,
      clock,
      vectorIndex,
      vectors: { search: 'pgvector', exactUpTo: VECTOR_APPROXIMATE_ABOVE },
    })
    await storage.vectors.ready()
    const rows = sharedView(db)
    return {
      storage,
      clock,
      addDocuments: (collection, documents) => addRows(rows, clock, collection, documents),
      ...recallRows(rows),
      async openAnother() {
        return createPostgresStorage({ db, clock, vectorIndex, vectors: { search: 'pgvector' } })
      },
    }
  },
  async destroy(fixture) {
    await fixture.storage.vectors.settled()
    // The pool stays for the next spec (stopPgliteDatabase closes it); only the store's own state goes.
    await (fixture.storage as { vectors: { close?: () => Promise<void> } }).vectors.close?.()
  },
}

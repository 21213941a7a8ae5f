import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { FullTextCollection, FullTextDocument } from '@engram/engine'
import {
  applyPostgresMigrations,
  createPostgresDatabase,
  createPostgresStorage,
  type PostgresDatabase,
  type PostgresStorage,
  sharedView,
} from '@engram/store-postgres'
import { createDatabase } from '@engram/test-servers'
import { inject } from 'vitest'
import { ManualClock, type StorageInitializer } from '../types.ts'
import { addRows, recallRows, VECTOR_APPROXIMATE_ABOVE } from './sqlite.ts'

/** One database per test file (created and migrated on first use), emptied before each spec. */
let database: Promise<string> | null = null
function testDatabase(): Promise<string> {
  database ??= (async () => {
    const url = await createDatabase(inject('postgresUrl'))
    await applyPostgresMigrations(url)
    return url
  })()
  return database
}

const held = new WeakMap<
  object,
  { databases: PostgresDatabase[]; storages: PostgresStorage[]; backupDirectory?: string }
>()

/**
 * Every table but the migration history emptied and its ids restarted: a fresh store in tens
 * of milliseconds, where a database per spec would cost a CREATE DATABASE each.
 */
export async function emptyTables(db: PostgresDatabase): Promise<void> {
  const tables = await db.$queryRawUnsafe<{ name: string }[]>(
    `SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() AND tablename <> '_prisma_migrations'`,
  )
  if (tables.length === 0) return
  await db.$executeRawUnsafe(
    `TRUNCATE ${tables.map((t) => `"${t.name}"`).join(', ')} RESTART IDENTITY CASCADE`,
  )
}

export const postgresInitializer: StorageInitializer = {
  name: 'postgres',
  capabilities: { backup: true, multiProcess: true },
  persistsVectorIndexes: false,
  async create() {
    const url = await testDatabase()
    const clock = new ManualClock()
    const db = createPostgresDatabase(url, { poolSize: 4 })
    await emptyTables(db)
    const vectorIndex = { approximateAbove: VECTOR_APPROXIMATE_ABOVE, hnsw: { initialCapacity: 64 } }
    // Each store listens for vector changes (NOTIFY), as a replica does.
    const vectors = { listenUrl: url }
    // Logical backups into a folder of this spec's own, removed with the fixture.
    const backupDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-pg-backups-'))
    const storage = createPostgresStorage({
      db,
      clock,
      vectorIndex,
      vectors,
      backups: { url, directory: backupDirectory },
    })
    const others: PostgresDatabase[] = []
    const otherStorages: PostgresStorage[] = []
    // The rows are written through the same model calls as on SQLite (the client adds tokens).
    const rows = sharedView(db)
    const fixture = {
      storage,
      clock,
      addDocuments: (collection: FullTextCollection, documents: Omit<FullTextDocument, 'id'>[]) =>
        addRows(rows, clock, collection, documents),
      ...recallRows(rows),
      async openAnother() {
        const other = createPostgresDatabase(url, { poolSize: 2 })
        others.push(other)
        const another = createPostgresStorage({ db: other, clock, vectorIndex, vectors })
        otherStorages.push(another)
        return another
      },
    }
    held.set(fixture, { databases: others, storages: otherStorages, backupDirectory })
    return fixture
  },
  async destroy(fixture) {
    await fixture.storage.vectors.settled()
    await fixture.storage.close()
    const { databases = [], storages = [], backupDirectory } = held.get(fixture) ?? {}
    for (const other of storages) await other.vectors.settled()
    // close() stops each store's listener and its pool.
    for (const other of storages) await other.close()
    for (const other of databases) await other.$disconnect()
    if (backupDirectory) fs.rmSync(backupDirectory, { recursive: true, force: true })
  },
}

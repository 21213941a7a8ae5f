// Seeding a bench agent's memories at the scale (100K) by direct SQL on either backend.
// Through the memory service each memory runs the verification pipeline (duplicate and
// contradiction checks against its neighbours: ~40 ms a memory on SQLite, ~190 ms on Postgres on
// the shared 2-core machine), so 100K would take hours; a bench measures search, not that. The
// rows written here are those the pipeline writes for a memory it stores (MemoryItem with its
// content hash and token count, and on Postgres the FTS5 tokens the Prisma client would have
// added; the Embedding row with the server's embedder's vector); the full-text triggers, the
// vector NOTIFY triggers and the in-process indexes (lexical index, slot postings), which load
// from those rows at the first search, do the rest. bench-memory-seed.test.ts checks that search
// finds the same hits with the same scores either way, on both backends.
import { createTokenCounter, type Embedder, vectorToBytes } from '@engram/core'
import { contentHash } from '@engram/engine'
import { searchTokens } from '@engram/store-postgres'
import { sqliteDate } from '@engram/store-sqlite'
import Database from 'better-sqlite3'
import pg from 'pg'
import { seededRandom } from '../../../packages/core/bench/report.ts'
import type { TestApp } from '../test/helpers.ts'
import { textMaker } from './load.ts'

/** What every bench memory is filed under (backends-scale's memories always were facts). */
export const BENCH_MEMORY_CATEGORY = 'fact'
/** Rows per transaction on SQLite: the WAL stays small. */
const SQLITE_BATCH = 5_000
/** Rows per multi-row INSERT on Postgres: 9 parameters a memory row, under the 65,535 limit. */
const POSTGRES_BATCH = 1_000

/** The memories' text, as backends-scale always wrote them (the same seed gives the same text). */
export function benchMemoryContents(count: number, seed: number): string[] {
  const text = textMaker(seededRandom(seed))
  return Array.from({ length: count }, (_, i) => `memory ${i}: ${text.sentence(8, 24)}`)
}

/** One memory's row as the memory service's create writes it for an explicit write's defaults. */
interface MemoryRow {
  content: string
  contentHash: string
  tokenCount: number
  vector: Buffer
}

/**
 * Writes `contents` as the agent's memories, each stored and current (what the pipeline does
 * when none duplicates or contradicts another: the equivalence test checks it did), then tells
 * the app the agent changed. `embedder` must be the app's (its model names the vectors).
 */
export async function seedMemoriesDirect(
  t: TestApp,
  agentId: string,
  contents: readonly string[],
  embedder: Embedder,
): Promise<{ seconds: number }> {
  const started = performance.now()
  // The tokenizer the test app counts with (ENGRAM_TOKENIZER=o200k_base in createTestApp).
  const tokens = createTokenCounter('o200k_base')
  const now = t.clock.now()
  const rows = async (from: number, to: number): Promise<MemoryRow[]> => {
    const texts = contents.slice(from, to)
    const vectors = await embedder.embed(texts)
    return texts.map((content, i) => ({
      content,
      contentHash: contentHash(content),
      tokenCount: tokens.count(content),
      vector: Buffer.from(vectorToBytes(vectors[i] as Float32Array).buffer),
    }))
  }
  if (t.postgresUrl) await seedPostgres(t.postgresUrl, agentId, contents.length, rows, now, embedder.model)
  else await seedSqlite(t.databaseFile, agentId, contents.length, rows, now, embedder.model)
  // Caches keyed by the agent's write version must see the rows (the service touches it per write).
  t.app.services.writes.touch(agentId)
  return { seconds: (performance.now() - started) / 1_000 }
}

async function seedSqlite(
  file: string,
  agentId: string,
  count: number,
  rows: (from: number, to: number) => Promise<MemoryRow[]>,
  now: Date,
  model: string,
): Promise<void> {
  // A connection of its own, as another process would write (WAL: the app's connection sees the
  // rows through data_version); the FTS5 triggers index each row as it goes in.
  const db = new Database(file)
  db.pragma('busy_timeout = 10000')
  const at = sqliteDate(now)
  try {
    const insertMemory = db.prepare(
      `INSERT INTO "MemoryItem" ("agentId", "userId", "content", "category", "tags", "importance", "confidence",
         "pinned", "sourceConversationId", "sourceMessageId", "validFrom", "validUntil", "metadata", "contentHash",
         "tokenCount", "createdAt", "updatedAt")
       VALUES (?, NULL, ?, ?, '[]', 0.5, 1, 0, NULL, NULL, ?, NULL, '{}', ?, ?, ?, ?)`,
    )
    const insertEmbedding = db.prepare(
      `INSERT INTO "Embedding" ("kind", "ownerId", "agentId", "model", "dimensions", "vector", "contentHash", "createdAt")
       VALUES ('memory', ?, ?, ?, ?, ?, ?, ?)`,
    )
    for (let from = 0; from < count; from += SQLITE_BATCH) {
      const batch = await rows(from, Math.min(count, from + SQLITE_BATCH))
      db.transaction(() => {
        for (const row of batch) {
          const { lastInsertRowid } = insertMemory.run(
            agentId,
            row.content,
            BENCH_MEMORY_CATEGORY,
            at,
            row.contentHash,
            row.tokenCount,
            at,
            at,
          )
          insertEmbedding.run(
            lastInsertRowid,
            agentId,
            model,
            row.vector.byteLength / 4,
            row.vector,
            row.contentHash,
            at,
          )
        }
      })()
    }
  } finally {
    db.close()
  }
}

async function seedPostgres(
  url: string,
  agentId: string,
  count: number,
  rows: (from: number, to: number) => Promise<MemoryRow[]>,
  now: Date,
  model: string,
): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    for (let from = 0; from < count; from += POSTGRES_BATCH) {
      const batch = await rows(from, Math.min(count, from + POSTGRES_BATCH))
      await client.query('BEGIN')
      // The FTS5 tokens of (content, tags) the Prisma client adds to every create
      // (store-postgres' tokensForWrite); the full_text_search trigger turns them into the
      // tsvector. Without them the rows would be tokenised one UPDATE each at the first search.
      const memoryValues: unknown[] = []
      const tuples = batch.map((row, i) => {
        const tokens = searchTokens([row.content, '[]'])
        memoryValues.push(
          agentId,
          row.content,
          BENCH_MEMORY_CATEGORY,
          now,
          row.contentHash,
          row.tokenCount,
          tokens.searchTokens,
          tokens.searchLength,
        )
        const p = i * 8
        return `($${p + 1}, NULL, $${p + 2}, $${p + 3}, '[]', 0.5, 1, false, NULL, NULL, $${p + 4}, NULL, '{}', $${p + 5}, $${p + 6}, $${p + 4}, $${p + 4}, $${p + 7}, $${p + 8})`
      })
      const inserted = await client.query<{ id: number; contentHash: string }>(
        `INSERT INTO "MemoryItem" ("agentId", "userId", "content", "category", "tags", "importance", "confidence",
           "pinned", "sourceConversationId", "sourceMessageId", "validFrom", "validUntil", "metadata", "contentHash",
           "tokenCount", "createdAt", "updatedAt", "searchTokens", "searchLength")
         VALUES ${tuples.join(', ')} RETURNING "id" AS id, "contentHash" AS "contentHash"`,
        memoryValues,
      )
      // RETURNING gives the rows in the VALUES' order; checked, since the vectors are paired by it.
      inserted.rows.forEach((r, i) => {
        if (r.contentHash !== batch[i]?.contentHash)
          throw new Error(`memory seed: row ${from + i} came back out of order`)
      })
      const embeddingValues: unknown[] = []
      const embeddingTuples = batch.map((row, i) => {
        embeddingValues.push(inserted.rows[i]?.id, row.vector, row.contentHash)
        const p = i * 3 + 5
        return `('memory', $${p}, $1, $2, $3, $${p + 1}, $${p + 2}, $4)`
      })
      await client.query(
        `INSERT INTO "Embedding" ("kind", "ownerId", "agentId", "model", "dimensions", "vector", "contentHash", "createdAt")
         VALUES ${embeddingTuples.join(', ')}`,
        [agentId, model, (batch[0]?.vector.byteLength ?? 0) / 4, now, ...embeddingValues],
      )
      await client.query('COMMIT')
    }
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {})
    throw error
  } finally {
    await client.end()
  }
}

import { CONTEXT_SUMMARY_PREFIX } from '@engram/core'
import {
  type CorpusFigures,
  type DocumentCursor,
  type DocumentSet,
  type FullTextCollection,
  type FullTextIndex,
  frequencyTerms,
  type IndexedDocumentBatch,
  type Posting,
} from '@engram/engine'
import { INDEXED_SOURCES, type IndexedRow, indexedDocumentBatches } from '@engram/store-sqlite'
import type { PostgresDatabase } from '../db/client.ts'
import {
  fullTextTokenizer,
  indexLexeme,
  quoteLexeme,
  SEARCH_COLUMNS,
  type SearchModel,
  searchTokens,
} from '../db/search-tokens.ts'

/** The table and client model of each collection. */
const COLLECTIONS: Record<FullTextCollection, { table: string; model: SearchModel }> = {
  messages: { table: 'Message', model: 'message' },
  memories: { table: 'MemoryItem', model: 'memoryItem' },
  knowledge: { table: 'Knowledge', model: 'knowledge' },
}

/** Agents' corpus figures remembered at most; past it the oldest are forgotten. */
const MAX_CACHED_CORPORA = 10_000
/** Unindexed rows tokenised per statement when search catches up (see catchUp). */
const CATCH_UP_BATCH = 500

/**
 * The FullTextIndex port on Postgres full-text search (docs/postgres-redis.md, "Design: lexical
 * search"): each searchable row carries a tsvector of FTS5's own tokens (GIN-indexed), so the
 * counts handed to the engine's BM25 are the SQLite path's: tf from the lexeme's positions,
 * the exact length in `searchLength`, N and the mean length per agent and set, per query.
 */
export class PostgresFullTextIndex implements FullTextIndex {
  private readonly corpora = new Map<string, { version: string; documents: number; averageLength: number }>()

  constructor(
    private readonly db: PostgresDatabase,
    private readonly tokenizer = fullTextTokenizer(),
  ) {}

  terms(word: string): string[] {
    return this.tokenizer.terms(word)
  }

  async corpus(collection: FullTextCollection, agentId: string, set: DocumentSet): Promise<CorpusFigures> {
    const { table } = COLLECTIONS[collection]
    await this.catchUp(collection, agentId)
    const [version] = await this.db.$queryRawUnsafe<{ n: bigint; top: number | null }[]>(
      `SELECT count(*) AS n, max("id") AS top FROM "${table}" WHERE "agentId" = $1`,
      agentId,
    )
    const versionKey = `${version?.n ?? 0}:${version?.top ?? ''}`
    const key = `${collection}\u0000${agentId}\u0000${set}`
    const cached = this.corpora.get(key)
    if (cached && cached.version === versionKey)
      return { documents: cached.documents, averageLength: cached.averageLength }
    const filter = documentSetFilter(set, 2)
    const [row] = await this.db.$queryRawUnsafe<{ n: bigint; total: bigint | null }[]>(
      `SELECT count(*) AS n, sum(o."searchLength") AS total FROM "${table}" o WHERE o."agentId" = $1${filter.sql}`,
      agentId,
      ...filter.params,
    )
    const documents = Number(row?.n ?? 0)
    const figures = {
      version: versionKey,
      documents,
      averageLength: documents > 0 ? Number(row?.total ?? 0) / documents : 0,
    }
    this.corpora.delete(key)
    this.corpora.set(key, figures)
    if (this.corpora.size > MAX_CACHED_CORPORA)
      this.corpora.delete(this.corpora.keys().next().value as string)
    return { documents: figures.documents, averageLength: figures.averageLength }
  }

  async postings(
    collection: FullTextCollection,
    agentId: string,
    set: DocumentSet,
    term: string,
  ): Promise<Map<string, Posting>> {
    const { table } = COLLECTIONS[collection]
    await this.catchUp(collection, agentId)
    const filter = documentSetFilter(set, 4)
    // The GIN index finds the documents holding the lexeme (bitmap-ANDed with the agent's
    // B-tree); the lexeme's positions give its count in each, unless the tsvector could not keep
    // them all (searchCounts has the exact count then). In id order, as SQLite's GROUP BY gives
    // them, so the engine meets candidates in the same order on both.
    const lexeme = indexLexeme(term)
    const rows = await this.db.$queryRawUnsafe<
      { id: number; tf: number; length: number | null; sessionId: string | null }[]
    >(
      `SELECT o."id" AS id,
              coalesce((o."searchCounts" ->> u.lexeme)::integer, cardinality(u.positions)) AS tf,
              o."searchLength" AS length,
              ${table === 'Message' ? 'o."sessionId"' : 'NULL'} AS "sessionId"
         FROM "${table}" o CROSS JOIN LATERAL unnest(o."searchVector") u
        WHERE o."agentId" = $1 AND o."searchVector" @@ $2::tsquery AND u.lexeme = $3${filter.sql}
        ORDER BY o."id"`,
      agentId,
      quoteLexeme(lexeme),
      lexeme,
      ...filter.params,
    )
    return new Map(
      rows.map((r) => [
        String(r.id),
        { frequency: Number(r.tf), length: Number(r.length ?? 0), sessionId: r.sessionId },
      ]),
    )
  }

  async documentFrequencies(
    collection: FullTextCollection,
    agentId: string,
    set: DocumentSet,
    terms: readonly string[],
  ): Promise<Map<string, number>> {
    const wanted = frequencyTerms(terms)
    if (wanted.length === 0) return new Map()
    const { table } = COLLECTIONS[collection]
    await this.catchUp(collection, agentId)
    const filter = documentSetFilter(set, 4)
    // Each term as stored (a stand-in for an over-long one), answered under the term asked.
    const byLexeme = new Map(wanted.map((term) => [indexLexeme(term), term]))
    const lexemes = [...byLexeme.keys()]
    const rows = await this.db.$queryRawUnsafe<{ lexeme: string; n: bigint }[]>(
      `SELECT u.lexeme AS lexeme, count(*) AS n
         FROM "${table}" o CROSS JOIN LATERAL unnest(o."searchVector") u
        WHERE o."agentId" = $1 AND o."searchVector" @@ $2::tsquery AND u.lexeme = ANY($3::text[])${filter.sql}
        GROUP BY u.lexeme`,
      agentId,
      lexemes.map(quoteLexeme).join(' | '),
      lexemes,
      ...filter.params,
    )
    return new Map(rows.map((row) => [byLexeme.get(row.lexeme) ?? row.lexeme, Number(row.n)]))
  }

  invalidate(): void {
    this.corpora.clear()
  }

  close(): void {}

  /**
   * The agent's documents and their tokens, re-tokenised from the rows' text by FTS5's own
   * tokenizer (the tsvector may hold a stand-in for an over-long term, and the in-process index
   * must hold the terms a query asks for). Edit times travel as epoch milliseconds.
   */
  indexedDocuments(
    collection: FullTextCollection,
    agentId: string,
    cursor: DocumentCursor | null,
  ): AsyncIterable<IndexedDocumentBatch> {
    const { table, columns, edited, session } = INDEXED_SOURCES[collection]
    const select = `SELECT "id", ${columns.map((c) => `"${c}"`).join(', ')}${session ? ', "sessionId", "timestamp" AS "storedAt", "speaker"' : ''}${
      edited ? ', (extract(epoch from "updatedAt") * 1000)::float8 AS "editedAt"' : ''
    } FROM "${table}"`
    return indexedDocumentBatches(
      collection,
      cursor,
      {
        newer: (afterId, limit) =>
          this.db.$queryRawUnsafe<IndexedRow[]>(
            `${select} WHERE "agentId" = $1 AND "id" > $2 ORDER BY "id" LIMIT ${limit}`,
            agentId,
            afterId,
          ),
        // A millisecond of slack: the time went through a float; re-reading a row is harmless.
        edited: (since, throughId, afterId, limit) =>
          this.db.$queryRawUnsafe<IndexedRow[]>(
            `${select} WHERE "agentId" = $1 AND "id" > $2 AND "id" <= $3
                AND "updatedAt" >= to_timestamp($4::float8 / 1000) - interval '1 millisecond'
              ORDER BY "id" LIMIT ${limit}`,
            agentId,
            afterId,
            throughId,
            Number(since),
          ),
      },
      (documents) => this.tokenizer.documentsTerms(documents),
    )
  }

  async documentCount(collection: FullTextCollection, agentId: string): Promise<number> {
    const { table } = COLLECTIONS[collection]
    const [row] = await this.db.$queryRawUnsafe<{ n: bigint }[]>(
      `SELECT count(*) AS n FROM "${table}" WHERE "agentId" = $1`,
      agentId,
    )
    return Number(row?.n ?? 0)
  }

  async documentIds(collection: FullTextCollection, agentId: string): Promise<string[]> {
    const { table } = COLLECTIONS[collection]
    const rows = await this.db.$queryRawUnsafe<{ id: number }[]>(
      `SELECT "id" AS id FROM "${table}" WHERE "agentId" = $1`,
      agentId,
    )
    return rows.map((row) => String(row.id))
  }

  /** Null: other replicas' writes reach this one as cache:invalidate (the agents' write versions). */
  async changeVersion(): Promise<string | null> {
    return null
  }

  /**
   * Tokenises the agent's rows whose text was written without tokens (a raw statement: the
   * trigger left searchVector null), so a search never misses a document. The partial index
   * `<table>_unindexed_idx` makes the common case, nothing to do, one index probe. The update
   * repeats the text it tokenised, so a concurrent rewrite is not overwritten with stale tokens.
   */
  private async catchUp(collection: FullTextCollection, agentId: string): Promise<void> {
    const { table, model } = COLLECTIONS[collection]
    const columns = SEARCH_COLUMNS[model]
    for (;;) {
      const rows = await this.db.$queryRawUnsafe<Record<string, unknown>[]>(
        `SELECT "id", ${columns.map((c) => `"${c}"`).join(', ')} FROM "${table}"
          WHERE "agentId" = $1 AND "searchVector" IS NULL LIMIT ${CATCH_UP_BATCH}`,
        agentId,
      )
      if (rows.length === 0) return
      for (const row of rows) {
        const texts = columns.map((c) => String(row[c] ?? ''))
        const tokens = searchTokens(texts, this.tokenizer)
        await this.db.$executeRawUnsafe(
          `UPDATE "${table}" SET "searchTokens" = $1, "searchLength" = $2
            WHERE "id" = $3 AND ${columns.map((c, i) => `"${c}" = $${i + 4}`).join(' AND ')}`,
          tokens.searchTokens,
          tokens.searchLength,
          row.id,
          ...texts,
        )
      }
      if (rows.length < CATCH_UP_BATCH) return
    }
  }
}

/** Summaries share the messages' table: a set is the summary marker's presence (as on SQLite). */
function documentSetFilter(set: DocumentSet, first: number): { sql: string; params: unknown[] } {
  if (set === 'all') return { sql: '', params: [] }
  return {
    sql: ` AND (left(o."content", ${CONTEXT_SUMMARY_PREFIX.length}) = $${first}) = $${first + 1}`,
    params: [CONTEXT_SUMMARY_PREFIX, set === 'summaries'],
  }
}

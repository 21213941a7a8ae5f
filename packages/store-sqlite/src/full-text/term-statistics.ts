import { CONTEXT_SUMMARY_PREFIX } from '@engram/core'
import { frequencyTerms } from '@engram/engine'
import BetterSqlite3 from 'better-sqlite3'
import { type Database, readRows } from '../db/client.ts'

/** The full-text tables search reads, each with the table whose rows it indexes. */
export const FULL_TEXT_TABLES = {
  MessageSearch: 'Message',
  MemorySearch: 'MemoryItem',
  KnowledgeSearch: 'Knowledge',
} as const
export type FullTextTable = keyof typeof FULL_TEXT_TABLES

/** The tokenizer every full-text table is created with (see the migrations). */
export const FULL_TEXT_TOKENIZER = 'porter unicode61 remove_diacritics 2'

/** Which of an agent's documents a search scope covers: summaries share the messages' index. */
export type DocumentSet = 'all' | 'messages' | 'summaries'

/** Query words tokenised at most per process; past it the cache starts over. */
const MAX_CACHED_WORDS = 20_000
/** Agents' corpus figures remembered at most; past it the oldest are forgotten. */
const MAX_CACHED_CORPORA = 10_000

/** One document holding a term: how often, its length in tokens, its conversation. */
export interface Posting {
  frequency: number
  length: number
  sessionId: string | null
}

/**
 * FTS5's own tokenizer, run on a private in-memory database: the index stores porter stems, and
 * only SQLite's stemmer is sure to stem a query word exactly as it stemmed the documents.
 */
export class FullTextTokenizer {
  private readonly db = new BetterSqlite3(':memory:')
  private readonly cache = new Map<string, string[]>()
  private readonly insert
  private readonly tokens
  private readonly clear
  private readonly insertRow
  private readonly rowTokens

  constructor(tokenizer = FULL_TEXT_TOKENIZER) {
    this.db.exec(
      `CREATE VIRTUAL TABLE words USING fts5(word, tokenize = '${tokenizer}');
       CREATE VIRTUAL TABLE words_instance USING fts5vocab(words, 'instance');`,
    )
    this.insert = this.db.prepare('INSERT INTO words (rowid, word) VALUES (1, ?)')
    this.tokens = this.db.prepare('SELECT term FROM words_instance ORDER BY "offset"').pluck()
    this.clear = this.db.prepare('DELETE FROM words')
    this.insertRow = this.db.prepare('INSERT INTO words (rowid, word) VALUES (?, ?)')
    this.rowTokens = this.db.prepare('SELECT doc, term FROM words_instance ORDER BY doc, "offset"').raw()
  }

  /** The index terms of a word, in order (one for a plain word). */
  terms(word: string): string[] {
    const cached = this.cache.get(word)
    if (cached) return cached
    this.insert.run(word)
    const terms = this.tokens.all() as string[]
    this.clear.run()
    if (this.cache.size >= MAX_CACHED_WORDS) this.cache.clear()
    this.cache.set(word, terms)
    return terms
  }

  /**
   * Every index term of a document, in order, without the word cache (a document is seldom seen
   * twice): what FTS5 stores for it, which the Postgres adapter writes as a tsvector.
   */
  documentTerms(text: string): string[] {
    this.insert.run(text)
    const terms = this.tokens.all() as string[]
    this.clear.run()
    return terms
  }

  /**
   * Every index term of many documents (each given as its indexed columns, in FTS5's column
   * order), in one pass: building an agent's in-process index tokenises its whole history, and
   * one insert-read-clear per document would cost most of that.
   */
  documentsTerms(documents: readonly (readonly string[])[]): string[][] {
    const out: string[][] = documents.map(() => [])
    const owner: number[] = []
    const fill = this.db.transaction(() => {
      documents.forEach((columns, i) => {
        for (const text of columns) {
          owner.push(i)
          this.insertRow.run(owner.length, text)
        }
      })
    })
    fill()
    for (const [row, term] of this.rowTokens.all() as [number, string][])
      (out[owner[row - 1] as number] as string[]).push(term)
    this.clear.run()
    return out
  }

  close(): void {
    this.db.close()
  }
}

/** The sum of the per-column token counts FTS5 keeps in `<table>_docsize` (varints). */
export function documentLength(sizes: Uint8Array | null): number {
  if (!sizes) return 0
  let total = 0
  let value = 0
  for (let i = 0; i < sizes.length; i++) {
    const byte = sizes[i] as number
    value = value * 128 + (byte & 0x7f)
    if ((byte & 0x80) === 0) {
      total += value
      value = 0
    }
  }
  return total
}

/**
 * Each agent's own BM25 statistics, per full-text table and document set: how many documents it
 * has, their average length, and for a term the documents holding it. Nothing here counts another
 * agent's rows, so what one agent stores never moves another's scores.
 */
export class AgentTermStatistics {
  private readonly corpora = new Map<string, { version: string; documents: number; averageLength: number }>()

  constructor(private readonly db: Database) {}

  /**
   * Forgets every agent's figures: rows were deleted or replaced in bulk (an agent, a clear, a
   * restore). The version check would catch most of it; this also catches a replacement that
   * happens to leave the same count and newest id.
   */
  clear(): void {
    this.corpora.clear()
  }

  /** The agent's documents in the set and their mean length, recounted when the agent's rows change. */
  async corpus(
    table: FullTextTable,
    agentId: string,
    set: DocumentSet,
  ): Promise<{ documents: number; averageLength: number }> {
    const base = FULL_TEXT_TABLES[table]
    // Index-only on (agentId): a new or deleted row of the agent changes it.
    const [version] = await readRows<{ n: number | bigint; top: number | bigint | null }[]>(
      this.db,
      `SELECT count(*) AS n, max("id") AS top FROM "${base}" WHERE "agentId" = ?`,
      agentId,
    )
    const versionKey = `${version?.n ?? 0}:${version?.top ?? ''}`
    const key = `${table}\u0000${agentId}\u0000${set}`
    const cached = this.corpora.get(key)
    if (cached && cached.version === versionKey) return cached
    const filter = documentSetFilter(set)
    const rows = await readRows<{ sz: Uint8Array | null }[]>(
      this.db,
      `SELECT d."sz" AS sz FROM "${base}" o CROSS JOIN "${table}_docsize" d ON d."id" = o."id"
        WHERE o."agentId" = ?${filter.sql}`,
      agentId,
      ...filter.params,
    )
    let tokens = 0
    for (const row of rows) tokens += documentLength(row.sz)
    const figures = {
      version: versionKey,
      documents: rows.length,
      averageLength: rows.length > 0 ? tokens / rows.length : 0,
    }
    this.corpora.delete(key)
    this.corpora.set(key, figures)
    if (this.corpora.size > MAX_CACHED_CORPORA)
      this.corpora.delete(this.corpora.keys().next().value as string)
    return figures
  }

  /** The agent's documents in the set holding an index term, with the term's count in each. */
  async postings(
    table: FullTextTable,
    agentId: string,
    set: DocumentSet,
    term: string,
  ): Promise<Map<string, Posting>> {
    const base = FULL_TEXT_TABLES[table]
    const filter = documentSetFilter(set)
    // The term's occurrences (every agent's: one index) joined to the owner's row and kept for this
    // agent; CROSS JOIN keeps the vocabulary seek on the term as the outer loop.
    const rows = await readRows<
      { id: number | bigint; tf: number | bigint; sz: Uint8Array | null; sessionId: string | null }[]
    >(
      this.db,
      `SELECT i."doc" AS id, count(*) AS tf, d."sz" AS sz, ${base === 'Message' ? 'o."sessionId"' : 'NULL'} AS sessionId
         FROM "${table}Instance" i
         CROSS JOIN "${base}" o ON o."id" = i."doc"
         CROSS JOIN "${table}_docsize" d ON d."id" = i."doc"
        WHERE i."term" = ? AND o."agentId" = ?${filter.sql}
        GROUP BY i."doc"`,
      term,
      agentId,
      ...filter.params,
    )
    return new Map(
      rows.map((r) => [
        String(r.id),
        { frequency: Number(r.tf), length: documentLength(r.sz), sessionId: r.sessionId },
      ]),
    )
  }

  /**
   * How many of the agent's documents in the set hold each term, in one statement. For choosing
   * expansion terms (feedback, co-occurrence); the scoring itself reads full postings.
   */
  async documentFrequencies(
    table: FullTextTable,
    agentId: string,
    set: DocumentSet,
    terms: readonly string[],
  ): Promise<Map<string, number>> {
    const wanted = frequencyTerms(terms)
    if (wanted.length === 0) return new Map()
    const base = FULL_TEXT_TABLES[table]
    const filter = documentSetFilter(set)
    const rows = await readRows<{ term: string; n: number | bigint }[]>(
      this.db,
      `SELECT i."term" AS term, count(DISTINCT i."doc") AS n
         FROM "${table}Instance" i
         CROSS JOIN "${base}" o ON o."id" = i."doc"
        WHERE i."term" IN (${wanted.map(() => '?').join(',')}) AND o."agentId" = ?${filter.sql}
        GROUP BY i."term"`,
      ...wanted,
      agentId,
      ...filter.params,
    )
    return new Map(rows.map((row) => [row.term, Number(row.n)]))
  }
}

function documentSetFilter(set: DocumentSet): { sql: string; params: unknown[] } {
  if (set === 'all') return { sql: '', params: [] }
  return {
    sql: ` AND (substr(o."content", 1, ${CONTEXT_SUMMARY_PREFIX.length}) = ?) = ?`,
    params: [CONTEXT_SUMMARY_PREFIX, set === 'summaries' ? 1 : 0],
  }
}

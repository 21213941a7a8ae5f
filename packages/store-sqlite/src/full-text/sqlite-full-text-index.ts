import type {
  CorpusFigures,
  DocumentCursor,
  DocumentSet,
  FullTextCollection,
  FullTextIndex,
  IndexedDocumentBatch,
  Posting,
} from '@engram/engine'
import { type Database, directSqlite, readRows } from '../db/client.ts'
import { INDEXED_SOURCES, type IndexedRow, indexedDocumentBatches } from './indexed-documents.ts'
import { AgentTermStatistics, type FullTextTable, FullTextTokenizer } from './term-statistics.ts'

/** The FTS5 table of each collection (see the migrations; triggers keep them in step with the rows). */
export const COLLECTION_TABLES: Record<FullTextCollection, FullTextTable> = {
  messages: 'MessageSearch',
  memories: 'MemorySearch',
  knowledge: 'KnowledgeSearch',
}

/**
 * The FullTextIndex port on FTS5: candidates and an agent's own term statistics come from the
 * fts5vocab tables joined to the agent's rows, never from bm25() (which counts every tenant).
 * Documents are indexed by triggers when their rows are written, in the same transaction.
 */
export class SqliteFullTextIndex implements FullTextIndex {
  readonly statistics: AgentTermStatistics

  constructor(
    private readonly db: Database,
    private readonly tokenizer = new FullTextTokenizer(),
  ) {
    this.statistics = new AgentTermStatistics(db)
  }

  terms(word: string): string[] {
    return this.tokenizer.terms(word)
  }

  async corpus(collection: FullTextCollection, agentId: string, set: DocumentSet): Promise<CorpusFigures> {
    // Only the figures: the statistics' cache version is this adapter's business.
    const { documents, averageLength } = await this.statistics.corpus(
      COLLECTION_TABLES[collection],
      agentId,
      set,
    )
    return { documents, averageLength }
  }

  postings(
    collection: FullTextCollection,
    agentId: string,
    set: DocumentSet,
    term: string,
  ): Promise<Map<string, Posting>> {
    return this.statistics.postings(COLLECTION_TABLES[collection], agentId, set, term)
  }

  documentFrequencies(
    collection: FullTextCollection,
    agentId: string,
    set: DocumentSet,
    terms: readonly string[],
  ): Promise<Map<string, number>> {
    return this.statistics.documentFrequencies(COLLECTION_TABLES[collection], agentId, set, terms)
  }

  invalidate(): void {
    this.statistics.clear()
  }

  indexedDocuments(
    collection: FullTextCollection,
    agentId: string,
    cursor: DocumentCursor | null,
  ): AsyncIterable<IndexedDocumentBatch> {
    const { table, columns, edited, session } = INDEXED_SOURCES[collection]
    const select = `SELECT "id", ${columns.map((c) => `"${c}"`).join(', ')}${session ? ', "sessionId", "timestamp" AS "storedAt", "speaker"' : ''}${
      edited ? ', "updatedAt" AS editedAt' : ''
    } FROM "${table}"`
    return indexedDocumentBatches(
      collection,
      cursor,
      {
        newer: (afterId, limit) =>
          readRows<IndexedRow[]>(
            this.db,
            `${select} WHERE "agentId" = ? AND "id" > ? ORDER BY "id" LIMIT ${limit}`,
            agentId,
            afterId,
          ),
        edited: (since, throughId, afterId, limit) =>
          readRows<IndexedRow[]>(
            this.db,
            `${select} WHERE "agentId" = ? AND "id" > ? AND "id" <= ? AND "updatedAt" >= ? ORDER BY "id" LIMIT ${limit}`,
            agentId,
            afterId,
            throughId,
            since,
          ),
      },
      (documents) => this.tokenizer.documentsTerms(documents),
    )
  }

  async documentCount(collection: FullTextCollection, agentId: string): Promise<number> {
    const { table } = INDEXED_SOURCES[collection]
    const [row] = await readRows<{ n: number | bigint }[]>(
      this.db,
      `SELECT count(*) AS n FROM "${table}" WHERE "agentId" = ?`,
      agentId,
    )
    return Number(row?.n ?? 0)
  }

  async documentIds(collection: FullTextCollection, agentId: string): Promise<string[]> {
    const { table } = INDEXED_SOURCES[collection]
    const rows = await readRows<{ id: number | bigint }[]>(
      this.db,
      `SELECT "id" AS id FROM "${table}" WHERE "agentId" = ?`,
      agentId,
    )
    return rows.map((row) => String(row.id))
  }

  /** SQLite's data_version: moves when another connection (another process on the file) commits. */
  async changeVersion(): Promise<string | null> {
    const direct = directSqlite(this.db)
    if (!direct) return null
    const row = await direct.get<{ data_version: number }>('PRAGMA data_version')
    return String(row?.data_version ?? '')
  }

  close(): void {
    this.tokenizer.close()
  }
}

import type { CorpusFigures, DocumentSet, FullTextCollection, FullTextIndex, Posting } from '@engram/engine'
import type { Database } from '../db/client.ts'
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
    db: Database,
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

  close(): void {
    this.tokenizer.close()
  }
}

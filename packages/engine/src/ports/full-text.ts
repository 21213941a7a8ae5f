/**
 * The FullTextIndex port: candidates and per-agent term statistics out, nothing ranked. BM25
 * planning and scoring stay in core (bm25Scores, planLexicalQuery), so every adapter ranks alike
 * and one tenant's documents never move another's scores (statistics are per agent, not global).
 */

/** What is indexed: conversation messages (and their summaries), memory items, knowledge. */
export const FULL_TEXT_COLLECTIONS = ['messages', 'memories', 'knowledge'] as const
export type FullTextCollection = (typeof FULL_TEXT_COLLECTIONS)[number]

/** Which of an agent's documents a search scope covers: summaries share the messages' index. */
export type DocumentSet = 'all' | 'messages' | 'summaries'

/** One document holding a term: how often, its length in index terms, its conversation. */
export interface Posting {
  frequency: number
  length: number
  sessionId: string | null
}

/** An agent's documents in a set and their mean length in index terms: BM25's corpus figures. */
export interface CorpusFigures {
  documents: number
  averageLength: number
}

/**
 * Terms one documentFrequencies call counts at most (one statement on the SQL adapters; SQLite's
 * parameter limit is far above): the terms past it are not counted, as if no document held them.
 */
export const MAX_FREQUENCY_TERMS = 500

/** The terms documentFrequencies counts: each once, in the order asked, at most MAX_FREQUENCY_TERMS. */
export function frequencyTerms(terms: readonly string[]): string[] {
  return [...new Set(terms)].slice(0, MAX_FREQUENCY_TERMS)
}

export interface FullTextIndex {
  /** The index terms of a query word, in order (stemmed exactly as the documents were). */
  terms(word: string): string[]
  corpus(collection: FullTextCollection, agentId: string, set: DocumentSet): Promise<CorpusFigures>
  /** The agent's documents in the set holding an index term, by document id. */
  postings(
    collection: FullTextCollection,
    agentId: string,
    set: DocumentSet,
    term: string,
  ): Promise<Map<string, Posting>>
  /** How many of the agent's documents in the set hold each term (for choosing expansion terms). */
  documentFrequencies(
    collection: FullTextCollection,
    agentId: string,
    set: DocumentSet,
    terms: readonly string[],
  ): Promise<Map<string, number>>
  /** Drops cached figures after rows changed in bulk (an agent deleted, a restore). */
  invalidate(): void
  /**
   * The agent's documents of a collection written or edited after `cursor` (every one when null),
   * each with its index terms in order (FTS5's tokens of every indexed column), in batches: what
   * the engine's in-process lexical index is built and caught up from. Each batch carries the
   * cursor to resume from; the last one's is where the next call starts.
   */
  indexedDocuments(
    collection: FullTextCollection,
    agentId: string,
    cursor: DocumentCursor | null,
  ): AsyncIterable<IndexedDocumentBatch>
  /** How many documents the agent has in the collection now: fewer than indexed means some were deleted. */
  documentCount(collection: FullTextCollection, agentId: string): Promise<number>
  /** Every document id the agent has in the collection now: what was deleted behind the process is missing. */
  documentIds(collection: FullTextCollection, agentId: string): Promise<string[]>
  /**
   * Changes when another connection may have committed (SQLite's data_version); null when the
   * store cannot tell, and the agents' write versions (with cache:invalidate across replicas) say it.
   */
  changeVersion(): Promise<string | null>
}

/** Where an agent's document stream stopped, opaque to the engine (the store's newest id and edit time). */
export type DocumentCursor = string

/** A document and its index terms, as the in-process lexical index takes it. */
export interface IndexedDocument {
  id: string
  sessionId: string | null
  /** A turn's stored time (epoch ms; messages only, null elsewhere): the timeline of its conversation. */
  time?: number | null
  /** A conversation summary (the summary prefix): the SUMMARIES set, apart from ordinary turns. */
  summary: boolean
  /**
   * A turn's speaker as stored (messages; null when none was named): the timeline holds it so
   * search can rank a query naming a participant before reading rows. Absent (undefined) where a
   * store does not stream it: search then reads the rows.
   */
  speaker?: string | null
  terms: string[]
}

export interface IndexedDocumentBatch {
  documents: IndexedDocument[]
  cursor: DocumentCursor
}

/** Documents a store reads and tokenises per statement when streaming an agent's index terms. */
export const INDEXED_DOCUMENT_BATCH = 1_000

/** A document as the index sees it. */
export interface FullTextDocument {
  id: string
  agentId: string
  text: string
  sessionId?: string | null
  /** A turn's stored time (epoch ms), for the stores that stream it back (indexedDocuments). */
  time?: number | null
  /** A turn's speaker, for the stores that stream it back (indexedDocuments); absent: not known. */
  speaker?: string | null
}

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
}

/** A document as the index sees it. */
export interface FullTextDocument {
  id: string
  agentId: string
  text: string
  sessionId?: string | null
}

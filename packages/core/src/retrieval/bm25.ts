/**
 * BM25 over one agent's own documents. SQLite FTS5's bm25() takes word rarity and the average
 * document length from the whole table, every tenant's rows together, so one agent's writes moved
 * another's scores (and let it probe their term frequencies). The store hands over the agent's own
 * counts and this scores them with FTS5's formula and constants, so results stay comparable.
 */
export const BM25_K1 = 1.2
export const BM25_B = 0.75
// FTS5 floors a non-positive IDF (a term in more than half the documents) at this.
const MIN_IDF = 1e-6

/** One query term as the agent's documents hold it. */
export interface Bm25Term {
  /** Documents of the agent (in this scope) holding the term: its rarity. */
  documentFrequency: number
  /** Occurrences of the term in each document that holds it. */
  frequencies: ReadonlyMap<string, number>
}

export interface Bm25Corpus {
  /** The agent's documents in this scope. */
  documents: number
  /** Their mean length in tokens. */
  averageLength: number
}

/** FTS5's inverse document frequency, from the agent's own counts. */
export function bm25Idf(documentFrequency: number, documents: number): number {
  const idf = Math.log((documents - documentFrequency + 0.5) / (documentFrequency + 0.5))
  return idf > 0 ? idf : MIN_IDF
}

/**
 * Scores (higher is better) for the given documents: each term adds its IDF times its saturated,
 * length-normalised frequency. Terms are summed as given, like FTS5's phrases, so a query holding
 * two words with one stem counts it twice, as FTS5 does.
 */
export function bm25Scores(
  documents: Iterable<string>,
  terms: readonly Bm25Term[],
  lengthOf: (id: string) => number,
  corpus: Bm25Corpus,
): Map<string, number> {
  const idfs = terms.map((t) => bm25Idf(t.documentFrequency, corpus.documents))
  const averageLength = corpus.averageLength > 0 ? corpus.averageLength : 1
  const scores = new Map<string, number>()
  for (const id of documents) {
    const norm = BM25_K1 * (1 - BM25_B + (BM25_B * lengthOf(id)) / averageLength)
    let score = 0
    terms.forEach((term, i) => {
      const f = term.frequencies.get(id)
      if (f) score += ((idfs[i] as number) * (f * (BM25_K1 + 1))) / (f + norm)
    })
    scores.set(id, score)
  }
  return scores
}

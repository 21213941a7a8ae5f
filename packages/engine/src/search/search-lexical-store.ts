import {
  type Bm25Term,
  bm25Scores,
  cooccurringTerms,
  DEFAULT_COOCCURRENCE_OPTIONS,
  DEFAULT_FEEDBACK_OPTIONS,
  feedbackTerms,
  type LexicalPlanConfig,
  planLexicalQuery,
  queryTerms,
} from '@engram/core'
import type {
  CorpusFigures,
  DocumentSet,
  FullTextCollection,
  FullTextIndex,
  Posting,
} from '../ports/full-text.ts'
import type { RecallSources } from '../ports/recall-sources.ts'
import type { SearchScope } from './search-types.ts'

/** One lexical query's hits, with what a second (expansion) query needs from it. */
export interface StoreLexicalRun {
  collection: FullTextCollection
  set: DocumentSet
  /** Document id and BM25, best first. */
  scores: [string, number][]
  corpus: CorpusFigures
  postings?: Map<string, Map<string, Posting>>
}
type LexicalRun = StoreLexicalRun

/**
 * BM25 (FTS5's formula, the agent's own statistics) of the documents holding any of `terms`, or
 * every one of them with `every`; ties broken by id, newest first, so equal scores come back in
 * one stable order.
 */
function scoreByBm25(
  terms: readonly string[],
  held: (term: string) => Map<string, Posting>,
  corpus: { documents: number; averageLength: number },
  options: { every: boolean; sessionId: string | null; limit: number },
): [string, number][] {
  const matching = new Set<string>()
  const lengths = new Map<string, number>()
  for (const term of terms)
    for (const [id, p] of held(term)) {
      matching.add(id)
      lengths.set(id, p.length)
    }
  const { every, sessionId } = options
  const candidates = [...matching].filter(
    (id) =>
      (!every || terms.every((term) => held(term).has(id))) &&
      (!sessionId || terms.some((term) => held(term).get(id)?.sessionId === sessionId)),
  )
  const scoredTerms: Bm25Term[] = terms.map((term) => {
    const docs = held(term)
    return {
      documentFrequency: docs.size,
      frequencies: new Map([...docs].map(([id, p]) => [id, p.frequency])),
    }
  })
  const scores = bm25Scores(candidates, scoredTerms, (id) => lengths.get(id) ?? 0, corpus)
  return [...scores].sort((a, b) => b[1] - a[1] || Number(b[0]) - Number(a[0])).slice(0, options.limit)
}

/**
 * The lexical side of search as it was before issue 18, reading postings and figures from the
 * store on every query: what ENGRAM_LEXICAL_INDEX=off serves, so the in-process index can be
 * measured against it side by side and switched off should it ever misbehave.
 */
export class StoreLexicalSearch {
  constructor(
    private readonly fullText: FullTextIndex,
    private readonly recall: RecallSources,
    private readonly lexicalPlan: LexicalPlanConfig,
  ) {}

  /** The index terms of a query: each word stemmed as the documents were; a split word counts each part. */
  queryIndexTerms(query: string): string[] {
    return queryTerms(query).flatMap((word) => this.fullText.terms(word))
  }

  /**
   * BM25 over the agent's own documents in the scope: word rarity (document frequency) and the
   * average length come from them alone, never from other agents' rows sharing the index (FTS5's
   * bm25() would mix every tenant in). Scored with FTS5's formula and constants.
   *
   * Over a large corpus common terms do not select (planLexicalQuery, on the agent's own counts);
   * the any-term query runs when that finds nothing. Fewer hits than `limit` are then possible, as
   * with the common-terms queries of Lucene: documents holding only common words rank below any
   * holding a rarer one, and in HYBRID the vector side brings its own candidates.
   */
  async lexical(
    agentId: string,
    scope: SearchScope,
    terms: string[],
    limit: number,
    sessionId: string | null,
  ): Promise<LexicalRun> {
    const collection: FullTextCollection =
      scope === 'MEMORIES' ? 'memories' : scope === 'KNOWLEDGE' ? 'knowledge' : 'messages'
    const set: DocumentSet = scope === 'SUMMARIES' ? 'summaries' : scope === 'MESSAGES' ? 'messages' : 'all'
    const empty: LexicalRun = { collection, set, scores: [], corpus: { documents: 0, averageLength: 0 } }
    // Each query word as the index holds it (porter stems); a word the tokenizer splits counts
    // each of its parts as a word of its own.
    if (terms.length === 0) return empty
    // Summaries share the messages' index: an agent without any would pay a second full query.
    if (scope === 'SUMMARIES' && !(await this.recall.hasSummaries(agentId, sessionId))) return empty
    const corpus = await this.fullText.corpus(collection, agentId, set)
    if (corpus.documents === 0) return empty
    const postings = new Map<string, Map<string, Posting>>()
    for (const term of new Set(terms))
      postings.set(term, await this.fullText.postings(collection, agentId, set, term))
    const held = (term: string) => postings.get(term) as Map<string, Posting>
    const plan = planLexicalQuery(terms, (term) => held(term).size, corpus.documents, this.lexicalPlan)
    if (!plan) return { ...empty, corpus, postings }
    const run = (selective: string[], every: boolean) =>
      scoreByBm25(selective, held, corpus, { every, sessionId, limit })
    const rows = run(plan.selective, plan.mode === 'all-common')
    if (rows.length > 0 || !plan.fallback) return { collection, set, scores: rows, corpus, postings }
    return { collection, set, scores: run(terms, false), corpus, postings }
  }

  /**
   * Pseudo-relevance feedback: the words that stand out in the best lexical hits (tf·idf on the
   * agent's own counts), searched as a second query whose BM25 joins the lexical score at
   * weights.feedback. Reaches turns that share no word with the query but many with its answers.
   */
  async feedback(
    agentId: string,
    scope: SearchScope,
    queryTerms_: string[],
    first: LexicalRun,
    limit: number,
    sessionId: string | null,
  ): Promise<[string, number][]> {
    const top = first.scores.slice(0, DEFAULT_FEEDBACK_OPTIONS.documents).map(([id]) => id)
    const documents = await this.documentTerms(first.collection, top)
    const candidates = [...new Set(documents.flat())].filter((t) => !queryTerms_.includes(t))
    const df = await this.fullText.documentFrequencies(first.collection, agentId, first.set, candidates)
    const expansion = feedbackTerms(documents, queryTerms_, (t) => df.get(t) ?? 0, first.corpus.documents)
    if (expansion.length === 0) return []
    return (await this.lexical(agentId, scope, expansion, limit, sessionId)).scores
  }

  /**
   * Meaning from the agent's own history: words that keep company with the query's words in its
   * documents (normalised PMI), searched with their association as weight. Computed from the
   * current postings at query time, so it is always up to date with what the agent stored.
   */
  async cooccurrence(
    agentId: string,
    queryTerms_: string[],
    first: LexicalRun,
    limit: number,
    sessionId: string | null,
  ): Promise<[string, number][]> {
    const postings = first.postings
    if (!postings) return []
    const cap = DEFAULT_COOCCURRENCE_OPTIONS.maxDocumentsPerTerm
    const holding = new Map<string, string[][]>()
    for (const term of new Set(queryTerms_)) {
      const ids = [...(postings.get(term)?.keys() ?? [])]
      if (ids.length === 0 || ids.length > cap) continue
      holding.set(term, await this.documentTerms(first.collection, ids))
    }
    if (holding.size === 0) return []
    const seen = [...new Set([...holding.values()].flat(2))].filter((t) => !queryTerms_.includes(t))
    const df = await this.fullText.documentFrequencies(first.collection, agentId, first.set, seen)
    for (const term of holding.keys()) df.set(term, postings.get(term)?.size ?? 0)
    const related = cooccurringTerms(
      queryTerms_,
      (term) => holding.get(term) ?? [],
      (term) => df.get(term) ?? 0,
      first.corpus.documents,
    )
    if (related.length === 0) return []
    const weight = new Map(related.map((r) => [r.term, r.weight]))
    const terms = related.map((r) => r.term)
    const second = new Map<string, Map<string, Posting>>()
    for (const term of terms)
      second.set(term, await this.fullText.postings(first.collection, agentId, first.set, term))
    // Each related term's BM25 weighted by its association with the query.
    const scores = new Map<string, number>()
    for (const term of terms) {
      for (const [id, score] of scoreByBm25(
        [term],
        (t) => second.get(t) as Map<string, Posting>,
        first.corpus,
        {
          every: false,
          sessionId,
          limit,
        },
      ))
        scores.set(id, (scores.get(id) ?? 0) + (weight.get(term) ?? 0) * score)
    }
    return [...scores].sort((a, b) => b[1] - a[1]).slice(0, limit)
  }

  /** The index terms of each document (stop words left out), in the order of `ids`. */
  async documentTerms(collection: FullTextCollection, ids: string[]): Promise<string[][]> {
    if (ids.length === 0) return []
    const byId = await this.recall.documentTexts(collection, ids)
    return ids.map((id) => this.queryIndexTerms(byId.get(id) ?? ''))
  }
}

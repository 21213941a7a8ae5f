import {
  type Bm25Term,
  bm25Scores,
  cooccurringTerms,
  DEFAULT_COOCCURRENCE_OPTIONS,
  type LexicalPlanConfig,
  planLexicalQuery,
} from '@engram/core'
import type {
  CorpusFigures,
  DocumentSet,
  FullTextCollection,
  FullTextIndex,
  Posting,
} from '../ports/full-text.ts'

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

/** What the store-read path borrows from search-lexical.ts' LexicalSearch, which owns it. */
export interface LexicalSearchOwner {
  /** The index terms of each document, as the documents were indexed. */
  documentTerms(collection: FullTextCollection, ids: string[]): Promise<string[][]>
}

/** Where a lexical run reads, decided by the owner's entry before either path runs. */
export interface LexicalTarget {
  collection: FullTextCollection
  set: DocumentSet
  /** The run with no hits, returned as soon as there is nothing to score. */
  empty: StoreLexicalRun
}

/**
 * The lexical side of search as it was before issue 18, reading postings and figures from the
 * store on every query: what ENGRAM_LEXICAL_INDEX=off serves, so the in-process index can be
 * measured against it side by side and switched off should it ever misbehave. The checks before
 * scoring, tokenizing and feedback's terms are the owner's (one copy of each).
 */
export class StoreLexicalSearch {
  constructor(
    private readonly fullText: FullTextIndex,
    private readonly lexicalPlan: LexicalPlanConfig,
    private readonly owner: LexicalSearchOwner,
  ) {}

  /** BM25 over the agent's documents in the target, from the store's postings (see LexicalSearch.lexical). */
  async scored(
    agentId: string,
    { collection, set, empty }: LexicalTarget,
    terms: string[],
    limit: number,
    sessionId: string | null,
  ): Promise<StoreLexicalRun> {
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

  /** The store's document frequencies of `terms` in the run's set (pseudo-relevance feedback's counts). */
  async frequencies(agentId: string, first: LexicalRun, terms: string[]): Promise<(term: string) => number> {
    const df = await this.fullText.documentFrequencies(first.collection, agentId, first.set, terms)
    return (term) => df.get(term) ?? 0
  }

  /** LexicalSearch.cooccurrence on the store's postings and document frequencies. */
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
      holding.set(term, await this.owner.documentTerms(first.collection, ids))
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
}

import {
  type ConversationTimeline,
  cooccurringTerms,
  DEFAULT_COOCCURRENCE_OPTIONS,
  DEFAULT_FEEDBACK_OPTIONS,
  feedbackTerms,
  type LexicalIndex,
  type LexicalPlanConfig,
  planLexicalQuery,
  queryTerms,
} from '@engram/core'
import {
  type CorpusFigures,
  type DocumentSet,
  type FullTextCollection,
  type FullTextIndex,
  frequencyTerms,
} from '../ports/full-text.ts'
import type { RecallSources } from '../ports/recall-sources.ts'
import { AgentLexicalIndexes, type LexicalIndexDeps } from './lexical-indexes.ts'
import { type LexicalTarget, type StoreLexicalRun, StoreLexicalSearch } from './search-lexical-store.ts'

export type { LexicalIndexDeps }

import type { SearchScope } from './search-types.ts'

/** One lexical query's hits, with what a second (expansion) query needs from it. */
export interface LexicalRun {
  collection: FullTextCollection
  set: DocumentSet
  /** Document id and BM25, best first. */
  scores: [string, number][]
  corpus: CorpusFigures
  /** The agent's in-process index the run read (absent when the agent has no documents). */
  index?: LexicalIndex
  /** The store's postings of the query terms (ENGRAM_LEXICAL_INDEX=off: the path before issue 18). */
  postings?: StoreLexicalRun['postings']
}

/** What lexical search reads: the store's full-text port, the rows' texts, and the write versions. */
export interface LexicalSearchDeps extends LexicalIndexDeps {
  recall: RecallSources
}

/**
 * The lexical side of search: BM25 from each agent's own documents, and the two expansions that
 * search again with words the first hits suggest (pseudo-relevance feedback) or the agent's
 * history associates with the query's (co-occurrence).
 */
export class LexicalSearch {
  private readonly fullText: FullTextIndex
  private readonly recall: RecallSources
  /** The agents' in-process indexes: postings, figures and the pruned top-k (issue 18). */
  readonly indexes: AgentLexicalIndexes
  /** The store-read path, when the in-process indexes are switched off (lexicalIndexes null). */
  private readonly store: StoreLexicalSearch | null

  constructor(
    deps: LexicalSearchDeps,
    private readonly lexicalPlan: LexicalPlanConfig,
  ) {
    this.fullText = deps.fullText
    this.recall = deps.recall
    this.indexes = deps.lexicalIndexes ?? new AgentLexicalIndexes(deps.fullText, deps.writes)
    this.store =
      deps.lexicalIndexes === null ? new StoreLexicalSearch(deps.fullText, lexicalPlan, this) : null
  }

  /** The agent's turns in conversation order, held beside its messages' index; null with the indexes off. */
  timeline(agentId: string): ConversationTimeline | null {
    return this.store ? null : this.indexes.timeline(agentId)
  }

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
    // ENGRAM_LEXICAL_INDEX=off: the same checks, then the store's postings (before issue 18).
    if (this.store)
      return this.store.scored(
        agentId,
        { collection, set, empty } satisfies LexicalTarget,
        terms,
        limit,
        sessionId,
      )
    const index = await this.indexes.index(collection, agentId)
    const corpus = index.corpus(set)
    if (corpus.documents === 0) return empty
    const plan = planLexicalQuery(
      terms,
      (term) => index.documentFrequency(term, set),
      corpus.documents,
      this.lexicalPlan,
    )
    if (!plan) return { ...empty, corpus, index }
    // Pruned top-k (block-max MaxScore): the scores and order of scoring every match (core's tests).
    const run = (selective: string[], every: boolean) =>
      index.topK({ terms: selective, set, every, sessionId, limit })
    const rows = run(plan.selective, plan.mode === 'all-common')
    if (rows.length > 0 || !plan.fallback) return { collection, set, scores: rows, corpus, index }
    return { collection, set, scores: run(terms, false), corpus, index }
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
    const index = first.index
    // No index: nothing was held to count with (unless the store path counts, index off).
    if (!this.store && !index) return []
    const top = first.scores.slice(0, DEFAULT_FEEDBACK_OPTIONS.documents).map(([id]) => id)
    const documents = await this.documentTerms(first.collection, top)
    const candidates = [...new Set(documents.flat())].filter((t) => !queryTerms_.includes(t))
    let frequency: (term: string) => number
    if (this.store) frequency = await this.store.frequencies(agentId, first, candidates)
    else {
      // Counted as the store's documentFrequencies counted them: the first MAX_FREQUENCY_TERMS only.
      const counted = new Set(frequencyTerms(candidates))
      const held = index as LexicalIndex
      frequency = (t) => (counted.has(t) ? held.documentFrequency(t, first.set) : 0)
    }
    const expansion = feedbackTerms(documents, queryTerms_, frequency, first.corpus.documents)
    if (expansion.length === 0) return []
    return (await this.lexical(agentId, scope, expansion, limit, sessionId)).scores
  }

  /**
   * Meaning from the agent's own history: words that keep company with the query's words in its
   * documents (normalised PMI), searched with their association as weight. Computed from the
   * current postings at query time, so it is always up to date with what the agent stored.
   */
  async cooccurrence(
    _agentId: string,
    queryTerms_: string[],
    first: LexicalRun,
    limit: number,
    sessionId: string | null,
  ): Promise<[string, number][]> {
    if (this.store) return this.store.cooccurrence(_agentId, queryTerms_, first, limit, sessionId)
    const index = first.index
    if (!index) return []
    const cap = DEFAULT_COOCCURRENCE_OPTIONS.maxDocumentsPerTerm
    const holding = new Map<string, string[][]>()
    for (const term of new Set(queryTerms_)) {
      const held = index.documentFrequency(term, first.set)
      if (held === 0 || held > cap) continue
      holding.set(term, await this.documentTerms(first.collection, index.documentsHolding(term, first.set)))
    }
    if (holding.size === 0) return []
    // Counted as before the in-process index (same ranking): the held query terms, and of the
    // other terms seen the first MAX_FREQUENCY_TERMS (documentFrequencies' cap); the rest count 0.
    const seen = [...new Set([...holding.values()].flat(2))].filter((t) => !queryTerms_.includes(t))
    const counted = new Set([...frequencyTerms(seen), ...holding.keys()])
    const related = cooccurringTerms(
      queryTerms_,
      (term) => holding.get(term) ?? [],
      (term) => (counted.has(term) ? index.documentFrequency(term, first.set) : 0),
      first.corpus.documents,
    )
    if (related.length === 0) return []
    // Each related term's BM25 weighted by its association with the query.
    const scores = new Map<string, number>()
    for (const { term, weight } of related) {
      const hits = index.topK({ terms: [term], set: first.set, every: false, sessionId, limit })
      for (const [id, score] of hits) scores.set(id, (scores.get(id) ?? 0) + weight * score)
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

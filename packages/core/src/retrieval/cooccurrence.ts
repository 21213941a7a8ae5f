import { z } from 'zod'
import { parseWith } from '../errors.ts'
import { STOP_WORDS } from './lexical.ts'

/**
 * Meaning from the agent's own history: words that keep appearing together in its documents are
 * related for this agent, whatever a dictionary says ("studio" and "dance" for a dancer opening a
 * studio). Measured with normalised pointwise mutual information over document co-occurrence, so
 * it needs no model and no data beyond what the agent stored.
 */

export const CooccurrenceOptionsSchema = z.object({
  /** Associated terms returned. */
  maxTerms: z.number().int().min(0).max(100).default(5),
  /** Documents a pair must share: one shared document is chance, not association. */
  minCooccurrence: z.number().int().min(1).max(1_000_000).default(2),
  /**
   * Documents read per query term; a query term held by more documents is skipped: it occurs
   * everywhere, so what it co-occurs with says nothing, and reading them all would cost too much.
   */
  maxDocumentsPerTerm: z.number().int().min(1).max(100_000).default(200),
  /** Least PMI (natural log) a pair needs: 1 means together at least e ≈ 2.7 times as often as chance. */
  minPmi: z.number().min(0).max(50).default(1),
})
export type CooccurrenceOptions = z.infer<typeof CooccurrenceOptionsSchema>
export const DEFAULT_COOCCURRENCE_OPTIONS: Readonly<CooccurrenceOptions> = Object.freeze(
  CooccurrenceOptionsSchema.parse({}),
)

/** Query terms considered: a longer query is already specific. */
export const MAX_COOCCURRENCE_QUERY_TERMS = 32
/**
 * Co-occurring terms scored per query term, the most frequent first: each costs a
 * documentFrequency lookup, and a term sharing fewer documents than the thousandth would not
 * rank anyway.
 */
export const MAX_COOCCURRENCE_CANDIDATES = 1_000
/** Terms read per document. */
export const MAX_COOCCURRENCE_TERMS_PER_DOCUMENT = 10_000

/**
 * Terms strongly associated with the query terms in the agent's own documents, with a weight in
 * (0, 1] (normalised PMI). `documentsWith(term)` gives the term lists of the agent's documents
 * holding the term (capped by the caller at maxDocumentsPerTerm); a query term held by more
 * documents than that is skipped (too common to say anything).
 *
 * The rule, for a query term x and another term y, with N = documentCount, c = documents holding
 * both (among those read for x), and df(x), df(y) their document frequencies:
 *   pmi = ln(c · N / (df(x) · df(y))),  npmi = pmi / −ln(c / N).
 * y is kept when c ≥ minCooccurrence, pmi ≥ minPmi and pmi > 0 (so npmi > 0), unless y is a query
 * term or a stop word or c = N (a pair in every document has no information). Its weight is the
 * highest npmi over the query terms, at most 1. df(x) is taken as at least the documents read for
 * x, df(y) as at least c and N as at least both, so stale statistics cannot push npmi past 1.
 * Best weight first, ties by term; at most maxTerms.
 */
export function cooccurringTerms(
  queryTerms: readonly string[],
  documentsWith: (term: string) => readonly (readonly string[])[],
  documentFrequency: (term: string) => number,
  documentCount: number,
  options?: Partial<CooccurrenceOptions>,
): { term: string; weight: number }[] {
  const { maxTerms, minCooccurrence, maxDocumentsPerTerm, minPmi } = options
    ? parseWith(CooccurrenceOptionsSchema, options)
    : DEFAULT_COOCCURRENCE_OPTIONS
  if (maxTerms === 0) return []
  const frequencyOf = (term: string) => {
    const reported = documentFrequency(term)
    return Number.isFinite(reported) ? reported : 0
  }
  const queried = [...new Set(queryTerms)].filter((t) => t.length > 0).slice(0, MAX_COOCCURRENCE_QUERY_TERMS)
  const excluded = new Set(queryTerms)
  const weights = new Map<string, number>()
  const knownFrequency = new Map<string, number>()

  for (const x of queried) {
    const reportedX = frequencyOf(x)
    if (reportedX <= 0 || reportedX > maxDocumentsPerTerm) continue
    const documents = documentsWith(x).slice(0, maxDocumentsPerTerm)
    const together = new Map<string, number>()
    for (const document of documents) {
      for (const y of new Set(document.slice(0, MAX_COOCCURRENCE_TERMS_PER_DOCUMENT))) {
        if (y.length === 0 || excluded.has(y) || STOP_WORDS.has(y)) continue
        together.set(y, (together.get(y) ?? 0) + 1)
      }
    }
    const candidates = [...together]
      .filter(([, c]) => c >= minCooccurrence)
      .sort(([a, ca], [b, cb]) => cb - ca || (a < b ? -1 : a > b ? 1 : 0))
      .slice(0, MAX_COOCCURRENCE_CANDIDATES)
    const dfX = Math.max(reportedX, documents.length)
    for (const [y, c] of candidates) {
      let reportedY = knownFrequency.get(y)
      if (reportedY === undefined) {
        reportedY = frequencyOf(y)
        knownFrequency.set(y, reportedY)
      }
      const dfY = Math.max(reportedY, c)
      const n = Math.max(Number.isFinite(documentCount) ? documentCount : 0, dfX, dfY)
      if (c >= n) continue
      const pmi = Math.log((c * n) / (dfX * dfY))
      if (!(pmi > 0) || pmi < minPmi) continue
      const npmi = Math.min(1, pmi / -Math.log(c / n))
      if (npmi > (weights.get(y) ?? 0)) weights.set(y, npmi)
    }
  }
  return [...weights]
    .map(([term, weight]) => ({ term, weight }))
    .sort((a, b) => b.weight - a.weight || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0))
    .slice(0, maxTerms)
}

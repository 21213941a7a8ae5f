import { z } from 'zod'
import { parseWith } from '../errors.ts'
import { STOP_WORDS } from './lexical.ts'

/**
 * Pseudo-relevance feedback (Rocchio's idea with tf·idf term selection): the best-ranked documents
 * of a first search are assumed relevant, and the words they share that the query lacks are added
 * to it. A question asks "what did Melanie paint", the turns that answer it say "canvas", "sunset",
 * "acrylic": those reach turns the question's own words miss.
 */

export const FeedbackOptionsSchema = z.object({
  /** Top documents read for expansion terms. */
  documents: z.number().int().min(1).max(100).default(5),
  /** Expansion terms returned. */
  terms: z.number().int().min(0).max(100).default(5),
})
export type FeedbackOptions = z.infer<typeof FeedbackOptionsSchema>
export const DEFAULT_FEEDBACK_OPTIONS: Readonly<FeedbackOptions> = Object.freeze(
  FeedbackOptionsSchema.parse({}),
)

/** Terms read per document: a document longer than this is read from its start. */
export const MAX_FEEDBACK_TERMS_PER_DOCUMENT = 10_000

export interface FeedbackTerm {
  term: string
  /** Summed term frequency over the top documents times ln(documentCount / documentFrequency). */
  score: number
}

/**
 * Expansion terms with their scores, best first (ties by term, so the result never depends on
 * map order). idf is ln(N / df) from the agent's own statistics: a term in every document has
 * idf 0 and never expands a query. df is taken as at least the number of top documents holding
 * the term and N as at least df, so stale statistics cannot make idf negative or infinite.
 * Stop words and the query's own terms are left out, and so are terms occurring in only one of the
 * top documents when more than one was given: a word one document uses is its topic, a word
 * several share is the query's.
 */
export function feedbackTermScores(
  top: readonly (readonly string[])[],
  queryTerms: readonly string[],
  documentFrequency: (term: string) => number,
  documentCount: number,
  options?: Partial<FeedbackOptions>,
): FeedbackTerm[] {
  const { documents, terms } = options ? parseWith(FeedbackOptionsSchema, options) : DEFAULT_FEEDBACK_OPTIONS
  const read = top.slice(0, documents)
  if (terms === 0 || read.length === 0) return []
  const excluded = new Set(queryTerms)
  const frequency = new Map<string, number>()
  const holders = new Map<string, number>()
  for (const document of read) {
    const seen = new Set<string>()
    for (const term of document.slice(0, MAX_FEEDBACK_TERMS_PER_DOCUMENT)) {
      if (term.length === 0 || excluded.has(term) || STOP_WORDS.has(term)) continue
      frequency.set(term, (frequency.get(term) ?? 0) + 1)
      if (!seen.has(term)) {
        seen.add(term)
        holders.set(term, (holders.get(term) ?? 0) + 1)
      }
    }
  }
  const minHolders = read.length > 1 ? 2 : 1
  const scored: FeedbackTerm[] = []
  for (const [term, tf] of frequency) {
    const held = holders.get(term) as number
    if (held < minHolders) continue
    const reported = documentFrequency(term)
    const df = Math.max(Number.isFinite(reported) ? reported : 0, held)
    const n = Math.max(Number.isFinite(documentCount) ? documentCount : 0, df)
    const score = tf * Math.log(n / df)
    if (score > 0) scored.push({ term, score })
  }
  scored.sort((a, b) => b.score - a.score || (a.term < b.term ? -1 : a.term > b.term ? 1 : 0))
  return scored.slice(0, terms)
}

/**
 * The `terms` best expansion terms from the top `documents` documents (each a list of index
 * terms), by summed tf · idf, leaving out the query's own terms and terms occurring in only one of
 * the top documents when more than one was given. idf from documentFrequency over `documentCount`
 * (the agent's own statistics). See feedbackTermScores for the exact rule.
 */
export function feedbackTerms(
  top: readonly (readonly string[])[],
  queryTerms: readonly string[],
  documentFrequency: (term: string) => number,
  documentCount: number,
  options?: Partial<FeedbackOptions>,
): string[] {
  return feedbackTermScores(top, queryTerms, documentFrequency, documentCount, options).map((t) => t.term)
}

import { z } from 'zod'

/**
 * Lexical query handling shared by the search adapters: the words of a query as FTS5 terms.
 * Stop words are dropped (they match nearly every turn of a conversation and drown the signal);
 * each remaining word is quoted, so no user input is read as FTS5 syntax.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing down during each few for from further had has have having he her here hers herself him ' +
    'himself his how i if in into is it its itself just me more most my myself no nor not now of off on once only or other ' +
    'our ours ourselves out over own same she should so some such than that the their theirs them themselves then there ' +
    'these they this those through to too under until up very was we were what when where which while who whom why will ' +
    'with would you your yours yourself yourselves'
  ).split(' '),
)

/**
 * The content words of a text: lowercase letter/digit runs without stop words. This is the word
 * set that memory verification and MMR compare with Jaccard: stop words would make any two
 * sentences of the same shape look alike ("User lives in Paris" and "User lives in Berlin" share
 * 3 of 5 words with them, a duplicate at 0.6, but 2 of 4 content words, a contradiction).
 */
export function contentWords(text: string): Set<string> {
  const words = text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []
  return new Set(words.filter((w) => !STOP_WORDS.has(w)))
}

/** Lowercase word tokens of a text, without stop words, deduplicated in order. */
export function queryTerms(text: string): string[] {
  return [...contentWords(text)]
}

/** A term as an FTS5 string: never read as query syntax. */
const quoted = (term: string) => `"${term.replaceAll('"', '""')}"`

/** An FTS5 MATCH expression: any of the terms (BM25 ranks documents matching more, rarer terms higher). */
export function ftsMatchExpression(text: string): string | null {
  const terms = queryTerms(text)
  if (terms.length === 0) return null
  return terms.map(quoted).join(' OR ')
}

export const LexicalPlanConfigSchema = z.object({
  /**
   * A term found in more than this share of the indexed documents is common: it no longer selects
   * documents, only the rarer terms do (the "common terms" rule of Lucene/Elasticsearch). BM25
   * ranks each document matching a term, so a term in a third of 100k turns costs ~30k scorings
   * for an IDF near zero (bench: load, 45 ms of FTS5 bm25 for such a 3-term query, 1.5 ms without
   * the common terms).
   */
  commonShare: z.number().gt(0).max(1).default(0.1),
  /** Below this many indexed documents every term is kept: scoring them all is cheap and exact. */
  minDocuments: z.number().int().min(0).max(1_000_000_000).default(20_000),
})
export type LexicalPlanConfig = z.infer<typeof LexicalPlanConfigSchema>
export const DEFAULT_LEXICAL_PLAN: LexicalPlanConfig = LexicalPlanConfigSchema.parse({})

export interface LexicalPlan {
  /** The expression to run first. */
  match: string
  /**
   * The full any-term expression, to run when `match` finds nothing (a rare term may occur only in
   * other agents' documents); null when `match` is already it.
   */
  fallback: string | null
  /** The terms that select documents in `match` (all of them when nothing was common). */
  selective: string[]
  /** How `match` was formed: every term, only the uncommon ones, or all common ones together. */
  mode: 'any' | 'uncommon' | 'all-common'
}

/**
 * Plans the FTS5 query for the terms of a search: over a large index, common terms stop selecting
 * documents when an uncommon one is present (documents then must contain an uncommon term and are
 * ranked by those terms), and a query of only common terms asks for documents holding all of them.
 * Both fall back to the any-term query when they find nothing. `frequency` gives a term's
 * document count (FTS5 tokenises it, so the term's stemmed form is counted).
 */
export function planLexicalQuery(
  terms: readonly string[],
  frequency: (term: string) => number,
  documents: number,
  config: LexicalPlanConfig = DEFAULT_LEXICAL_PLAN,
): LexicalPlan | null {
  if (terms.length === 0) return null
  const any = terms.map(quoted).join(' OR ')
  const whole: LexicalPlan = { match: any, fallback: null, selective: [...terms], mode: 'any' }
  if (documents < config.minDocuments || terms.length === 1) return whole
  const limit = config.commonShare * documents
  const uncommon = terms.filter((term) => frequency(term) <= limit)
  if (uncommon.length === terms.length) return whole
  if (uncommon.length > 0)
    return { match: uncommon.map(quoted).join(' OR '), fallback: any, selective: uncommon, mode: 'uncommon' }
  return { match: terms.map(quoted).join(' AND '), fallback: any, selective: [...terms], mode: 'all-common' }
}

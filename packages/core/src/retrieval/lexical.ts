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

/** An FTS5 MATCH expression: any of the terms (BM25 ranks documents matching more, rarer terms higher). */
export function ftsMatchExpression(text: string): string | null {
  const terms = queryTerms(text)
  if (terms.length === 0) return null
  return terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(' OR ')
}

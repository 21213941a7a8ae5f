import { STOP_WORDS } from '../retrieval/lexical.ts'

/**
 * Whether a newer statement really replaces an older one, for memories formed from conversation.
 *
 * Spec 003's contradiction band (same category, word overlap between the two thresholds) was made
 * for explicit updates: an agent writing "User lives in Berlin" after "User lives in Paris". Chat
 * says many distinct true things about one speaker with the same words ("Jon loves all dances, but
 * contemporary is his top pick" and later "Jon loves running his own studio"), and the band alone
 * replaced 28-42 of them per conversation on the development set. A statement replaces another
 * here only when it
 * - corrects or ends it explicitly ("actually…", "no longer", "not anymore", "instead", "used to",
 *   "switched"),
 * - negates it (one says "not"/"never"/"n't" where the other does not, about the same words), or
 * - gives the same subject and attribute a new value: the two differ in one short span (the value)
 *   inside a shared frame that holds the subject and a predicate ("lives in Paris" → "lives in
 *   Berlin", "works at Acme" → "works at Globex Corp", "favourite colour is blue" → "… green"),
 *   where the predicate is a single-valued state: not a past event (events add up: "went to the
 *   beach", "visited a centre"), not a taste or possession that holds for many values ("loves",
 *   "has"), not a plan ("gonna", "will", "wants to").
 * Pure and lexical (no model): it runs on every formed memory's write.
 */
export function replacesStatement(newer: string, older: string): boolean {
  const next = statementTokens(newer)
  const prior = statementTokens(older)
  if (next.some((token) => CORRECTION_WORDS.has(token)) || hasPhrase(next, CORRECTION_PHRASES)) return true
  if (negated(next) !== negated(prior) && sameWordsApartFromNegation(next, prior)) return true
  return swapsValue(next, prior)
}

/** Lowercase words, contractions kept whole ("won't", "dana's"); curly apostrophes made straight. */
function statementTokens(text: string): string[] {
  return (
    text
      .toLowerCase()
      .replaceAll('’', "'")
      .match(/[\p{L}\p{N}]+(?:'[\p{L}]+)*/gu) ?? []
  ).filter((token) => !FILLER.has(token))
}

/** Words that mark the newer statement as a correction or an end of the older one. */
const CORRECTION_WORDS = new Set(['actually', 'anymore', 'instead', 'switched', 'correction', 'mistaken'])
const CORRECTION_PHRASES: readonly (readonly string[])[] = [
  ['no', 'longer'],
  ['not', 'any', 'more'],
  ['used', 'to'],
  ['rather', 'than'],
  ['changed', 'to'],
  ['changed', 'from'],
]

/**
 * Time and emphasis words that do not change what a statement says about its subject: "The office
 * is in York now" gives the office's place as "The office is in Leeds" did.
 */
const FILLER = new Set(['now', 'currently', 'still', 'also', 'really', 'just', 'today', 'these', 'days'])

function hasPhrase(tokens: readonly string[], phrases: readonly (readonly string[])[]): boolean {
  return phrases.some((phrase) =>
    tokens.some((_, start) => phrase.every((word, offset) => tokens[start + offset] === word)),
  )
}

const NEGATIONS = new Set(['not', 'never', 'no', 'cannot', 'nothing', 'nobody', 'nowhere', 'neither', 'nor'])
const isNegation = (token: string) => NEGATIONS.has(token) || token.endsWith("n't")

function negated(tokens: readonly string[]): boolean {
  return tokens.some(isNegation)
}

/**
 * A statement and its denial: the content words apart from negation agree (Jaccard ≥ 0.5), and
 * what is negated is said in the other statement ("Dana doesn't drink coffee" denies "Dana drinks
 * coffee"; "Jon will never quit" does not deny "Jon will keep going").
 */
function sameWordsApartFromNegation(a: readonly string[], b: readonly string[]): boolean {
  const x = meaningWords(a)
  const y = meaningWords(b)
  if (x.size === 0 || y.size === 0) return false
  let shared = 0
  for (const word of x) if (y.has(word)) shared++
  if (shared / (x.size + y.size - shared) < 0.5) return false
  const [negatedIn, other] = negated(a) ? [a, y] : [b, x]
  const target = negatedIn.slice(negatedIn.findIndex(isNegation) + 1).find(isMeaningWord)
  return target !== undefined && other.has(stemLight(target))
}

/** Not a negation, a stop word or an auxiliary: "doesn't drink" and "drinks" share "drink". */
const isMeaningWord = (token: string) =>
  !isNegation(token) && !STOP_WORDS.has(token) && !AUXILIARIES.has(token)

const meaningWords = (tokens: readonly string[]) => new Set(tokens.filter(isMeaningWord).map(stemLight))

/** Plural and third-person "-s" only: "drinks" and "drink" are the same word for a denial. */
const stemLight = (word: string) =>
  word.length > 3 && word.endsWith('s') && !word.endsWith('ss') ? word.slice(0, -1) : word

const AUXILIARIES = new Set([
  'do',
  'does',
  'did',
  'is',
  'are',
  'was',
  'were',
  'am',
  'be',
  'has',
  'have',
  'had',
  'will',
  'going',
  'gonna',
])

/** At most this many words of a value (the span that differs between the two statements). */
const MAX_VALUE_WORDS = 4

/** Same subject and predicate (the shared frame), a different short value. */
function swapsValue(next: readonly string[], prior: readonly string[]): boolean {
  let prefix = 0
  while (prefix < next.length && prefix < prior.length && next[prefix] === prior[prefix]) prefix++
  let suffix = 0
  while (
    suffix < next.length - prefix &&
    suffix < prior.length - prefix &&
    next[next.length - 1 - suffix] === prior[prior.length - 1 - suffix]
  )
    suffix++
  const newValue = next.length - prefix - suffix
  const oldValue = prior.length - prefix - suffix
  if (newValue < 1 || oldValue < 1 || newValue > MAX_VALUE_WORDS || oldValue > MAX_VALUE_WORDS) return false
  // The frame before the value holds the subject and the predicate: two content words ("user
  // lives", "dana's favourite colour") or three words with one ("the office is in", "dana is a"),
  // so a shared name and a copula alone are no frame ("Dana is tired" / "Dana is hungry").
  const frame = next.slice(0, prefix)
  const frameContent = frame.filter((token) => !STOP_WORDS.has(token)).length
  if (frameContent < 2 && !(frameContent === 1 && frame.length >= 3)) return false
  return singleValued(frame)
}

/**
 * Predicates that hold for many values at once, or events and plans that add up rather than
 * replace: a frame holding one of them gives no replacement.
 */
const MANY_VALUED = new Set([
  // tastes and possessions
  'love',
  'loves',
  'like',
  'likes',
  'enjoy',
  'enjoys',
  'adore',
  'adores',
  'has',
  'have',
  'own',
  'owns',
  'into',
  'miss',
  'misses',
  'appreciate',
  'appreciates',
  'thankful',
  'grateful',
  'proud',
  'excited',
  'happy',
  'glad',
  'sad',
  // plans and wishes
  'will',
  "won't",
  "'ll",
  'gonna',
  'wanna',
  'gotta',
  'going',
  'want',
  'wants',
  'plan',
  'plans',
  'hope',
  'hopes',
  'would',
  'might',
  'could',
  'can',
  'should',
  'may',
  'try',
  'trying',
  'thinking',
  // irregular past events
  'went',
  'took',
  'made',
  'had',
  'got',
  'saw',
  'met',
  'did',
  'bought',
  'ate',
  'read',
  'found',
  'gave',
  'ran',
  'won',
  'lost',
  'wrote',
  'told',
  'came',
  'left',
  'felt',
  'heard',
  'brought',
])

/** Copulas: a "-ed" word after one is a state ("is married to", "is based in"), not an event. */
const COPULAS = new Set(['is', 'are', 'am', 'was', 'were', 'be', 'been', 'being', 'get', 'gets', 'got'])

function singleValued(frame: readonly string[]): boolean {
  return frame.every((token, index) => {
    if (MANY_VALUED.has(token) || token.endsWith("'ll")) return false
    // A regular past event ("painted", "visited", "adopted"): later ones add to it.
    const previous = frame[index - 1]
    return !(index > 0 && token.length > 4 && token.endsWith('ed') && !(previous && COPULAS.has(previous)))
  })
}

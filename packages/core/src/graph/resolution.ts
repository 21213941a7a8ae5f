import jaroWinkler from 'jaro-winkler'
import { z } from 'zod'
import { cosineSimilarity } from '../vector/vector.ts'
import { type EntityType, nameTokens, normalizeEntityName } from './graph.ts'

/**
 * Entity resolution (issue 15): whether a name met in a memory is an entity the graph already
 * has. "Dana", "Dana Kim" and "dana" are one node; "Dana Kim" and "Dana Lee" are two. Each signal
 * gives a score in [0, 1], the highest counts, and a candidate at or above the threshold is the
 * same entity. The threshold was measured on a labelled set of name pairs
 * (`fixtures/name-pairs.json`, docs/knowledge-graph.md "Entity resolution").
 */
export type ResolutionReason = 'exact' | 'token-subset' | 'prefix' | 'typo' | 'string' | 'embedding' | 'none'

export interface NameScore {
  score: number
  reason: ResolutionReason
}

export const ResolutionSettingsSchema = z.object({
  /** A candidate scoring at least this is the same entity (measured: see the module comment). */
  threshold: z.number().min(0).max(1).default(0.9),
  /** One name's words all among the other's ("Dana" / "Dana Kim"): same entity when the candidate is the only such one. */
  tokenSubsetScore: z.number().min(0).max(1).default(0.92),
  /** A short name that begins a word of the other ("Mel" / "Melanie"): a nickname or a cut name. */
  prefixScore: z.number().min(0).max(1).default(0.9),
  /** Shortest prefix that counts (two letters is too little: "Al" begins too many names). */
  minPrefixChars: z.number().int().min(1).max(10).default(3),
  /**
   * The full word is at least this many times the prefix's length: "Mel" / "Melanie" and "Sam" /
   * "Samantha" are nicknames, "Dan" / "Dana", "Paul" / "Paula" and "Julia" / "Julian" different
   * names (measured on the pairs).
   */
  prefixMinRatio: z.number().min(1).max(10).default(2),
  /** One slip of the keyboard ("Caorline", "Ginna", "Kubernets"): see isTypo. */
  typoScore: z.number().min(0).max(1).default(0.93),
  /**
   * Jaro-Winkler counts only between names of at least this many letters: on short names it is
   * high for different names ("Paul" / "Paula" 0.96, "Dan" / "Dana" 0.93), measured on the pairs.
   */
  stringMinChars: z.number().int().min(0).max(100).default(8),
  /** Weight of the names' embedding similarity (0: unused). */
  embeddingWeight: z.number().min(0).max(1).default(1),
})
export type ResolutionSettings = z.infer<typeof ResolutionSettingsSchema>
export const DEFAULT_RESOLUTION_SETTINGS: ResolutionSettings = ResolutionSettingsSchema.parse({})

export interface ResolvableName {
  name: string
  aliases?: readonly string[]
  type: EntityType
  /** The name's embedding, when one was computed. */
  embedding?: Float32Array | null
}

export interface ResolutionCandidate extends ResolvableName {
  id: string
}

export interface Resolution {
  /** The candidate that is the same entity, or null (a new entity). */
  id: string | null
  score: number
  reason: ResolutionReason
  /** Several candidates fitted a short name equally ("Dana" with "Dana Kim" and "Dana Lee"): none was chosen. */
  ambiguous: boolean
}

/** Whether two types may name one entity: the same, or one of them untyped (CONCEPT: no cue was found). */
export function typesCompatible(a: EntityType, b: EntityType): boolean {
  return a === b || a === 'CONCEPT' || b === 'CONCEPT'
}

/** How alike two names are, by their words and letters only (no types, no other candidates). */
export function nameSimilarity(
  a: string,
  b: string,
  settings: ResolutionSettings = DEFAULT_RESOLUTION_SETTINGS,
): NameScore {
  const left = nameTokens(a)
  const right = nameTokens(b)
  if (left.length === 0 || right.length === 0) return { score: 0, reason: 'none' }
  const joinedLeft = left.join(' ')
  const joinedRight = right.join(' ')
  if (joinedLeft === joinedRight) return { score: 1, reason: 'exact' }
  // Written together or apart ("DoorDash" / "Door Dash") is one name.
  if (left.join('') === right.join('')) return { score: 1, reason: 'exact' }
  const long = Math.min(joinedLeft.length, joinedRight.length) >= settings.stringMinChars
  let best: NameScore = {
    score: long ? jaroWinkler(joinedLeft, joinedRight) : 0,
    reason: long ? 'string' : 'none',
  }
  const consider = (score: number, reason: ResolutionReason) => {
    if (score > best.score) best = { score, reason }
  }
  if (isTypo(joinedLeft, joinedRight)) consider(settings.typoScore, 'typo')
  // The name with fewer words (or, with as many, fewer letters) is the shorter.
  const [shorter, longer] =
    left.length < right.length || (left.length === right.length && joinedLeft.length <= joinedRight.length)
      ? [left, right]
      : [right, left]
  if (shorter.every((token) => longer.includes(token))) consider(settings.tokenSubsetScore, 'token-subset')
  // "Mel" / "Melanie Smith": a one-word name that begins the other's first word.
  if (shorter.length === 1) {
    const word = shorter[0] as string
    const first = longer[0] as string
    if (
      word.length >= settings.minPrefixChars &&
      first.length >= word.length * settings.prefixMinRatio &&
      first.startsWith(word)
    )
      consider(settings.prefixScore, 'prefix')
  }
  return best
}

/**
 * One slip between two spellings of a name: two neighbouring letters swapped ("Caorline"), a
 * letter doubled ("Ginna", "Postgress"), or, in a name of six letters or more, one letter left out
 * or changed anywhere but at the start and (left out) at the end. A letter added or dropped at the
 * end is not a slip: "Paul" / "Paula", "Julia" / "Julian" are different names.
 */
export function isTypo(a: string, b: string): boolean {
  if (a === b) return false
  const [short, long] = a.length <= b.length ? [a, b] : [b, a]
  if (short.length < 3 || long.length - short.length > 1) return false
  if (short.length === long.length) {
    const diffs: number[] = []
    for (let i = 0; i < short.length && diffs.length <= 2; i++) if (short[i] !== long[i]) diffs.push(i)
    if (diffs.length === 2) {
      const [i, j] = diffs as [number, number]
      return j === i + 1 && short[i] === long[j] && short[j] === long[i] && short.length >= 4
    }
    return diffs.length === 1 && (diffs[0] as number) > 0 && short.length >= 6
  }
  // One letter more in `long`: where the two first differ is the extra letter.
  let at = 0
  while (at < short.length && short[at] === long[at]) at++
  if (long.slice(at + 1) !== short.slice(at)) return false
  const doubled = at > 0 && long[at] === long[at - 1]
  if (doubled) return true
  return short.length >= 6 && at > 0 && at < short.length
}

/**
 * A noun phrase as the offline extractor writes it (activities.ts): several words, the head (the
 * last) in lower case ("pottery class", "LGBTQ support group"). A name is capitalised ("Dana
 * Kim"); a single lower-case word may be either ("dana", "pottery").
 */
function isNounPhrase(name: string): boolean {
  const words = name.trim().split(/\s+/)
  const head = words.at(-1) ?? ''
  return words.length > 1 && head === head.toLowerCase() && /\p{L}/u.test(head)
}

/**
 * nameSimilarity, then the names' embeddings (weighted) when both have one. A noun phrase is only
 * ever the same as a name with the same head, whatever their shared words or letters: "pottery" is
 * not the "pottery class", the name "LGBTQ" not the "LGBTQ support group"; the subset, nickname and
 * embedding signals are for names.
 */
export function scoreNames(
  a: ResolvableName,
  b: ResolvableName,
  settings: ResolutionSettings = DEFAULT_RESOLUTION_SETTINGS,
): NameScore {
  let best: NameScore = { score: 0, reason: 'none' }
  if (
    (isNounPhrase(a.name) || isNounPhrase(b.name)) &&
    nameTokens(a.name).at(-1) !== nameTokens(b.name).at(-1) &&
    normalizeEntityName(a.name) !== normalizeEntityName(b.name)
  )
    return best
  for (const left of [a.name, ...(a.aliases ?? [])])
    for (const right of [b.name, ...(b.aliases ?? [])]) {
      const score = nameSimilarity(left, right, settings)
      if (score.score > best.score) best = score
    }
  if (
    settings.embeddingWeight > 0 &&
    a.embedding &&
    b.embedding &&
    a.embedding.length === b.embedding.length
  ) {
    const similarity = cosineSimilarity(a.embedding, b.embedding) * settings.embeddingWeight
    if (similarity > best.score) best = { score: similarity, reason: 'embedding' }
  }
  return best
}

/**
 * The entity among `candidates` a mention is, or none. Types must be compatible. A short name that
 * several candidates contain ("Dana" with "Dana Kim" and "Dana Lee") resolves to none of them
 * (ambiguous) unless one of them carries it exactly (as its name or an alias).
 */
export function resolveEntity(
  mention: ResolvableName,
  candidates: readonly ResolutionCandidate[],
  settings: ResolutionSettings = DEFAULT_RESOLUTION_SETTINGS,
): Resolution {
  const scored = candidates
    .filter((candidate) => typesCompatible(mention.type, candidate.type))
    .map((candidate) => ({ candidate, ...scoreNames(mention, candidate, settings) }))
    .filter((entry) => entry.score >= settings.threshold)
    // Exact first, then by score; ties keep the caller's order (the most mentioned first).
    .sort((x, y) => Number(y.reason === 'exact') - Number(x.reason === 'exact') || y.score - x.score)
  const best = scored[0]
  if (!best) return { id: null, score: 0, reason: 'none', ambiguous: false }
  if (best.reason !== 'exact') {
    const key = normalizeEntityName(mention.name)
    // Two different entities both fit by the same loose rule: the name does not tell them apart.
    const rivals = scored.filter(
      (entry) =>
        entry.candidate.id !== best.candidate.id &&
        entry.score >= best.score - 0.02 &&
        entry.reason !== 'embedding',
    )
    if (rivals.length > 0 && key.length > 0)
      return { id: null, score: best.score, reason: best.reason, ambiguous: true }
  }
  return { id: best.candidate.id, score: best.score, reason: best.reason, ambiguous: false }
}

import { nameTokens, normalizeEntityName } from '@engram/core'
import type { GraphEntityRecord } from '../ports/graph.ts'

/**
 * How well an entity answers a name typed by a person or a model, in three bands so an exact name
 * always outranks shared words and shared words always outrank a close spelling:
 * - 1: the name or one of its aliases normalises to the query (core's normalizeEntityName).
 * - 0.5 to 0.95: words shared with the best of its names, 0.5 + 0.45 × shared / max(words of
 *   either): "Dana" finds "Dana Kim" at 0.725, "Dana Kim" finds "Kim, Dana" at 0.95.
 * - 0 to 0.45: a close spelling, 0.45 × the best edit similarity (see editSimilarity) between
 *   the whole names, or word for word for a one-word query, counted only from
 *   MIN_SPELLING_SIMILARITY up: "Dnaa" finds "Dana Kim" at 0.34 (one swap in four letters).
 * 0 means no match.
 */
export const MIN_SPELLING_SIMILARITY = 0.7

export function entityMatchScore(query: string, entity: GraphEntityRecord): number {
  const normalized = normalizeEntityName(query)
  if (normalized.length === 0) return 0
  const names = [entity.normalizedName, ...entity.aliases.map(normalizeEntityName)]
  if (names.includes(normalized)) return 1
  const queryTokens = nameTokens(query)
  let overlap = 0
  for (const name of names) {
    const tokens = new Set(name.split(' '))
    const shared = new Set(queryTokens.filter((t) => tokens.has(t))).size
    overlap = Math.max(overlap, shared / Math.max(tokens.size, new Set(queryTokens).size))
  }
  if (overlap > 0) return 0.5 + 0.45 * overlap
  let spelling = 0
  for (const name of names) {
    spelling = Math.max(spelling, editSimilarity(normalized, name))
    // Word for word: a misspelt surname still finds the person when the query is one word.
    if (queryTokens.length === 1)
      for (const token of name.split(' ')) spelling = Math.max(spelling, editSimilarity(normalized, token))
  }
  return spelling >= MIN_SPELLING_SIMILARITY ? 0.45 * spelling : 0
}

/**
 * 1 − edit distance / the longer length, where the distance counts insertions, deletions,
 * substitutions and swaps of two neighbouring letters (optimal string alignment): 1 for equal
 * strings, 0 for nothing in common. A swap is the commonest typo, so "dnaa" is one edit from "dana".
 */
export function editSimilarity(a: string, b: string): number {
  if (a === b) return 1
  const longer = Math.max(a.length, b.length)
  if (longer === 0) return 1
  // Names are bounded (maxEntityNameChars), so three rows of the table stay small.
  let before: number[] = []
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + cost,
      )
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, (before[j - 2] as number) + 1)
      current[j] = best
    }
    before = previous
    previous = current
  }
  return 1 - (previous[b.length] as number) / longer
}

/**
 * Whether `text`'s words contain the entity's name or an alias as a run of whole words: what
 * "entities named in a question" means ("Where does Dana Kim work?" names "Dana Kim" and, through
 * an alias, "Dana").
 */
export function namedIn(textTokens: readonly string[], entity: GraphEntityRecord): boolean {
  const names = [entity.normalizedName, ...entity.aliases.map(normalizeEntityName)]
  return names.some((name) => {
    const words = name.split(' ').filter((w) => w.length > 0)
    if (words.length === 0 || words.length > textTokens.length) return false
    for (let start = 0; start + words.length <= textTokens.length; start++)
      if (words.every((w, k) => textTokens[start + k] === w)) return true
    return false
  })
}

import { nameSimilarity, nameTokens, normalizeEntityName, type ResolutionReason } from '@engram/core'
import type { GraphEntityQuery, GraphEntityRecord, GraphRepository } from '../ports/graph.ts'
import type { EntityMatch } from './graph-views.ts'

/**
 * How well an entity answers a name typed by a person or a model, in three bands so an exact name
 * always outranks shared words and shared words always outrank a close spelling:
 * - 1: the name or one of its aliases normalises to the query (core's normalizeEntityName).
 * - 0.5 to 0.95: words shared with the best of its names, 0.5 + 0.45 × shared / max(words of
 *   either): "Dana" finds "Dana Kim" at 0.725, "Dana Kim" finds "Kim, Dana" at 0.95.
 * - below 0.45: a close spelling, 0.45 × core's nameSimilarity (the signals entity resolution
 *   measured: one typing slip 0.93, a nickname prefix 0.9, Jaro-Winkler on long names) between the
 *   whole names, or word for word for a one-word query, counted only from MIN_SPELLING_SIMILARITY
 *   up: "Dnaa" finds "Dana Kim" at 0.42 (two letters swapped), "Mel" finds "Melanie" at 0.405.
 * 0 means no match.
 */
export const MIN_SPELLING_SIMILARITY = 0.85

/** What counts as a spelling of the same name (shared words have their own band above). */
const SPELLING_REASONS: ReadonlySet<ResolutionReason> = new Set(['typo', 'prefix', 'string'])

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
    spelling = Math.max(spelling, spellingSimilarity(normalized, name))
    // Word for word: a misspelt surname still finds the person when the query is one word.
    if (queryTokens.length === 1)
      for (const token of name.split(' '))
        spelling = Math.max(spelling, spellingSimilarity(normalized, token))
  }
  return spelling >= MIN_SPELLING_SIMILARITY ? 0.45 * spelling : 0
}

/** core's nameSimilarity when it sees a spelling of the same name (a slip, a prefix, close letters), else 0. */
export function spellingSimilarity(a: string, b: string): number {
  const similarity = nameSimilarity(a, b)
  return SPELLING_REASONS.has(similarity.reason) ? similarity.score : 0
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

/** Candidates a fuzzy name is scored against: words shared, then a scan of the most mentioned. */
export const TOKEN_CANDIDATES = 1_000
export const SPELLING_SCAN = 2_000

/** Most mentioned first, ties by id: the order every list of entities answers in. */
export const byMentions = (a: GraphEntityRecord, b: GraphEntityRecord) =>
  b.mentionCount - a.mentionCount || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** Every entity a typed name may mean, scored by entityMatchScore, best first (exact names, shared words, close spellings). */
export async function fuzzyEntityMatches(
  graph: GraphRepository,
  agentId: string,
  name: string,
  query: GraphEntityQuery,
): Promise<EntityMatch[]> {
  const normalized = normalizeEntityName(name)
  if (normalized.length === 0) return []
  const tokens = [...new Set(nameTokens(name))]
  const candidates = new Map<string, GraphEntityRecord>()
  const add = (entities: GraphEntityRecord[]) => {
    for (const e of entities) candidates.set(e.id, e)
  }
  add(await graph.entitiesByName(agentId, normalized))
  add(await graph.entitiesByTokens(agentId, tokens, TOKEN_CANDIDATES))
  for (const token of tokens.filter((t) => t.length >= 4))
    add(
      await graph.searchEntities(agentId, { ...query, nameContains: token.slice(0, 3) }, 0, TOKEN_CANDIDATES),
    )
  add(await graph.searchEntities(agentId, query, 0, SPELLING_SCAN))
  const matches: EntityMatch[] = []
  for (const entity of candidates.values()) {
    if (query.type && entity.type !== query.type) continue
    if (query.userId !== undefined && entity.userId !== query.userId) continue
    // The name and token lookups take no query: a knownAt read drops what was learnt later here.
    if (query.learntBy && entity.createdAt.getTime() > query.learntBy.getTime()) continue
    const score = entityMatchScore(name, entity)
    if (score > 0) matches.push({ entity, score })
  }
  return matches.sort((a, b) => b.score - a.score || byMentions(a.entity, b.entity))
}

import { ValidationError } from '../errors.ts'
import { jaccard } from '../memory/verification.ts'
import { contentWords } from './lexical.ts'

const DAY_MS = 86_400_000

/**
 * Spec 003's temporal decay: a memory's weight halves every half-life. A timestamp in the future
 * (clock skew between writers) counts as brand new rather than above 1.
 */
export function temporalDecay(ageMs: number, halfLifeDays: number): number {
  if (!(halfLifeDays > 0)) {
    throw new ValidationError([{ field: 'halfLifeDays', message: 'must be positive', limit: 0 }])
  }
  if (!(ageMs > 0)) return 1
  return 0.5 ** (ageMs / (halfLifeDays * DAY_MS))
}

export interface MmrCandidate<T> {
  item: T
  score: number
  text: string
}

/**
 * Why a candidate was taken where it was: MMR puts a hit with a lower score above one with a
 * higher score when the latter repeats a hit already taken, and these say by how much.
 */
export interface MmrSelection<T> extends MmrCandidate<T> {
  /** score over the best candidate's score: MMR's relevance term, at most 1. */
  relevance: number
  /** Highest Jaccard similarity of its content words to a candidate taken before it; 0 for the first. */
  redundancy: number
  /** Index in the selection of that most similar earlier pick; null when it overlaps none. */
  redundantWith: number | null
  /** λ·relevance − (1−λ)·redundancy: what it was taken on. Never increases down the selection. */
  mmrScore: number
}

/**
 * Spec 003's Maximal Marginal Relevance: repeatedly take the candidate with the highest
 * λ·relevance − (1−λ)·(its highest Jaccard similarity to those already taken). Relevance is the
 * score over the best score, so both terms lie in [0, 1] and λ weighs like with like whatever the
 * scale of the scores. λ = 1 is pure score order; ties go to the earlier candidate.
 * Scores are expected non-negative; when none is positive they are used as they are.
 *
 * A candidate's value only falls as the selection grows (its similarity to the selection can only
 * rise), so the selection comes out in non-increasing `mmrScore`: that, not `score`, is its order.
 */
export function mmrRerank<T>(
  candidates: readonly MmrCandidate<T>[],
  limit: number,
  lambda: number,
): MmrSelection<T>[] {
  if (!Number.isInteger(limit) || limit < 0) {
    throw new ValidationError([{ field: 'limit', message: 'must be a whole number ≥ 0', limit: 0 }])
  }
  if (!(lambda >= 0 && lambda <= 1)) {
    throw new ValidationError([
      { field: 'lambda', message: 'must be between 0 and 1', limit: lambda < 0 ? 0 : 1 },
    ])
  }
  const count = Math.min(limit, candidates.length)
  if (count === 0) return []

  const bestScore = candidates.reduce((best, c) => Math.max(best, c.score), Number.NEGATIVE_INFINITY)
  const scale = bestScore > 0 ? bestScore : 1
  const relevance = candidates.map((c) => c.score / scale)
  const words = candidates.map((c) => contentWords(c.text))
  // Each candidate's highest similarity to the selection, updated as the selection grows: one
  // Jaccard per (candidate, pick) instead of one per (candidate, pick, earlier pick).
  const closest = new Float64Array(candidates.length)
  const closestPick = new Int32Array(candidates.length).fill(-1)
  const taken = new Uint8Array(candidates.length)
  const selected: MmrSelection<T>[] = []

  while (selected.length < count) {
    let pick = -1
    let pickValue = Number.NEGATIVE_INFINITY
    for (let i = 0; i < candidates.length; i++) {
      if (taken[i]) continue
      const value = lambda * (relevance[i] as number) - (1 - lambda) * (closest[i] as number)
      if (value > pickValue) {
        pick = i
        pickValue = value
      }
    }
    taken[pick] = 1
    const pickIndex = selected.length
    selected.push({
      ...(candidates[pick] as MmrCandidate<T>),
      relevance: relevance[pick] as number,
      redundancy: closest[pick] as number,
      redundantWith: (closestPick[pick] as number) >= 0 ? (closestPick[pick] as number) : null,
      mmrScore: pickValue,
    })
    const pickedWords = words[pick] as Set<string>
    for (let i = 0; i < candidates.length; i++) {
      if (taken[i]) continue
      const similarity = jaccard(words[i] as Set<string>, pickedWords)
      if (similarity > (closest[i] as number)) {
        closest[i] = similarity
        closestPick[i] = pickIndex
      }
    }
  }
  return selected
}

export interface StrategyWeights {
  recency: number
  similarity: number
  importance: number
}

/** Spec 002's hybrid strategy weights. */
export const DEFAULT_WEIGHTED_STRATEGY_WEIGHTS: Readonly<StrategyWeights> = Object.freeze({
  recency: 0.3,
  similarity: 0.5,
  importance: 0.2,
})

/** Spec 001's rerank: final_score = 0.7 · similarity + 0.3 · importance. */
export const SIMILARITY_IMPORTANCE_WEIGHTS: Readonly<Pick<StrategyWeights, 'similarity' | 'importance'>> =
  Object.freeze({ similarity: 0.7, importance: 0.3 })

export interface WeightedStrategyScore {
  score: number
  /** 1 − rank / candidateLimit in the recency list; 0 when absent. */
  recency: number
  similarity: number
  importance: number
}

/**
 * Spec 002's `retrieveHybrid` merge: each id earns w_r · (1 − rank/candidateLimit) from the
 * recency list, w_s · similarity and w_i · importance from the others, summed across lists. As in
 * the spec, each strategy contributes its first candidateLimit candidates (so recency never goes
 * negative). The unweighted components are returned too, so a caller can show why a memory
 * ranked where it did. Entries come in descending score order, ties in order of first appearance.
 */
export function weightedStrategyScores(input: {
  byRecency: string[]
  bySimilarity: { id: string; similarity: number }[]
  byImportance: { id: string; importance: number }[]
  candidateLimit: number
  weights: StrategyWeights
}): Map<string, WeightedStrategyScore> {
  const { candidateLimit, weights } = input
  if (!Number.isInteger(candidateLimit) || candidateLimit < 1) {
    throw new ValidationError([{ field: 'candidateLimit', message: 'must be a whole number ≥ 1', limit: 1 }])
  }
  const scores = new Map<string, WeightedStrategyScore>()
  const entry = (id: string): WeightedStrategyScore => {
    let found = scores.get(id)
    if (!found) {
      found = { score: 0, recency: 0, similarity: 0, importance: 0 }
      scores.set(id, found)
    }
    return found
  }
  input.byRecency.slice(0, candidateLimit).forEach((id, rank) => {
    const recency = 1 - rank / candidateLimit
    const e = entry(id)
    e.recency += recency
    e.score += weights.recency * recency
  })
  for (const { id, similarity } of input.bySimilarity.slice(0, candidateLimit)) {
    const e = entry(id)
    e.similarity += similarity
    e.score += weights.similarity * similarity
  }
  for (const { id, importance } of input.byImportance.slice(0, candidateLimit)) {
    const e = entry(id)
    e.importance += importance
    e.score += weights.importance * importance
  }
  // Array.prototype.sort is stable: equal scores keep their first-appearance order.
  return new Map([...scores].sort(([, a], [, b]) => b.score - a.score))
}

import type { TrajectoryRules } from './rules.ts'

const DAY_MS = 86_400_000

/**
 * The words of a goal, as matching compares them: lowercased, accents and punctuation dropped,
 * single characters skipped (the documented system's tokenizer, extended to every script).
 */
export function goalWords(goal: string): string[] {
  const words = goal
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 1)
  return [...new Set(words)]
}

/** Jaccard overlap of two goals' word sets (spec 004's word-overlap similarity). */
export function goalSimilarity(a: string | readonly string[], b: string | readonly string[]): number {
  const wordsA = new Set(typeof a === 'string' ? goalWords(a) : a)
  const wordsB = new Set(typeof b === 'string' ? goalWords(b) : b)
  if (wordsA.size === 0 && wordsB.size === 0) return 1
  if (wordsA.size === 0 || wordsB.size === 0) return 0
  let shared = 0
  for (const w of wordsA) if (wordsB.has(w)) shared++
  return shared / (wordsA.size + wordsB.size - shared)
}

/**
 * The fewest words a stored goal of `storedSize` words must share with a query of `querySize`
 * words to reach `threshold`: an index can skip every trajectory sharing fewer (Jaccard ≥ t needs
 * |A∩B| ≥ t·|A∪B| ≥ t·max(|A|, |B|)).
 */
export function minSharedWords(querySize: number, threshold: number): number {
  if (threshold <= 0) return 0
  return Math.max(1, Math.ceil(threshold * querySize - 1e-9))
}

/** What scoring needs to know of a stored trajectory. */
export interface TrajectoryFacts {
  recordedAt: Date
  durationMs: number
  stepCount: number
  verifiedCount: number
}

export function recencyScore(
  recordedAt: Date,
  now: Date,
  rules: Pick<TrajectoryRules, 'recencyDays'>,
): number {
  const ageDays = Math.max(0, (now.getTime() - recordedAt.getTime()) / DAY_MS)
  return Math.exp(-ageDays / rules.recencyDays)
}

export function speedScore(durationMs: number, rules: Pick<TrajectoryRules, 'speedScaleMs'>): number {
  return 1 / (1 + Math.max(0, durationMs) / rules.speedScaleMs)
}

/** The share of verified steps; a trajectory with no steps is neutral (½). */
export function verificationScore(t: Pick<TrajectoryFacts, 'stepCount' | 'verifiedCount'>): number {
  return t.stepCount === 0 ? 0.5 : t.verifiedCount / t.stepCount
}

/** Spec 004's weighted blend: similarity 60%, recency 20%, speed 10%, verification rate 10%. */
export function trajectoryScore(
  similarity: number,
  t: TrajectoryFacts,
  now: Date,
  rules: Pick<TrajectoryRules, 'scoringWeights' | 'recencyDays' | 'speedScaleMs'>,
): number {
  const w = rules.scoringWeights
  return (
    similarity * w.similarity +
    recencyScore(t.recordedAt, now, rules) * w.recency +
    speedScore(t.durationMs, rules) * w.speed +
    verificationScore(t) * w.verification
  )
}

/** Whether a trajectory recorded at `recordedAt` is still offered at `now` (traceTtlDays). */
export function trajectoryIsLive(
  recordedAt: Date,
  now: Date,
  rules: Pick<TrajectoryRules, 'traceTtlDays'>,
): boolean {
  return now.getTime() - recordedAt.getTime() <= rules.traceTtlDays * DAY_MS
}

export interface ReferenceCandidate extends TrajectoryFacts {
  id: string
  goal: string
  /** goalWords(goal), when the store kept them. */
  words?: readonly string[]
}

export interface ReferenceMatch<T extends ReferenceCandidate> {
  trajectory: T
  similarity: number
  /** The ranking score: the similarity itself, or the weighted blend with trace scoring on. */
  score: number
}

/**
 * The trajectories a run on `goal` may follow, best first: live (within traceTtlDays), similar
 * enough (Jaccard ≥ similarityThreshold), ranked by similarity or, with trace scoring on, by the
 * weighted blend. Ties go to the most recent, then the id, so the answer is stable.
 */
export function rankReferenceTrajectories<T extends ReferenceCandidate>(
  goal: string,
  candidates: readonly T[],
  now: Date,
  rules: TrajectoryRules,
): ReferenceMatch<T>[] {
  const words = goalWords(goal)
  const matches: ReferenceMatch<T>[] = []
  for (const trajectory of candidates) {
    if (!trajectoryIsLive(trajectory.recordedAt, now, rules)) continue
    const similarity = goalSimilarity(words, trajectory.words ?? goalWords(trajectory.goal))
    if (similarity < rules.similarityThreshold) continue
    const score = rules.traceScoring ? trajectoryScore(similarity, trajectory, now, rules) : similarity
    matches.push({ trajectory, similarity, score })
  }
  return matches.sort(
    (a, b) =>
      b.score - a.score ||
      b.trajectory.recordedAt.getTime() - a.trajectory.recordedAt.getTime() ||
      (a.trajectory.id < b.trajectory.id ? -1 : a.trajectory.id > b.trajectory.id ? 1 : 0),
  )
}

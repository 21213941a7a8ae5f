// The arithmetic of the quality suite, apart from the API so a test can pin it: recall, tuning a
// knob on one conversation, measuring it on another, the verdict and the latency budget.
import { percentile } from '../../../packages/core/bench/report.ts'
import type { KnobValue } from './quality-changes.ts'

export const KS = [5, 10, 25] as const

export const CATEGORY_NAMES: Record<number, string> = {
  1: 'multi-hop',
  2: 'temporal',
  3: 'open-domain',
  4: 'single-hop',
  5: 'adversarial',
}
/** Report order: LoCoMo's categories, then all questions. */
export const BUCKETS = [...Object.values(CATEGORY_NAMES), 'overall'] as const

/** How far `defaults`' p95 search time may rise over `before issue 11`'s for the recall gains. */
export const P95_BUDGET = 1.25

/**
 * Recall differences below this (in points) are ties: means of the same per-question figures summed
 * in another order can differ in the last bits, and that must not pick a value or decide a verdict.
 */
const TIE = 1e-9

/** One question's recall at each of KS. */
export interface QuestionOutcome {
  category: number
  recall: readonly number[]
}

/** Share of the evidence turns among the first k retrieved. */
export const recallAt = (retrieved: readonly string[], evidence: readonly string[], k: number): number =>
  evidence.filter((id) => retrieved.slice(0, k).includes(id)).length / evidence.length

export function outcomeOf(category: number, retrieved: readonly string[], evidence: readonly string[]) {
  return { category, recall: KS.map((k) => recallAt(retrieved, evidence, k)) }
}

/** The questions of one bucket (a category name or `overall`). */
export const inBucket = (outcomes: readonly QuestionOutcome[], bucket: string): QuestionOutcome[] =>
  bucket === 'overall' ? [...outcomes] : outcomes.filter((o) => CATEGORY_NAMES[o.category] === bucket)

/** Mean recall at KS[kIndex], in percent; NaN for no questions. */
export function meanRecall(outcomes: readonly QuestionOutcome[], k: (typeof KS)[number]): number {
  if (outcomes.length === 0) return Number.NaN
  const index = KS.indexOf(k)
  return (outcomes.reduce((sum, o) => sum + (o.recall[index] as number), 0) / outcomes.length) * 100
}

/**
 * The value with the best score. A tie goes to the off value, then to the value nearest it (the
 * smaller change), then to the one listed first: a change must earn its place, not win by order.
 */
export function chooseTunedValue(
  candidates: readonly { value: KnobValue; score: number }[],
  off: KnobValue,
): KnobValue {
  if (candidates.length === 0) throw new Error('no candidates to tune over')
  const best = Math.max(...candidates.map((c) => c.score))
  const tied = candidates.filter((c) => c.score >= best - TIE)
  if (tied.some((c) => c.value === off)) return off
  const distance = (value: KnobValue) =>
    typeof value === 'number' && typeof off === 'number' ? Math.abs(value - off) : 0
  return tied.reduce((chosen, c) => (distance(c.value) < distance(chosen.value) ? c : chosen)).value
}

export interface HeldOutResult {
  tunedOn: string
  heldOut: string
  value: KnobValue
  /** R@10 points gained on the conversation it was tuned on (with the tuned value vs off). */
  inSample: number
  /** R@10 points gained on the other conversation: the figure that decides. */
  heldOutDelta: number
}

/**
 * For every ordered pair of conversations (A, B): the value with the best R@10 on A among the
 * values tried and off, then its gain over off on A (in-sample) and on B (held-out).
 * `r10(value, conversation)` is the mean R@10 with the knob at that value, all else at defaults.
 */
export function crossValidate(
  change: { values: readonly KnobValue[]; off: KnobValue },
  conversations: readonly string[],
  r10: (value: KnobValue, conversation: string) => number,
): HeldOutResult[] {
  const candidates = [change.off, ...change.values.filter((v) => v !== change.off)]
  const results: HeldOutResult[] = []
  for (const tunedOn of conversations) {
    const value = chooseTunedValue(
      candidates.map((v) => ({ value: v, score: r10(v, tunedOn) })),
      change.off,
    )
    for (const heldOut of conversations) {
      if (heldOut === tunedOn) continue
      results.push({
        tunedOn,
        heldOut,
        value,
        inSample: r10(value, tunedOn) - r10(change.off, tunedOn),
        heldOutDelta: r10(value, heldOut) - r10(change.off, heldOut),
      })
    }
  }
  return results
}

export type Verdict = 'helps on both held-out' | 'hurts' | 'mixed'

/** Helps only when every held-out gain is above zero; a change tuned to off gains nothing, so is mixed. */
export function verdictOf(heldOutDeltas: readonly number[]): Verdict {
  if (heldOutDeltas.length === 0) return 'mixed'
  if (heldOutDeltas.every((d) => d > TIE)) return 'helps on both held-out'
  if (heldOutDeltas.every((d) => d < -TIE)) return 'hurts'
  return 'mixed'
}

export interface LatencySummary {
  before: { p50: number; p95: number; calls: number }
  defaults: { p50: number; p95: number; calls: number }
  /** defaults' p95 / before's p95. */
  p95Ratio: number
  withinBudget: boolean
}

/** p50 and p95 (nearest rank) of each side's search times in ms, and the p95 budget. */
export function summariseLatency(
  beforeMs: readonly number[],
  defaultsMs: readonly number[],
  budget = P95_BUDGET,
): LatencySummary {
  const side = (ms: readonly number[]) => ({
    p50: percentile(ms, 50),
    p95: percentile(ms, 95),
    calls: ms.length,
  })
  const before = side(beforeMs)
  const defaults = side(defaultsMs)
  const p95Ratio = defaults.p95 / before.p95
  return { before, defaults, p95Ratio, withinBudget: p95Ratio <= budget }
}

import type { AppFactType, TrajectoryRules } from './rules.ts'

/** An app fact as the confidence rules see it. */
export interface AppFactState {
  id: string
  type: AppFactType
  key: string
  value: string
  confidence: number
  sources: number
}

export type FactRules = Pick<
  TrajectoryRules,
  'factInitialConfidence' | 'factConfirmStep' | 'factContradictionFactor' | 'factPruneBelow'
>

/** A confirmation: asymptotic towards 1, (1 − c) · step. */
export const confirmedConfidence = (c: number, rules: Pick<FactRules, 'factConfirmStep'>) =>
  Math.min(1, c + (1 - c) * rules.factConfirmStep)

/** A contradiction: the old value's confidence is multiplied by the factor (halved by default). */
export const contradictedConfidence = (c: number, rules: Pick<FactRules, 'factContradictionFactor'>) =>
  c * rules.factContradictionFactor

/** What observing (type, key) = value does to the facts already known for that (type, key). */
export interface FactObservation {
  /** Existing facts whose confidence (and sources) change. */
  updates: { id: string; confidence: number; sources: number }[]
  /** A new fact to add, at the initial confidence, or null when the value was already known. */
  insert: { type: AppFactType; key: string; value: string; confidence: number; sources: 1 } | null
  /** Facts that fell below the prune threshold: to delete. */
  prune: string[]
}

/**
 * Spec 004's app knowledge rules (with the documented system's numbers): the same value again is a
 * confirmation (+(1 − c)·0.2, one more source); a different value contradicts every other value
 * known for the key (each halved) and is added at 0.6; facts below 0.1 are pruned. `known` holds
 * the facts of the same (type, key), any value.
 */
export function observeFact(
  known: readonly AppFactState[],
  observed: { type: AppFactType; key: string; value: string },
  rules: FactRules,
): FactObservation {
  const same = known.find((f) => f.value === observed.value)
  const updates: FactObservation['updates'] = []
  const prune: string[] = []
  if (same) {
    updates.push({
      id: same.id,
      confidence: confirmedConfidence(same.confidence, rules),
      sources: same.sources + 1,
    })
    return { updates, insert: null, prune }
  }
  for (const other of known) {
    const confidence = contradictedConfidence(other.confidence, rules)
    if (confidence < rules.factPruneBelow) prune.push(other.id)
    else updates.push({ id: other.id, confidence, sources: other.sources })
  }
  return {
    updates,
    insert: { ...observed, confidence: rules.factInitialConfidence, sources: 1 },
    prune,
  }
}

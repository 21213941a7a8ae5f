import {
  DEFAULT_RUN_SCOPE,
  type FieldIssue,
  normalizeRunDomain,
  RUN_ID_PATTERN,
  RUN_SCOPE_PATTERN,
  type TrajectoryLimits,
  ValidationError,
} from '@engram/core'
import type { TrajectoryStep } from '../ports/trajectories.ts'
import type { FactInput, SelectorInput, StepInput } from './run-types.ts'

// What the run registry and the memory records accept, and the checks the engine makes itself:
// the doors parse the catalog's zod first, but the engine is also called in process (the
// migration, tests, embedded users) and its limits are configurable (`trajectoryLimits`), so each
// use case checks its input against them and names the field and the limit it broke.

/**
 * Collects the issues of one input, so a caller hears of every bad field at once. Each check
 * answers the value it accepted, normalised where the rule says so (domains).
 */
export class InputCheck {
  readonly issues: FieldIssue[] = []

  constructor(readonly limits: TrajectoryLimits) {}

  private fail(field: string, message: string, limit?: number): void {
    this.issues.push({ field, message, ...(limit !== undefined ? { limit } : {}) })
  }

  /** Free text: not blank, at most `max` characters. */
  text(field: string, value: string, max: number): string {
    if (value.trim().length === 0) this.fail(field, 'must not be blank', 1)
    else if (value.length > max) this.fail(field, `must be at most ${max} characters`, max)
    return value
  }

  /** Optional text that may be empty (an outcome, a summary). */
  optionalText(field: string, value: string | null | undefined, max: number): string | null {
    if (value == null) return null
    if (value.length > max) this.fail(field, `must be at most ${max} characters`, max)
    return value
  }

  /** A run or run session id given by an orchestrator. */
  id(field: string, value: string): string {
    const max = this.limits.maxRunIdChars
    if (value.length > max) this.fail(field, `must be at most ${max} characters`, max)
    else if (!RUN_ID_PATTERN.test(value))
      this.fail(field, 'must start with a letter or digit and use only letters, digits and _ . : -')
    return value
  }

  scope(field: string, value: string): string {
    const max = this.limits.maxScopeChars
    if (value.length > max) this.fail(field, `must be at most ${max} characters`, max)
    else if (!RUN_SCOPE_PATTERN.test(value))
      this.fail(field, 'must start with a letter or digit and use only letters, digits and _ . : -')
    return value
  }

  /** The scope a call names, or the default one ("default"). */
  scopeOrDefault(scope: string | null | undefined): string {
    return scope != null ? this.scope('scope', scope) : DEFAULT_RUN_SCOPE
  }

  /** A domain as given (a host, a URL, a name), normalised: it must not normalise to nothing. */
  domain(field: string, value: string): string {
    const domain = normalizeRunDomain(value)
    const max = this.limits.maxDomainChars
    if (domain.length === 0) this.fail(field, 'must name a host or a place (it is blank once normalised)', 1)
    else if (domain.length > max) this.fail(field, `must be at most ${max} characters`, max)
    return domain
  }

  url(field: string, value: string | null | undefined): string | null {
    if (value == null) return null
    const max = this.limits.maxUrlChars
    if (value.length === 0) this.fail(field, 'must not be empty', 1)
    else if (value.length > max) this.fail(field, `must be at most ${max} characters`, max)
    return value
  }

  /** A whole number from `min` (0 unless said) to `max`. */
  count(field: string, value: number | null | undefined, max: number, min = 0): number | null {
    if (value == null) return null
    if (!Number.isInteger(value) || value < min)
      this.fail(field, `must be a whole number, ${min} or more`, min)
    else if (value > max) this.fail(field, `must be at most ${max}`, max)
    return value
  }

  /** A list read's window: from `offset` (0), `limit` items (the limits' default, at most their maximum). */
  window(page: { offset?: number | null; limit?: number | null }): { offset: number; limit: number } {
    const offset = this.count('offset', page.offset, 10_000_000) ?? 0
    const limit = this.count('limit', page.limit, this.limits.maxListLimit, 1) ?? this.limits.defaultListLimit
    return { offset, limit }
  }

  /** A list's length. */
  size(field: string, length: number, max: number, min = 0): void {
    if (length < min) this.fail(field, `must hold at least ${min}`, min)
    else if (length > max) this.fail(field, `must hold at most ${max}`, max)
  }

  steps(field: string, steps: readonly StepInput[], min = 0): void {
    const L = this.limits
    this.size(field, steps.length, L.maxStepsPerTrajectory, min)
    steps.forEach((step, i) => {
      this.text(`${field}.${i}.action`, step.action, L.maxActionChars)
      this.optionalText(`${field}.${i}.selector`, step.selector, L.maxSelectorChars)
      this.optionalText(`${field}.${i}.value`, step.value, L.maxStepValueChars)
      this.url(`${field}.${i}.url`, step.url)
      this.count(`${field}.${i}.durationMs`, step.durationMs, MAX_DURATION_MS)
    })
  }

  facts(field: string, facts: readonly FactInput[], min = 0): void {
    const L = this.limits
    this.size(field, facts.length, L.maxFactsPerCall, min)
    facts.forEach((fact, i) => {
      this.text(`${field}.${i}.key`, fact.key, L.maxFactKeyChars)
      this.text(`${field}.${i}.value`, fact.value, L.maxFactValueChars)
    })
  }

  selectors(field: string, selectors: readonly SelectorInput[], min = 0): void {
    const L = this.limits
    this.size(field, selectors.length, L.maxSelectorsPerCall, min)
    selectors.forEach((s, i) => {
      this.text(`${field}.${i}.element`, s.element, L.maxElementChars)
      this.text(`${field}.${i}.selector`, s.selector, L.maxSelectorChars)
    })
  }

  /** Throws every issue found, or nothing. */
  done(): void {
    if (this.issues.length > 0) throw new ValidationError(this.issues)
  }
}

/** The longest duration a run or step may claim: a year (the catalog's bound). */
export const MAX_DURATION_MS = 365 * 86_400_000

/** The URL origin ("https://www.example.com") of the first of `urls` that has one. */
export function originOf(urls: readonly (string | null | undefined)[]): string | null {
  for (const url of urls) {
    if (!url) continue
    try {
      const origin = new URL(url).origin
      if (origin !== 'null') return origin
    } catch {
      // Not an absolute URL: the next one may be.
    }
  }
  return null
}

export const stepOf = (s: StepInput): TrajectoryStep => ({
  action: s.action,
  selector: s.selector ?? null,
  value: s.value ?? null,
  url: s.url ?? null,
  verified: s.verified ?? null,
  durationMs: s.durationMs ?? null,
  extra: null,
})

/**
 * Applies an agent's sensitive-data policy (spec 001) to the free texts of one write, all at once:
 * the texts to store (redacted where the policy says so), or a ValidationError naming each field
 * it refuses. The engine passes its PrivacyService; a pass-through when none is given.
 */
export type TextGuard = (agentId: string, texts: { field: string; text: string }[]) => Promise<string[]>

/** Free texts of a write by field; absent ones (null, undefined) are left as they are. */
export type GuardedTexts = Record<string, string | null | undefined>

export const stepTexts = (field: string, steps: readonly StepInput[]): GuardedTexts =>
  Object.fromEntries(steps.map((s, i) => [`${field}.${i}.value`, s.value]))

export const factTexts = (field: string, facts: readonly FactInput[]): GuardedTexts =>
  Object.fromEntries(
    facts.flatMap((f, i) => [
      [`${field}.${i}.key`, f.key],
      [`${field}.${i}.value`, f.value],
    ]),
  )

/** The steps with their typed values as the guard let them through (a password redacted). */
export const guardedSteps = (texts: GuardedTexts, field: string, steps: readonly StepInput[]): StepInput[] =>
  steps.map((s, i) => ({ ...s, value: texts[`${field}.${i}.value`] ?? null }))

export const guardedFacts = (texts: GuardedTexts, field: string, facts: readonly FactInput[]): FactInput[] =>
  facts.map((f, i) => ({
    ...f,
    key: texts[`${field}.${i}.key`] ?? f.key,
    value: texts[`${field}.${i}.value`] ?? f.value,
  }))

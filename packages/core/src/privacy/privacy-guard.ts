import { type FieldIssue, ValidationError } from '../errors.ts'

/** Spec 001, Sensitive Data Detection: what an agent's policy does with what is found. */
export const PRIVACY_MODES = ['reject', 'redact', 'allow'] as const
export type PrivacyMode = (typeof PRIVACY_MODES)[number]
export const DEFAULT_PRIVACY_MODE: PrivacyMode = 'redact'

export const MAX_PRIVACY_PATTERNS = 20
export const MAX_PRIVACY_PATTERN_CHARS = 200
const PATTERN_NAME = /^[a-z][a-z0-9_]{0,31}$/

export interface PrivacyPattern {
  name: string
  pattern: string
}

export interface PrivacyPolicy {
  mode: PrivacyMode
  patterns: PrivacyPattern[]
}

export interface SensitiveFinding {
  kind: string
  start: number
  end: number
}

const KIND_LABELS: Record<string, string> = {
  ssn: 'a US social security number',
  payment_card: 'a payment card number',
}

/** A written field that held sensitive data under a `reject` policy: nothing is stored. */
export class SensitiveDataError extends ValidationError {
  constructor(issues: FieldIssue[]) {
    super(issues)
  }
}

// Dashed or spaced SSNs only, without the numbers never issued (000, 666, 9xx areas; 00 group; 0000 serial).
const SSN = /\b(?!000|666|9\d\d)\d{3}([- ])(?!00)\d{2}\1(?!0000)\d{4}\b/g
// 13-19 digits, optionally grouped by spaces or dashes; confirmed by the Luhn checksum.
const CARD = /\b\d(?:[ -]?\d){12,18}\b/g

export function luhnValid(digits: string): boolean {
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    let d = Number(digits[digits.length - 1 - i])
    if (i % 2 === 1) {
      d *= 2
      if (d > 9) d -= 9
    }
    sum += d
  }
  return digits.length >= 13 && sum % 10 === 0
}

export interface CompiledPattern {
  name: string
  regex: RegExp
}

/** Checks and compiles an agent's own patterns; every problem is reported with its field. */
export function compilePrivacyPatterns(
  patterns: readonly PrivacyPattern[],
  field = 'patterns',
): CompiledPattern[] {
  const issues: FieldIssue[] = []
  if (patterns.length > MAX_PRIVACY_PATTERNS) {
    issues.push({ field, message: `at most ${MAX_PRIVACY_PATTERNS} patterns`, limit: MAX_PRIVACY_PATTERNS })
  }
  const compiled: CompiledPattern[] = []
  patterns.forEach((p, i) => {
    if (!PATTERN_NAME.test(p.name) || p.name in KIND_LABELS) {
      issues.push({
        field: `${field}.${i}.name`,
        message: 'must be a new lowercase name: letters, digits, _ (1-32)',
        limit: 32,
      })
    }
    if (p.pattern.length === 0 || p.pattern.length > MAX_PRIVACY_PATTERN_CHARS) {
      issues.push({
        field: `${field}.${i}.pattern`,
        message: `must be 1 to ${MAX_PRIVACY_PATTERN_CHARS} characters`,
        limit: MAX_PRIVACY_PATTERN_CHARS,
      })
      return
    }
    try {
      compiled.push({ name: p.name, regex: new RegExp(p.pattern, 'gu') })
    } catch (error) {
      issues.push({
        field: `${field}.${i}.pattern`,
        message: `is not a valid regular expression: ${(error as Error).message}`,
      })
    }
  })
  if (issues.length > 0) throw new ValidationError(issues)
  return compiled
}

/** Every sensitive span in a text, in order, overlaps merged into the first finding. */
export function findSensitiveData(text: string, custom: readonly CompiledPattern[] = []): SensitiveFinding[] {
  const found: SensitiveFinding[] = []
  for (const m of text.matchAll(SSN)) found.push({ kind: 'ssn', start: m.index, end: m.index + m[0].length })
  for (const m of text.matchAll(CARD)) {
    if (luhnValid(m[0].replace(/\D/g, '')))
      found.push({ kind: 'payment_card', start: m.index, end: m.index + m[0].length })
  }
  for (const pattern of custom) {
    for (const m of text.matchAll(pattern.regex)) {
      if (m[0].length > 0) found.push({ kind: pattern.name, start: m.index, end: m.index + m[0].length })
    }
  }
  found.sort((a, b) => a.start - b.start || b.end - a.end)
  const merged: SensitiveFinding[] = []
  for (const f of found) {
    const last = merged[merged.length - 1]
    if (last && f.start < last.end) last.end = Math.max(last.end, f.end)
    else merged.push({ ...f })
  }
  return merged
}

export function redact(text: string, findings: readonly SensitiveFinding[]): string {
  let out = ''
  let at = 0
  for (const f of findings) {
    out += `${text.slice(at, f.start)}[REDACTED:${f.kind}]`
    at = f.end
  }
  return out + text.slice(at)
}

/**
 * Applies an agent's policy to the texts of one write. `reject` throws before anything is stored,
 * naming each field and the kind found; `redact` replaces each span; `allow` passes all.
 */
export function guardTexts(
  texts: readonly { field: string; text: string }[],
  policy: { mode: PrivacyMode; patterns: readonly CompiledPattern[] },
): string[] {
  if (policy.mode === 'allow') return texts.map((t) => t.text)
  const issues: FieldIssue[] = []
  const out = texts.map(({ field, text }) => {
    const findings = findSensitiveData(text, policy.patterns)
    if (findings.length === 0) return text
    if (policy.mode === 'reject') {
      for (const kind of new Set(findings.map((f) => f.kind))) {
        issues.push({
          field,
          message: `contains ${KIND_LABELS[kind] ?? `text matching the "${kind}" pattern`}`,
          limit: kind,
        })
      }
      return text
    }
    return redact(text, findings)
  })
  if (issues.length > 0) throw new SensitiveDataError(issues)
  return out
}

import { RE2JS } from 're2js'
import { type FieldIssue, ValidationError } from '../errors.ts'

/** Spec 001, Sensitive Data Detection: what an agent's policy does with what is found. */
export const PRIVACY_MODES = ['reject', 'redact', 'allow'] as const
export type PrivacyMode = (typeof PRIVACY_MODES)[number]
export const DEFAULT_PRIVACY_MODE: PrivacyMode = 'redact'

export const MAX_PRIVACY_PATTERNS = 20
export const MAX_PRIVACY_PATTERN_CHARS = 200
// RE2 matches in time proportional to text length × compiled program size (~20 ns per
// instruction per character here), so the program size is what bounds a scan: 200 instructions
// fit realistic patterns (an API-key pattern `\bsk-[A-Za-z0-9]{32,64}\b` is 103) and keep one
// scan of a 100,000-character message under ~0.4 s even for the worst pattern of that size.
export const MAX_PRIVACY_PATTERN_PROGRAM_SIZE = 200
export const MAX_PRIVACY_POLICY_PROGRAM_SIZE = 1_000
// The backstop when a write carries many long texts: past this the write is refused (fail
// closed: nothing is stored unscanned), checked between scans.
export const DEFAULT_PRIVACY_SCAN_TIME_LIMIT_MS = 1_000
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
  /** Compiled by RE2 (linear time): a custom pattern can never backtrack catastrophically. */
  regex: RE2JS
  programSize: number
}

/**
 * Why a (valid JavaScript) pattern cannot run on RE2, if it uses the two features RE2 leaves out
 * by design because they need backtracking. Found by walking escapes and character classes, so
 * `\\1` (a backslash, then 1) and `[(?=]` are not mistaken for them.
 */
function backtrackingFeature(pattern: string): string | undefined {
  let inClass = false
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]
    if (ch === '\\') {
      const next = pattern[i + 1] ?? ''
      if (/[1-9]/.test(next) || (next === 'k' && pattern[i + 2] === '<')) {
        return 'backreferences (\\1, \\k<name>) are not supported'
      }
      i++
    } else if (inClass) {
      if (ch === ']') inClass = false
    } else if (ch === '[') {
      inClass = true
    } else if (/^\(\?<?[=!]/.test(pattern.slice(i, i + 4))) {
      return 'lookahead and lookbehind ((?=, (?!, (?<=, (?<!) are not supported'
    }
  }
  return undefined
}

/**
 * Checks and compiles an agent's own patterns on RE2 (JavaScript syntax, translated); every
 * problem is reported with its field. Patterns RE2 cannot run in linear time are refused.
 */
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
    const patternField = `${field}.${i}.pattern`
    if (p.pattern.length === 0 || p.pattern.length > MAX_PRIVACY_PATTERN_CHARS) {
      issues.push({
        field: patternField,
        message: `must be 1 to ${MAX_PRIVACY_PATTERN_CHARS} characters`,
        limit: MAX_PRIVACY_PATTERN_CHARS,
      })
      return
    }
    // JavaScript syntax (unicode mode) stays the contract; V8 only parses it here, never runs
    // it, and its parser refuses what RE2's translation would silently read differently (`\q`).
    try {
      new RegExp(p.pattern, 'u')
    } catch (error) {
      issues.push({
        field: patternField,
        message: `pattern "${p.name}" is not a valid regular expression: ${(error as Error).message}`,
      })
      return
    }
    const unsupported = backtrackingFeature(p.pattern)
    let regex: RE2JS | undefined
    let reason = unsupported
    if (!unsupported) {
      try {
        regex = RE2JS.compile(RE2JS.translateRegExp(p.pattern))
      } catch (error) {
        reason = (error as Error).message
      }
    }
    if (!regex) {
      issues.push({
        field: patternField,
        message: `pattern "${p.name}" cannot run on the linear-time (RE2) engine: ${reason}`,
      })
      return
    }
    const programSize = regex.programSize()
    if (programSize > MAX_PRIVACY_PATTERN_PROGRAM_SIZE) {
      issues.push({
        field: patternField,
        message: `pattern "${p.name}" compiles to ${programSize} instructions, more than ${MAX_PRIVACY_PATTERN_PROGRAM_SIZE} (large counted repeats such as {500} cost the most)`,
        limit: MAX_PRIVACY_PATTERN_PROGRAM_SIZE,
      })
      return
    }
    compiled.push({ name: p.name, regex, programSize })
  })
  const total = compiled.reduce((sum, p) => sum + p.programSize, 0)
  if (total > MAX_PRIVACY_POLICY_PROGRAM_SIZE) {
    issues.push({
      field,
      message: `the patterns compile to ${total} instructions together, more than ${MAX_PRIVACY_POLICY_PROGRAM_SIZE}`,
      limit: MAX_PRIVACY_POLICY_PROGRAM_SIZE,
    })
  }
  if (issues.length > 0) throw new ValidationError(issues)
  return compiled
}

/** A scan that ran past its time limit: refused, since storing it unscanned could leak. */
export class PrivacyScanTimeoutError extends ValidationError {}

/**
 * The time guard of one write: `now` is injected (core reads no clock) and checked between
 * scans of one pattern over one text, each of which the program-size limits keep short.
 */
export interface ScanDeadline {
  now: () => number
  timeLimitMs: number
}

/** Every sensitive span in a text, in order, overlaps merged into the first finding. */
export function findSensitiveData(
  text: string,
  custom: readonly CompiledPattern[] = [],
  deadline?: { check: () => void },
): SensitiveFinding[] {
  const found: SensitiveFinding[] = []
  for (const m of text.matchAll(SSN)) found.push({ kind: 'ssn', start: m.index, end: m.index + m[0].length })
  for (const m of text.matchAll(CARD)) {
    if (luhnValid(m[0].replace(/\D/g, '')))
      found.push({ kind: 'payment_card', start: m.index, end: m.index + m[0].length })
  }
  for (const pattern of custom) {
    deadline?.check()
    const matcher = pattern.regex.matcher(text)
    while (matcher.find()) {
      const start = matcher.start()
      const end = matcher.end()
      if (end > start) found.push({ kind: pattern.name, start, end })
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
  deadline?: ScanDeadline,
): string[] {
  if (policy.mode === 'allow') return texts.map((t) => t.text)
  const startedAt = deadline?.now() ?? 0
  let current = ''
  const check = deadline
    ? {
        check: () => {
          const elapsed = deadline.now() - startedAt
          if (elapsed > deadline.timeLimitMs) {
            throw new PrivacyScanTimeoutError([
              {
                field: current,
                message: `the privacy patterns took ${Math.round(elapsed)} ms to scan this write, more than ${deadline.timeLimitMs} ms; nothing was stored`,
                limit: deadline.timeLimitMs,
              },
            ])
          }
        },
      }
    : undefined
  const issues: FieldIssue[] = []
  const out = texts.map(({ field, text }) => {
    current = field
    const findings = findSensitiveData(text, policy.patterns, check)
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

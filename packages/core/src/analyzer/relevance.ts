import { z } from 'zod'
import { parseWith } from '../errors.ts'
import type { MemoryEntry, Role } from '../types.ts'

const weight = (fallback: number) => z.number().min(-1).max(1).default(fallback)
const ageMs = (fallback: number) =>
  z
    .number()
    .int()
    .min(0)
    .max(3_650 * 86_400_000)
    .default(fallback)

export const KEY_FACT_MODES = ['spec', 'strict'] as const
export type KeyFactMode = (typeof KEY_FACT_MODES)[number]

/** Spec 000, Relevance Scoring: every weight and threshold, configurable. */
export const AnalyzerConfigSchema = z.object({
  /** The spec gives no starting score; 0.5 lets a fresh message with a URL reach the 0.8 promotion bar. */
  baseScore: z.number().min(0).max(1).default(0.5),
  /** "Last hour" and "last day": ages up to and including these get the recency boosts. */
  lastHourMs: ageMs(3_600_000),
  lastDayMs: ageMs(86_400_000),
  lastHourBoost: weight(0.2),
  lastDayBoost: weight(0.1),
  olderPenalty: weight(-0.1),
  errorBoost: weight(0.15),
  urlBoost: weight(0.1),
  selectorBoost: weight(0.1),
  credentialBoost: weight(0.2),
  importantBoost: weight(0.15),
  shortContentPenalty: weight(-0.2),
  shortContentChars: z.number().int().min(0).max(10_000).default(20),
  fillerPenalty: weight(-0.3),
  systemRoleBoost: weight(0.1),
  toolRoleBoost: weight(0.15),
  redundancyThreshold: z.number().gt(0).max(1).default(0.9),
  minRelevance: z.number().min(0).max(1).default(0.3),
  promoteThreshold: z.number().min(0).max(1).default(0.8),
  /**
   * What counts as an error signal (the relevance boost and the "error" key fact). `spec` (spec
   * 000, the default): the words error/failed/exception anywhere, so "Can you share the exact
   * error message?" counts. `strict`: only an actual error (an `Error: …` line, a named
   * `…Error`/`…Exception`, a stack trace frame, an error code such as ECONNREFUSED or HTTP 503).
   */
  keyFactMode: z.enum(KEY_FACT_MODES).default('spec'),
})
export type AnalyzerConfig = z.infer<typeof AnalyzerConfigSchema>
export const DEFAULT_ANALYZER_CONFIG: AnalyzerConfig = AnalyzerConfigSchema.parse({})

export function parseAnalyzerConfig(input?: Partial<AnalyzerConfig>): AnalyzerConfig {
  return parseWith(AnalyzerConfigSchema, input, 'analyzer')
}

const ERROR_WORDS = /\b(error|failed)\b/i
const URL_PATTERN = /https?:\/\//i
const SELECTOR_WORDS = /\b(selector|xpath)\b/i
const CREDENTIAL_WORDS = /\b(password|credentials?)\b/i
const IMPORTANT_WORDS = /\b(important|critical)\b/i
const FILLER_START = /^\s*(ok|okay|yes|no|sure|thanks|hi|hello)\b/i

const ROLE_BOOST: Record<Role, keyof AnalyzerConfig | null> = {
  system: 'systemRoleBoost',
  tool: 'toolRoleBoost',
  user: null,
  assistant: null,
}

/** The spec's relevance score: recency, content signals and role, clamped to [0, 1]. */
export function scoreRelevance(
  entry: Pick<MemoryEntry, 'content' | 'role' | 'timestamp'>,
  now: Date,
  config: AnalyzerConfig = DEFAULT_ANALYZER_CONFIG,
): number {
  return relevanceFromSignals(entry, now, contentSignals(entry.content, config), config)
}

// The content signals of the relevance score, one bit each, in the order the score adds them.
const ERROR_SIGNAL = 1
const URL_SIGNAL = 2
const SELECTOR_SIGNAL = 4
const CREDENTIAL_SIGNAL = 8
const IMPORTANT_SIGNAL = 16
const SHORT_SIGNAL = 32
const FILLER_SIGNAL = 64

/**
 * Which content signals a text carries, as bits: the regex work of the score, which depends on the
 * text and the config only, so a caller scoring the same entries run after run (the optimizer)
 * can keep it while the text is unchanged and redo only the part that moves with the clock.
 */
export function contentSignals(text: string, config: AnalyzerConfig = DEFAULT_ANALYZER_CONFIG): number {
  let signals = 0
  if (config.keyFactMode === 'strict' ? actualError(text) !== null : ERROR_WORDS.test(text)) {
    signals |= ERROR_SIGNAL
  }
  if (URL_PATTERN.test(text)) signals |= URL_SIGNAL
  if (SELECTOR_WORDS.test(text)) signals |= SELECTOR_SIGNAL
  if (CREDENTIAL_WORDS.test(text)) signals |= CREDENTIAL_SIGNAL
  if (IMPORTANT_WORDS.test(text)) signals |= IMPORTANT_SIGNAL
  if (text.length < config.shortContentChars) signals |= SHORT_SIGNAL
  if (FILLER_START.test(text)) signals |= FILLER_SIGNAL
  return signals
}

/**
 * scoreRelevance from the text's signals (contentSignals of the same text and config): the same
 * additions in the same order, so the same number to the last bit.
 */
export function relevanceFromSignals(
  entry: Pick<MemoryEntry, 'role' | 'timestamp'>,
  now: Date,
  signals: number,
  config: AnalyzerConfig = DEFAULT_ANALYZER_CONFIG,
): number {
  let score = config.baseScore
  const age = now.getTime() - entry.timestamp.getTime()
  // A timestamp ahead of `now` (clock skew between agent and server) counts as the last hour.
  if (age <= config.lastHourMs) score += config.lastHourBoost
  else if (age <= config.lastDayMs) score += config.lastDayBoost
  else score += config.olderPenalty

  if (signals & ERROR_SIGNAL) score += config.errorBoost
  if (signals & URL_SIGNAL) score += config.urlBoost
  if (signals & SELECTOR_SIGNAL) score += config.selectorBoost
  if (signals & CREDENTIAL_SIGNAL) score += config.credentialBoost
  if (signals & IMPORTANT_SIGNAL) score += config.importantBoost
  if (signals & SHORT_SIGNAL) score += config.shortContentPenalty
  if (signals & FILLER_SIGNAL) score += config.fillerPenalty

  const roleBoost = ROLE_BOOST[entry.role]
  if (roleBoost) score += config[roleBoost] as number
  // Sums of decimal weights drift (0.5 + 0.2 + 0.1 = 0.8000000000000002): round to the weights' grain.
  return Math.min(1, Math.max(0, Math.round(score * 1e6) / 1e6))
}

// Strict mode's evidence of an actual error, most specific first. Each pattern is linear (no
// nested quantifiers) because entry text may be 100,000 characters.
const ACTUAL_ERROR_PATTERNS: readonly RegExp[] = [
  // A stack frame: JavaScript/Java "at fn (file.js:12:5)", Python's traceback header and frames.
  /^[ \t]*at (?:\S+ )?\(?\S+:\d+:\d+\)?[ \t]*$/m,
  /Traceback \(most recent call last\)/,
  /^[ \t]*File "[^"\n]+", line \d+/m,
  // An error message as programs print it: "Error: ...", "TypeError: ...", "error[E0382]: ...".
  /(?:^|[\s'"`(])[A-Za-z]*(?:Error|Exception)(?:\[\w+\])?:[ \t]*\S[^\n]*/,
  /^[ \t]*(?:error|fatal|ERROR|FATAL)(?:\[\w+\])?:[ \t]*\S[^\n]*/m,
  // A named error or exception class: TypeError, NullPointerException.
  /\b[A-Z][a-z]+(?:[A-Z][a-z]*)*(?:Error|Exception)\b/,
  // Error codes: POSIX/Node errno names, HTTP statuses named as such, non-zero exit codes.
  /\bE(?:CONN(?:REFUSED|RESET|ABORTED)|TIMEDOUT|NOENT|ACCES|PERM|ADDRINUSE|PIPE|HOSTUNREACH|NETUNREACH|NOTFOUND|MFILE|EXIST|NOSPC)\b/,
  /\b(?:HTTP|status(?: code)?)[ /]?\d?\.?\d?[ \t]*[45]\d\d\b/i,
  /\bexit(?:ed with)?(?: code| status)[ \t]*[1-9]\d*\b/i,
  /\berror code[ \t]*:?[ \t]*#?[\w-]*\d/i,
]

/** Strict mode: the text of an actual error in `content`, or null. */
export function actualError(content: string): string | null {
  for (const pattern of ACTUAL_ERROR_PATTERNS) {
    const match = pattern.exec(content)
    if (match) return match[0].trim()
  }
  return null
}

export interface KeyFact {
  /** URL, error, selector, API reference, credential, step reference. */
  kind: string
  /** The text that made it a key fact. */
  text: string
}

const KEY_FACT_PATTERNS: readonly { kind: string; patterns: readonly RegExp[] }[] = [
  { kind: 'URL', patterns: [/https?:\/\/\S+/i] },
  { kind: 'error', patterns: [/\b(error|failed|exception)\b/i] },
  { kind: 'selector', patterns: [/\b(selector|xpath)\b|\/\/[a-z*]+\[|(^|[\s'"(])[#.][a-z][\w-]*/i] },
  {
    kind: 'API reference',
    patterns: [/\b(api|endpoint)\b|\/api\//i, /\b(GET|POST|PUT|PATCH|DELETE)\s+\/\S*/],
  },
  { kind: 'credential', patterns: [/\b(password|credentials?|api[ _-]?key|token|secret)\b/i] },
  { kind: 'step reference', patterns: [/\b(step|phase)\s+\d+/i] },
]

/**
 * Spec 000, Key Facts Detection: every kind of key fact in `content` with the text that shows it,
 * in the spec's order. In strict mode only an actual error counts as an error fact.
 */
export function keyFacts(content: string, mode: KeyFactMode = 'spec'): KeyFact[] {
  const facts: KeyFact[] = []
  for (const { kind, patterns } of KEY_FACT_PATTERNS) {
    if (kind === 'error' && mode === 'strict') {
      const text = actualError(content)
      if (text !== null) facts.push({ kind, text: clip(text) })
      continue
    }
    for (const pattern of patterns) {
      const match = pattern.exec(content)
      if (match) {
        facts.push({ kind, text: clip(match[0].trim()) })
        break
      }
    }
  }
  return facts
}

/** A key fact's text is evidence, not the entry: a long match (a URL, a stack line) is cut. */
const MAX_KEY_FACT_CHARS = 120
const clip = (text: string) =>
  text.length > MAX_KEY_FACT_CHARS ? `${text.slice(0, MAX_KEY_FACT_CHARS - 1)}…` : text

/** Spec 000, Key Facts Detection: which kind of key fact an entry carries first, or null. */
export function keyFactKind(content: string, mode: KeyFactMode = 'spec'): string | null {
  return keyFacts(content, mode)[0]?.kind ?? null
}

export function hasKeyFacts(content: string, mode: KeyFactMode = 'spec'): boolean {
  return keyFactKind(content, mode) !== null
}

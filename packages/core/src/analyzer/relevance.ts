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
  let score = config.baseScore
  const age = now.getTime() - entry.timestamp.getTime()
  // A timestamp ahead of `now` (clock skew between agent and server) counts as the last hour.
  if (age <= config.lastHourMs) score += config.lastHourBoost
  else if (age <= config.lastDayMs) score += config.lastDayBoost
  else score += config.olderPenalty

  const text = entry.content
  if (ERROR_WORDS.test(text)) score += config.errorBoost
  if (URL_PATTERN.test(text)) score += config.urlBoost
  if (SELECTOR_WORDS.test(text)) score += config.selectorBoost
  if (CREDENTIAL_WORDS.test(text)) score += config.credentialBoost
  if (IMPORTANT_WORDS.test(text)) score += config.importantBoost
  if (text.length < config.shortContentChars) score += config.shortContentPenalty
  if (FILLER_START.test(text)) score += config.fillerPenalty

  const roleBoost = ROLE_BOOST[entry.role]
  if (roleBoost) score += config[roleBoost] as number
  // Sums of decimal weights drift (0.5 + 0.2 + 0.1 = 0.8000000000000002): round to the weights' grain.
  return Math.min(1, Math.max(0, Math.round(score * 1e6) / 1e6))
}

/** Spec 000, Key Facts Detection: which kind of key fact an entry carries, or null. */
export function keyFactKind(content: string): string | null {
  if (/https?:\/\/\S+/i.test(content)) return 'URL'
  if (/\b(error|failed|exception)\b/i.test(content)) return 'error'
  if (/\b(selector|xpath)\b|\/\/[a-z*]+\[|(^|[\s'"(])[#.][a-z][\w-]*/i.test(content)) return 'selector'
  if (/\b(api|endpoint)\b|\/api\//i.test(content) || /\b(GET|POST|PUT|PATCH|DELETE)\s+\/\S*/.test(content)) {
    return 'API reference'
  }
  if (/\b(password|credentials?|api[ _-]?key|token|secret)\b/i.test(content)) return 'credential'
  if (/\b(step|phase)\s+\d+/i.test(content)) return 'step reference'
  return null
}

export function hasKeyFacts(content: string): boolean {
  return keyFactKind(content) !== null
}

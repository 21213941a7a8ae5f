import { isExplicitRememberRequest } from '../memory/remember.ts'
import { DEFAULT_IMPORTANCE_WEIGHTS, type ImportanceWeights } from './settings.ts'

/** What spec 002's scorer looks at. `kind: 'tool_result'` is its `memory.type === 'tool_result'`. */
export interface ImportanceInput {
  content: string
  kind?: 'message' | 'tool_result'
  /** When the memory was formed (or the turn said); the recency bonus counts from here. */
  timestamp: Date
  accessCount?: number
}

export interface ImportanceScore {
  importance: number
  /** Which signals added to the base, for the router's `reasons` and for debugging a ranking. */
  reasons: string[]
}

// Spec 002's phrases, matched on the lower-cased content with `includes` exactly as the spec does,
// so "I will" inside "I willingly…" counts too: the spec's behaviour, kept so scores are comparable.
const PROFILE_PHRASES = ['my name is', 'i prefer', 'remember that'] as const
const COMMITMENT_PHRASES = ['i will', "let's do", 'decided'] as const

/** The profile phrase a text says, if any ("my name is", "i prefer", "remember that"). */
export function profileSignal(text: string): string | undefined {
  const lower = text.toLowerCase()
  return PROFILE_PHRASES.find((phrase) => lower.includes(phrase))
}

const HOUR_MS = 3_600_000
const clamp01 = (value: number) => Math.min(1, Math.max(0, value))

/**
 * Spec 002's importance scorer, with the time taken from the injected `now` (core reads no clock).
 * A timestamp in the future (clock skew between a client and the server) counts as now: it must
 * not earn more than the full recency bonus.
 */
export function scoreImportance(
  input: ImportanceInput,
  now: Date,
  weights: ImportanceWeights = DEFAULT_IMPORTANCE_WEIGHTS,
): ImportanceScore {
  const content = input.content.toLowerCase()
  const reasons: string[] = []
  let score = weights.base
  const profile = profileSignal(content)
  if (profile) {
    score += weights.profileSignal
    reasons.push(`profile signal "${profile}"`)
  }
  const commitment = COMMITMENT_PHRASES.find((phrase) => content.includes(phrase))
  if (commitment) {
    score += weights.commitmentSignal
    reasons.push(`decision/commitment signal "${commitment}"`)
  }
  if (input.kind === 'tool_result') {
    score += weights.toolResult
    reasons.push('tool result')
  }
  const hoursAgo = Math.max(0, (now.getTime() - input.timestamp.getTime()) / HOUR_MS)
  const recency = Math.max(0, weights.recencyMax - (hoursAgo / 24) * weights.recencyDecayPerDay)
  if (recency > 0) reasons.push(`recency +${recency.toFixed(2)}`)
  score += recency
  const access = Math.min(weights.accessMax, (input.accessCount ?? 0) * weights.accessPerUse)
  if (access > 0) reasons.push(`accessed ${input.accessCount} times`)
  score += access
  return { importance: clamp01(score), reasons }
}

/**
 * The importance a memory formed from `sentence` starts with: an explicit request ("remember
 * that…", "don't forget…", "note that…") is `explicitRequest` (0.8, as `rememberThis`) whatever
 * the other signals say, so the two paths agree; anything else is spec 002's score.
 */
export function initialImportance(
  input: ImportanceInput,
  now: Date,
  weights: ImportanceWeights = DEFAULT_IMPORTANCE_WEIGHTS,
): ImportanceScore {
  if (isExplicitRememberRequest(input.content))
    return { importance: weights.explicitRequest, reasons: ['explicit request to remember'] }
  return scoreImportance(input, now, weights)
}

import type { MemoryCategory, MemoryEntryType } from '../memory/memory-item.ts'
import { interpretRememberThis, isExplicitRememberRequest } from '../memory/remember.ts'
import { initialImportance } from './importance.ts'
import {
  classifySentence,
  restoreElidedSubject,
  type SentenceKind,
  type SpeakerRole,
  stripOpeners,
  type Tier,
} from './patterns.ts'
import { DEFAULT_IMPORTANCE_WEIGHTS, type ImportanceWeights } from './settings.ts'

/**
 * Spec 002's memory router ("Input → Classify → Route"): one function, used by ingestion and exposed
 * to agents that route themselves, that says where a turn belongs:
 * - `working`: nothing to keep beyond the current context (questions, greetings, reactions);
 * - `episodic`: what happened or is planned in time (events, decisions, commitments, current work);
 * - `semantic`: durable knowledge about the user or their world (facts, preferences, skills,
 *   relationships, corrections of those).
 * A turn with several sentences is routed by its strongest one: an explicit request first, then the
 * highest confidence.
 */
export interface TurnInput {
  content: string
  role?: SpeakerRole
  timestamp: Date
  accessCount?: number
}

export interface ClassifyOptions {
  now: Date
  importanceWeights?: ImportanceWeights
  /** Sentences whose best family is below this route nowhere (working). */
  minConfidence?: number
}

export interface TurnClassification {
  tier: Tier
  category: MemoryCategory
  memoryType: MemoryEntryType
  importance: number
  reasons: string[]
}

export const DEFAULT_ROUTER_MIN_CONFIDENCE = 0.5
/** A turn that holds no memory still needs a type and category: it is context of the moment. */
const NOTHING_TO_KEEP = { tier: 'working', category: 'context', memoryType: 'fact' } as const

/** Splits a turn into sentences cheaply; the router must keep up with ingestion, so no NLP model here. */
export function roughSentences(text: string): string[] {
  return text
    .split(/(?<=[.!?])\s+(?=[A-Z"'(])|\n+/)
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence.length > 0)
}

export function classifyTurn(input: TurnInput, options: ClassifyOptions): TurnClassification {
  const weights = options.importanceWeights ?? DEFAULT_IMPORTANCE_WEIGHTS
  const minConfidence = options.minConfidence ?? DEFAULT_ROUTER_MIN_CONFIDENCE
  const role = input.role ?? 'user'
  const { importance, reasons } = initialImportance(
    {
      content: input.content,
      kind: role === 'tool' ? 'tool_result' : 'message',
      timestamp: input.timestamp,
      accessCount: input.accessCount,
    },
    options.now,
    weights,
  )
  let best: { kind: SentenceKind; explicit: boolean } | null = null
  for (const raw of roughSentences(input.content)) {
    const sentence = restoreElidedSubject(stripOpeners(raw))
    const explicit = role !== 'tool' && isExplicitRememberRequest(sentence)
    const kind = classifySentence(explicit ? interpretRememberThis(sentence).content : sentence, role)
    if (!kind) continue
    if (explicit) kind.confidence = Math.max(kind.confidence, 0.95)
    if (
      !best ||
      (explicit && !best.explicit) ||
      (explicit === best.explicit && kind.confidence > best.kind.confidence)
    )
      best = { kind, explicit }
  }
  if (!best || best.kind.confidence < minConfidence) {
    const why = best ? `weakest family only (${best.kind.family})` : 'no statement to keep'
    return { ...NOTHING_TO_KEEP, importance, reasons: [why, ...reasons] }
  }
  const { kind, explicit } = best
  return {
    tier: kind.tier,
    category: kind.category,
    memoryType: kind.memoryType,
    importance: explicit ? Math.max(importance, weights.explicitRequest) : importance,
    reasons: [
      ...(explicit ? ['explicit request to remember'] : []),
      `${kind.family} (confidence ${kind.confidence.toFixed(2)})`,
      ...reasons.filter((r) => r !== 'explicit request to remember'),
    ],
  }
}

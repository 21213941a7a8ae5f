import { z } from 'zod'
import { extractPreservedFacts } from '../compression/compressor.ts'
import { parseWith } from '../errors.ts'
import { contentWords } from '../retrieval/lexical.ts'
import { profileSignal } from './importance.ts'
import { roughSentences } from './router.ts'

/** Spec 002's strategies; `extractive` needs no model and is the offline default (issue 13 §3). */
export const SUMMARY_STRATEGIES = ['simple', 'hierarchical', 'extractive', 'map-reduce'] as const
export type SummaryStrategy = (typeof SUMMARY_STRATEGIES)[number]

/** Issue 13 §3's numbers: spec 003's debounce and retention, spec 002's token threshold. */
export const SummarySettingsSchema = z.object({
  summaryDebounceSeconds: z.number().int().min(10).max(3_600).default(60),
  summaryRetentionDays: z.number().int().min(1).max(365).default(7),
  /** A conversation this long is summarised without waiting for a pause (spec 002: 50,000). */
  summarizationThresholdTokens: z.number().int().min(1_000).max(10_000_000).default(50_000),
  strategy: z.enum(SUMMARY_STRATEGIES).default('extractive'),
  /** The size a summary is written to. */
  summaryMaxTokens: z.number().int().min(50).max(10_000).default(400),
})
export type SummarySettings = z.infer<typeof SummarySettingsSchema>
export const DEFAULT_SUMMARY_SETTINGS: SummarySettings = SummarySettingsSchema.parse({})

export function parseSummarySettings(input: unknown): SummarySettings {
  return parseWith(SummarySettingsSchema, input, 'summary')
}

export interface ConversationActivity {
  /** When Engram stored the conversation's newest turn. */
  lastTurnAt: Date
  /** When the conversation was last summarised, or null. */
  lastSummaryAt: Date | null
  /** Tokens of the turns not yet in a summary. */
  unsummarisedTokens: number
  /** The agent has since written to another conversation (spec 003: a session change triggers a summary). */
  switchedAway: boolean
}

export type SummaryTrigger = 'threshold' | 'switch' | 'debounce'

export interface SummaryDecision {
  due: boolean
  trigger: SummaryTrigger | null
  /** When it will be due if nothing else happens (the debounce), for the scheduler; null if nothing is pending. */
  dueAt: Date | null
}

/**
 * Whether a conversation's summary is due now (issue 13 §3): after `summaryDebounceSeconds`
 * without a new turn, on a switch to another conversation, or past the token threshold. Nothing is
 * due when every turn is already summarised. Pure: the scheduler asks again at `dueAt`.
 */
export function summaryDue(
  activity: ConversationActivity,
  now: Date,
  settings: SummarySettings = DEFAULT_SUMMARY_SETTINGS,
): SummaryDecision {
  const pending =
    activity.unsummarisedTokens > 0 &&
    (activity.lastSummaryAt === null || activity.lastSummaryAt.getTime() < activity.lastTurnAt.getTime())
  if (!pending) return { due: false, trigger: null, dueAt: null }
  const dueAt = new Date(activity.lastTurnAt.getTime() + settings.summaryDebounceSeconds * 1_000)
  if (activity.unsummarisedTokens >= settings.summarizationThresholdTokens)
    return { due: true, trigger: 'threshold', dueAt }
  if (activity.switchedAway) return { due: true, trigger: 'switch', dueAt }
  if (now.getTime() >= dueAt.getTime()) return { due: true, trigger: 'debounce', dueAt }
  return { due: false, trigger: null, dueAt }
}

/**
 * When a stored summary expires. Age counts from when Engram stored it (`storedAt`), never from a
 * caller-supplied message time: an import of last year's conversation must not expire at once.
 */
export function summaryExpiresAt(storedAt: Date, settings: SummarySettings = DEFAULT_SUMMARY_SETTINGS): Date {
  return new Date(storedAt.getTime() + settings.summaryRetentionDays * 86_400_000)
}

export interface SummaryTurn {
  speaker: string
  content: string
}

export interface ExtractiveSummaryOptions {
  maxTokens: number
  countTokens: (text: string) => number
}

/**
 * The extractive strategy (issue 13 §3): the preserved facts the compressor keeps (URLs, emails,
 * errors, numbers…) and the most central sentences, in the order they were said, within the
 * budget. A sentence's centrality is the sum of its word overlap (Jaccard of content words) with
 * every other sentence: what the conversation keeps coming back to. Deterministic; ties keep order.
 */
export function extractiveSummary(turns: readonly SummaryTurn[], options: ExtractiveSummaryOptions): string {
  const sentences = turns.flatMap((turn, turnIndex) =>
    roughSentences(turn.content).map((text) => ({
      text,
      speaker: turn.speaker,
      turnIndex,
      words: contentWords(text),
    })),
  )
  // Three content words tell a statement from chit-chat ("Thanks so much!"); a short statement of
  // who someone is or what they prefer ("My name is John.", "I prefer tea.") is kept at two.
  const informative = sentences.filter(
    (sentence) =>
      !sentence.text.endsWith('?') &&
      (sentence.words.size >= 3 || (sentence.words.size === 2 && profileSignal(sentence.text) !== undefined)),
  )
  const centrality = informative.map((sentence, i) => {
    let sum = 0
    for (const [j, other] of informative.entries()) if (i !== j) sum += jaccard(sentence.words, other.words)
    return sum
  })
  const facts = [...new Set(turns.flatMap((turn) => extractPreservedFacts(turn.content)))]
  const lines: string[] = []
  let used = 0
  // Preserved facts take at most a quarter of the budget: they are the compressor's, the rest is the gist.
  const factLine = facts.length > 0 ? `Key facts: ${facts.join(', ')}` : null
  const keepFacts = factLine !== null && options.countTokens(factLine) <= options.maxTokens / 4
  if (keepFacts) used += options.countTokens(factLine)
  const chosen = new Set<number>()
  const ranked = informative
    .map((_, i) => i)
    .sort((a, b) => (centrality[b] ?? 0) - (centrality[a] ?? 0) || a - b)
  for (const index of ranked) {
    const sentence = informative[index]
    if (!sentence) continue
    const cost = options.countTokens(`${sentence.speaker}: ${sentence.text}`)
    if (used + cost > options.maxTokens) continue
    used += cost
    chosen.add(index)
  }
  for (const [index, sentence] of informative.entries())
    if (chosen.has(index)) lines.push(`${sentence.speaker}: ${sentence.text}`)
  if (keepFacts) lines.push(factLine)
  return lines.join('\n')
}

function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 || b.size === 0) return 0
  let shared = 0
  for (const word of a) if (b.has(word)) shared++
  return shared / (a.size + b.size - shared)
}

import { z } from 'zod'
import { parseWith } from '../errors.ts'

/**
 * Spec 002's importance scorer, each number a setting with the spec's value as its default.
 * `explicitRequest` is issue 13's: "remember that…" becomes a memory of importance 0.8, the same
 * value `rememberThis` gives.
 */
export const ImportanceWeightsSchema = z.object({
  base: z.number().min(0).max(1).default(0.5),
  /** "my name is", "i prefer", "remember that": who the user is and what they asked to keep. */
  profileSignal: z.number().min(0).max(1).default(0.3),
  /** "i will", "let's do", "decided". */
  commitmentSignal: z.number().min(0).max(1).default(0.2),
  toolResult: z.number().min(0).max(1).default(0.1),
  /** The bonus of a brand-new memory; it shrinks by `recencyDecayPerDay` a day and stops at 0. */
  recencyMax: z.number().min(0).max(1).default(0.2),
  recencyDecayPerDay: z.number().min(0).max(1).default(0.1),
  accessPerUse: z.number().min(0).max(1).default(0.02),
  accessMax: z.number().min(0).max(1).default(0.1),
  explicitRequest: z.number().min(0).max(1).default(0.8),
})
export type ImportanceWeights = z.infer<typeof ImportanceWeightsSchema>
export const DEFAULT_IMPORTANCE_WEIGHTS: ImportanceWeights = ImportanceWeightsSchema.parse({})

/**
 * What the offline extractor keeps. `minConfidence` and `minContentWords` are what the bench's
 * cross-validation chose in both directions (docs/memory-formation.md).
 */
export const OfflineExtractorSettingsSchema = z.object({
  /** Candidates below this confidence are dropped: the precision/recall dial. */
  minConfidence: z.number().min(0).max(1).default(0.4),
  /**
   * Sentences with fewer content words (after stop words) carry no memory ("I know, right?"). This
   * bound is for the weak evidence (a bare first-person statement): chat is wordy, and its short
   * sentences are mostly reactions.
   */
  minContentWords: z.number().int().min(1).max(20).default(4),
  /**
   * The same bound for a sentence a pattern family names (confidence at or above
   * `namedFamilyConfidence`): "I prefer tea over coffee" has three content words and is a memory.
   */
  minContentWordsNamed: z.number().int().min(1).max(20).default(2),
  namedFamilyConfidence: z.number().min(0).max(1).default(0.6),
  /** Longer sentences are cut before matching: a pasted log is not a statement about the speaker. */
  maxSentenceChars: z.number().int().min(40).max(5_000).default(400),
  maxItemsPerTurn: z.number().int().min(1).max(50).default(6),
  /** Assistant turns say what the assistant thinks, not who the user is: off unless asked for. */
  extractFromAssistant: z.boolean().default(false),
  /** Whether sentences without a first-person subject (tool results, third-person facts) may yield memories. */
  keepThirdPerson: z.boolean().default(true),
  /**
   * Whether a memory's tags carry its turn's nouns that its own words lack (tags are in the
   * memories' full-text index): a question names what the turn said around the restated sentence.
   */
  turnNounTags: z.boolean().default(true),
})
export type OfflineExtractorSettings = z.infer<typeof OfflineExtractorSettingsSchema>
export const DEFAULT_OFFLINE_EXTRACTOR_SETTINGS: OfflineExtractorSettings =
  OfflineExtractorSettingsSchema.parse({})

export function parseOfflineExtractorSettings(input: unknown): OfflineExtractorSettings {
  return parseWith(OfflineExtractorSettingsSchema, input, 'extractor')
}

export function parseImportanceWeights(input: unknown): ImportanceWeights {
  return parseWith(ImportanceWeightsSchema, input, 'importance')
}

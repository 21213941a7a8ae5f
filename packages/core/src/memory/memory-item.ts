import { z } from 'zod'
import { parseWith, ValidationError } from '../errors.ts'

/** Spec 003's seven working-memory entry types: what a memory is, as opposed to its category. */
export const MEMORY_ENTRY_TYPES = [
  'fact',
  'preference',
  'decision',
  'correction',
  'commitment',
  'relationship',
  'skill',
] as const
export type MemoryEntryType = (typeof MEMORY_ENTRY_TYPES)[number]

/**
 * Spec 003's seven working-memory entry types, plus spec 001's `context` and
 * `past_conversation` (its `user_preference` is spec 003's `preference`).
 */
export const MEMORY_CATEGORIES = [...MEMORY_ENTRY_TYPES, 'context', 'past_conversation'] as const
export type MemoryCategory = (typeof MEMORY_CATEGORIES)[number]

/** Per-agent memory settings: spec 003's defaults and ranges, each configurable. */
export const MemorySettingsSchema = z.object({
  verificationEnabled: z.boolean().default(true),
  /** Word overlap at or above this is a near-duplicate and is not stored. */
  jaccardDedupThreshold: z.number().min(0).max(1).default(0.6),
  /** Lower bound of the open band (this, jaccardDedupThreshold) in which a same-category entry is superseded. */
  contradictionThreshold: z.number().min(0).max(1).default(0.3),
  semanticDedupThreshold: z.number().min(0).max(1).default(0.85),
  /** 0 = unlimited. */
  maxEntriesPerAgent: z.number().int().min(0).max(1_000_000).default(500),
  recallTopK: z.number().int().min(1).max(100).default(10),
  temporalDecayHalfLifeDays: z.number().min(1).max(365).default(30),
  mmrLambda: z.number().min(0).max(1).default(0.7),
  mmrFetchMultiplier: z.number().min(1).max(10).default(2),
  /**
   * How far back conversation chunks and summaries are searched; 0 = all time. Spec 003 says 30
   * days, but long-horizon questions (LoCoMo's span months) need the whole history by default.
   */
  conversationWindowDays: z.number().int().min(0).max(36_500).default(0),
})
export type MemorySettings = z.infer<typeof MemorySettingsSchema>
export const DEFAULT_MEMORY_SETTINGS: MemorySettings = MemorySettingsSchema.parse({})

/**
 * Parses settings, and checks that the contradiction band is not empty. The check lives here, not
 * in a schema refinement: zod refuses `.partial()` and `.pick()` on a refined object, and callers
 * build update inputs from the schema that way.
 */
export function parseMemorySettings(input: unknown): MemorySettings {
  const settings = parseWith(MemorySettingsSchema, input, 'settings')
  if (settings.contradictionThreshold >= settings.jaccardDedupThreshold) {
    throw new ValidationError([
      {
        field: 'settings.contradictionThreshold',
        message: `must be below jaccardDedupThreshold (${settings.jaccardDedupThreshold})`,
        limit: settings.jaccardDedupThreshold,
      },
    ])
  }
  return settings
}

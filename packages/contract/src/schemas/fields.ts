import { z } from 'zod'
import { AGENT_ID_PATTERN, CONVERSATION_ID_PATTERN, CONTRACT_LIMITS as L } from '../limits.ts'
import { ExtractorChoiceSchema, SummaryStrategySchema } from './enums.ts'

// ---------------------------------------------------------------------------------------------
// Field rules shared by several operations. Each message says the limit it checks, and the limit
// travels with the issue (params.limit) so a door can show it.

export const limitIssue = (limit: number | string) => ({ params: { limit } })

export const AgentIdSchema = z
  .string()
  .max(L.maxAgentIdChars)
  .regex(AGENT_ID_PATTERN, 'must be a lowercase slug: a-z, 0-9, "_" or "-", starting with a letter or digit')
export const ConversationIdSchema = z
  .string()
  .max(L.maxConversationIdChars)
  .regex(
    CONVERSATION_ID_PATTERN,
    'must start with a letter or digit and use only letters, digits and . _ : @ / - (no spaces)',
  )
export const IdSchema = z.string().min(1).max(64)
export const DateTimeSchema = z.iso.datetime({ offset: true })
export const unit = z.number().min(0).max(1)
export const pageSize = z.number().int().min(0).max(L.maxPageSize)
export const cursor = z.string().max(512)
export const speaker = z
  .string()
  .refine((s) => s.trim().length >= 1, { message: 'must not be blank', ...limitIssue(1) })
  .refine((s) => s.trim().length <= L.maxSpeakerChars, {
    message: `must be at most ${L.maxSpeakerChars} characters after trimming`,
    ...limitIssue(L.maxSpeakerChars),
  })

/** How deep a JSON value nests, with an explicit stack so hostile nesting cannot overflow. */
export function jsonDepth(value: unknown, stopAbove = Number.POSITIVE_INFINITY): number {
  let deepest = 0
  const stack: [unknown, number][] = [[value, 0]]
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number]
    if (node === null || typeof node !== 'object') continue
    const here = depth + 1
    if (here > deepest) deepest = here
    if (deepest > stopAbove) return stopAbove + 1
    for (const child of Array.isArray(node) ? node : Object.values(node as Record<string, unknown>))
      if (child !== null && typeof child === 'object') stack.push([child, here])
  }
  return deepest
}

/** A JSON object within the metadata limits: depth first, so the byte count never walks a bomb. */
export const MetadataSchema = z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
  if (jsonDepth(value, L.maxMetadataDepth) > L.maxMetadataDepth) {
    ctx.addIssue({
      code: 'custom',
      message: `must nest at most ${L.maxMetadataDepth} levels`,
      params: { limit: L.maxMetadataDepth },
    })
    return
  }
  const bytes = new TextEncoder().encode(JSON.stringify(value)).length
  if (bytes > L.maxMetadataBytes) {
    ctx.addIssue({
      code: 'custom',
      message: `must be at most ${L.maxMetadataBytes} bytes as JSON (got ${bytes})`,
      params: { limit: L.maxMetadataBytes },
    })
  }
})

/** An admin key names the agent to act for; an agent key may leave it out (its own agent). */
export const agent = { agentId: AgentIdSchema.optional() }

export const tags = z
  .array(
    z
      .string()
      .min(1)
      .max(L.maxTagChars)
      .regex(/^[^\s,]+$/, 'must be one word (no spaces or commas)'),
  )
  .max(L.maxTags)
export const memoryContent = z
  .string()
  .max(L.maxMemoryChars)
  .refine((s) => s.trim().length > 0, { message: 'must not be empty', ...limitIssue(1) })
export const userId = z.string().min(1).max(L.maxUserIdChars)
export const sourceId = z.string().min(1).max(L.maxSourceIdChars)
// Memory formation settings (issue 13 §5). The bounds are core's SummarySettingsSchema and
// ProfileSettingsSchema (the contract carries no runtime dependency on core; the engine's
// operations test checks the two agree), so a door refuses a bad value before the engine does.
export const summarySettingRules = {
  strategy: SummaryStrategySchema,
  summaryDebounceSeconds: z.number().int().min(10).max(3_600),
  summaryRetentionDays: z.number().int().min(1).max(365),
  summarizationThresholdTokens: z.number().int().min(1_000).max(10_000_000),
  summaryMaxTokens: z.number().int().min(50).max(10_000),
}
export const profileSettingRules = {
  profileRegenerateThreshold: z.number().int().min(1).max(100),
  profileMaxTokens: z.number().int().min(100).max(50_000),
}
/** A core model's name as the OpenAI-compatible endpoint takes it (the engine's MAX_MODEL_NAME_CHARS). */
export const modelName = z.string().trim().min(1).max(200)
export const extractionSettingRules = {
  extractor: ExtractorChoiceSchema,
  /** Null: the server's ENGRAM_LLM_MODEL. */
  model: modelName.nullable(),
}
export const nullishEach = <T extends Record<string, z.ZodType>>(rules: T) =>
  Object.fromEntries(Object.entries(rules).map(([key, rule]) => [key, rule.nullish()])) as {
    [K in keyof T]: z.ZodOptional<z.ZodNullable<T[K]>>
  }
export const SummarySettingsSchema = z.object(summarySettingRules)
export const ProfileSettingsSchema = z.object(profileSettingRules)
export const ExtractionSettingsSchema = z.object(extractionSettingRules)

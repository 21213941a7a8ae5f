import { z } from 'zod'

// Every size an agent can send is bounded: these are the defaults, each configurable. The API
// rejects anything past them with a ValidationError naming the field and the limit.
export const LimitsSchema = z.object({
  maxContentChars: z.number().int().min(1).max(10_000_000).default(100_000),
  maxMetadataBytes: z.number().int().min(2).max(1_048_576).default(16_384),
  // Nesting, not size, is what overflows recursive walkers: 3,000 levels fit in 6 KB.
  maxMetadataDepth: z.number().int().min(1).max(64).default(32),
  maxBatchMessages: z.number().int().min(1).max(10_000).default(500),
  maxSummaryChars: z.number().int().min(1).max(1_000_000).default(20_000),
  maxKnowledgeKeyChars: z.number().int().min(1).max(4_096).default(256),
  maxKnowledgeValueChars: z.number().int().min(1).max(1_000_000).default(10_000),
  maxVectorDimensions: z.number().int().min(1).max(16_384).default(4_096),
  maxPageSize: z.number().int().min(1).max(10_000).default(200),
  maxSearchLimit: z.number().int().min(1).max(10_000).default(100),
  maxTokenCount: z.number().int().min(1).max(100_000_000).default(10_000_000),
})
export type Limits = z.infer<typeof LimitsSchema>
export const DEFAULT_LIMITS: Limits = LimitsSchema.parse({})

/** The deepest JSON any JSON argument may nest, whatever the configured metadata depth. */
export const MAX_JSON_DEPTH = 64

/**
 * How deep a JSON value nests (a scalar is 0, `{}` and `[]` are 1), walked with an explicit stack so
 * hostile nesting cannot overflow the call stack. Stops early and returns `stopAbove + 1` once the
 * depth passes `stopAbove`: callers only need to know the limit was passed.
 */
export function jsonDepth(value: unknown, stopAbove = Number.POSITIVE_INFINITY): number {
  let deepest = 0
  const stack: [unknown, number][] = [[value, 0]]
  while (stack.length > 0) {
    const [node, depth] = stack.pop() as [unknown, number]
    if (node === null || typeof node !== 'object') continue
    const here = depth + 1
    if (here > deepest) deepest = here
    if (deepest > stopAbove) return stopAbove + 1
    const children = Array.isArray(node) ? node : Object.values(node as Record<string, unknown>)
    for (const child of children) if (child !== null && typeof child === 'object') stack.push([child, here])
  }
  return deepest
}

// Conversation ids come from agents' own systems, so they allow the usual id characters
// (uuid, slug, "user:42/chat-7") but no whitespace or control characters.
export const CONVERSATION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$/
export const MAX_CONVERSATION_ID_LENGTH = 128
// A speaker is a participant's name ("Caroline", "support-bot"), matched against queries and
// listed per agent: a name, not a paragraph.
export const MAX_SPEAKER_CHARS = 128
// Agent ids appear in keys, logs and URLs: a lowercase slug.
export const AGENT_ID_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/
export const MAX_AGENT_ID_LENGTH = 64

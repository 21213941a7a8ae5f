import { z } from 'zod'
import { CONVERSATION_ID_PATTERN } from '../limits.ts'

/**
 * Spec 002's L1 working memory, called the working context in Engram (spec 003's "working memory"
 * is the memory items' WORKING_MEMORY section): per agent, the messages of the current execution,
 * the active tool results, a scratchpad and their token count, held in an LRU in front of episodic
 * memory. Past the flush threshold it moves to the stored conversation. Every number of spec 002
 * is a default here and configurable (server-wide; see apps/api's ENGRAM_WORKING_CONTEXT_*).
 */
export const WorkingContextRulesSchema = z
  .object({
    /** Agents whose working context the LRU holds at most (spec 002: 1,000); the least recently used goes first. */
    maxAgents: z.number().int().min(1).max(1_000_000).default(1_000),
    /** The LRU's size by its size calculation (bytes of every held context; spec 002: 500 MB). */
    maxBytes: z
      .number()
      .int()
      .min(1_024)
      .max(64 * 1024 ** 3)
      .default(500_000_000),
    /** How long a working context lives after its last write (spec 002: 30 minutes), in ms. */
    ttlMs: z
      .number()
      .int()
      .min(1_000)
      .max(7 * 24 * 60 * 60 * 1000)
      .default(30 * 60 * 1000),
    /** Past this many tokens after an append the context flushes (spec 002: `tokenCount > 32_000`). */
    flushThresholdTokens: z.number().int().min(1).max(10_000_000).default(32_000),
    /** The conversation a flush stores into when the append named none. */
    defaultConversationId: z
      .string()
      .regex(CONVERSATION_ID_PATTERN, 'must be a conversation id')
      .default('working-context'),
    /** Messages one append may carry. */
    maxMessagesPerAppend: z.number().int().min(1).max(10_000).default(100),
    /** The scratchpad's length in characters. */
    maxScratchpadChars: z.number().int().min(1).max(10_000_000).default(50_000),
    /** One tool result's content in characters. */
    maxToolResultChars: z.number().int().min(1).max(10_000_000).default(100_000),
    /** Tool results held at once (a flush or a clear empties them). */
    maxToolResults: z.number().int().min(1).max(100_000).default(100),
    /** One agent's whole working context, in bytes of its size calculation. */
    maxContextBytes: z
      .number()
      .int()
      .min(1_024)
      .max(64 * 1024 ** 3)
      .default(10_000_000),
    /** Items one recentMemory call may ask for. */
    maxRecentLimit: z.number().int().min(1).max(10_000).default(100),
  })
  .superRefine((rules, ctx) => {
    // A context the LRU could never hold would be dropped the moment it was written.
    if (rules.maxContextBytes > rules.maxBytes) {
      ctx.addIssue({
        code: 'custom',
        path: ['maxContextBytes'],
        message: `must be at most maxBytes (${rules.maxBytes})`,
        params: { limit: rules.maxBytes },
      })
    }
  })
export type WorkingContextRules = z.infer<typeof WorkingContextRulesSchema>
export const DEFAULT_WORKING_CONTEXT_RULES: WorkingContextRules = WorkingContextRulesSchema.parse({})

/** A tool call's id as the model gave it ("call_abc123"). */
export const MAX_TOOL_CALL_ID_CHARS = 128
/** A tool's name ("search_docs"). */
export const MAX_TOOL_NAME_CHARS = 128
/** recentMemory's answer when no limit is given. */
export const DEFAULT_RECENT_MEMORY_LIMIT = 20

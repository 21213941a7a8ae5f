import { z } from 'zod'
import { CONTRACT_LIMITS as L } from '../limits.ts'
import { RoleSchema } from './enums.ts'
import { agent, ConversationIdSchema, DateTimeSchema, limitIssue } from './fields.ts'

// Spec 002's L1 working memory, the working context in Engram (issue 17), and recency retrieval
// (spec 002's strategy 1). One file for the family.

export const WorkingContextFlushReasonSchema = z.enum(['THRESHOLD', 'REQUEST'])
export const RecentMemorySourceSchema = z.enum(['WORKING_CONTEXT', 'L2', 'DATABASE'])

const named = (max: number) =>
  z
    .string()
    .max(max)
    .refine((s) => s.trim().length > 0, { message: 'must not be blank', ...limitIssue(1) })

export const WorkingMessageInputSchema = z.object({
  role: RoleSchema,
  content: z.string().min(1).max(L.maxContentChars),
  /** The participant or tool that said it (a chat API's `name`). */
  name: named(L.maxSpeakerChars).nullish(),
  /** The tool call a TOOL message answers. */
  toolCallId: named(L.maxToolCallIdChars).nullish(),
})

export const WorkingContextInputSchema = z.object({ ...agent })
export const AppendWorkingContextInputSchema = z.object({
  ...agent,
  messages: z.array(WorkingMessageInputSchema).min(1).max(L.maxWorkingMessagesPerAppend),
  /** Where a flush stores them; the server's default conversation ("working-context") when absent. */
  conversationId: ConversationIdSchema.nullish(),
})
export const SetWorkingScratchpadInputSchema = z.object({
  ...agent,
  scratchpad: z.string().max(L.maxScratchpadChars),
})
export const RecordToolResultInputSchema = z.object({
  ...agent,
  toolCallId: named(L.maxToolCallIdChars),
  name: named(L.maxToolNameChars),
  content: z.string().max(L.maxToolResultChars),
  isError: z.boolean().nullish(),
  conversationId: ConversationIdSchema.nullish(),
})
export const FlushWorkingContextInputSchema = z.object({ ...agent })
export const ClearWorkingContextInputSchema = z.object({ ...agent })
export const RecentMemoryInputSchema = z.object({
  ...agent,
  /** One conversation's; every conversation's when absent. */
  conversationId: ConversationIdSchema.nullish(),
  limit: z.number().int().min(1).max(L.maxRecentMemoryLimit).nullish(),
})

export const WorkingMessageSchema = z.object({
  id: z.string(),
  conversationId: z.string(),
  role: RoleSchema,
  content: z.string(),
  name: z.string().nullable(),
  toolCallId: z.string().nullable(),
  tokenCount: z.number().int(),
  at: DateTimeSchema,
})
export const WorkingToolResultSchema = z.object({
  toolCallId: z.string(),
  conversationId: z.string(),
  name: z.string(),
  content: z.string(),
  isError: z.boolean(),
  tokenCount: z.number().int(),
  at: DateTimeSchema,
})
export const WorkingContextSchema = z.object({
  agentId: z.string(),
  /** The conversation of the latest append. */
  conversationId: z.string().nullable(),
  messages: z.array(WorkingMessageSchema),
  toolResults: z.array(WorkingToolResultSchema),
  scratchpad: z.string(),
  /** Messages + tool results + scratchpad, by the server's tokenizer. */
  tokenCount: z.number().int(),
  /** Past this many tokens after an append, the context flushes into the stored conversation. */
  flushThresholdTokens: z.number().int(),
  updatedAt: DateTimeSchema.nullable(),
  expiresAt: DateTimeSchema.nullable(),
})
export const WorkingContextFlushSchema = z.object({
  reason: WorkingContextFlushReasonSchema,
  /** Messages stored, tool results included (as TOOL messages). */
  messages: z.number().int(),
  toolResults: z.number().int(),
  tokens: z.number().int(),
  conversationIds: z.array(z.string()),
})
export const WorkingContextChangeSchema = z.object({
  context: WorkingContextSchema,
  /** Set when the change flushed the context. */
  flush: WorkingContextFlushSchema.nullable(),
})
export const RecentMemoryItemSchema = z.object({
  id: z.string(),
  source: RecentMemorySourceSchema,
  conversationId: z.string(),
  role: RoleSchema,
  content: z.string(),
  name: z.string().nullable(),
  toolCallId: z.string().nullable(),
  tokenCount: z.number().int(),
  at: DateTimeSchema,
})

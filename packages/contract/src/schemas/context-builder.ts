import { z } from 'zod'
import { CONTRACT_LIMITS as L } from '../limits.ts'
import { unit } from './fields.ts'

// Spec 002's context builder (issue 17): memoryContext's buildContext option and the `built`
// prompt it answers with. One file for the family; memoryContext's input and output use them.

export const BuiltMessageRoleSchema = z.enum(['SYSTEM', 'USER', 'ASSISTANT'])
export const BuiltMessageKindSchema = z.enum(['INSTRUCTIONS', 'MEMORY', 'TURN', 'SUMMARY', 'INPUT'])

/** Spec 002's hybrid weights for one request; each left out keeps the server's. */
export const ContextBuilderWeightsInputSchema = z.object({
  recency: unit.optional(),
  similarity: unit.optional(),
  importance: unit.optional(),
})

export const BuildContextInputSchema = z.object({
  /** The model's window (default 128,000). */
  contextWindow: z.number().int().min(L.minContextWindowTokens).max(L.maxContextWindowTokens).optional(),
  /** The system prompt, the first message. */
  instructions: z.string().max(L.maxContentChars).optional(),
  /** Tools the model is given: 500 tokens are reserved for each. */
  toolCount: z.number().int().min(0).max(L.maxBuildToolCount).optional(),
  /** The user's message, the last one; memoryContext's query when left out. */
  currentInput: z.string().max(L.maxContentChars).optional(),
  /** Memories ranked before the budget decides (default 100). */
  candidateLimit: z.number().int().min(1).max(L.maxSearchLimit).optional(),
  weights: ContextBuilderWeightsInputSchema.optional(),
})

export const BuiltMessageSchema = z.object({
  role: BuiltMessageRoleSchema,
  content: z.string(),
  kind: BuiltMessageKindSchema,
  /** The memory or stored turn shown (memory:12, message:40); null for the others. */
  sourceId: z.string().nullable(),
  tokenCount: z.number().int(),
})
export const ContextBuilderBudgetSchema = z.object({
  total: z.number().int(),
  system: z.number().int(),
  tools: z.number().int(),
  output: z.number().int(),
  input: z.number().int(),
  memory: z.number().int(),
})
export const BuiltMemoriesSchema = z.object({
  included: z.array(z.string()),
  overflowed: z.array(z.string()),
  summarized: z.array(z.string()),
})
export const BuiltContextSchema = z.object({
  messages: z.array(BuiltMessageSchema),
  budget: ContextBuilderBudgetSchema,
  tokenCount: z.number().int(),
  memories: BuiltMemoriesSchema,
})

import { z } from 'zod'
import { ValidationError } from '../errors.ts'
import { MEMORY_CATEGORIES, MEMORY_ENTRY_TYPES } from '../memory/memory-item.ts'
import { parseJsonAnswer } from './chat-for-object.ts'

/**
 * The language-model port (issue 13 §1). Core only says what it needs from a model; the
 * OpenAI-compatible HTTP adapter, its retries and its circuit breaker live outside core.
 */
export type ChatRole = 'system' | 'user' | 'assistant'

export interface ChatMessage {
  role: ChatRole
  content: string
}

export interface ChatRequest {
  messages: ChatMessage[]
  /**
   * The model to ask for this call (an agent's own core model); the provider's configured one when
   * left out. One endpoint serves several models (a gateway, Ollama), so the adapter stays one.
   */
  model?: string
  /**
   * A JSON schema the answer must follow. Adapters send it as `response_format: json_schema` where
   * the server supports it and fall back to `json_object` or a prompt; core parses the answer with
   * zod either way, so a server that ignores the schema cannot slip a malformed answer through.
   */
  jsonSchema?: { name: string; schema: Record<string, unknown> }
  /** Lower is more repeatable; extraction wants 0. */
  temperature?: number
  maxTokens?: number
  signal?: AbortSignal
}

export interface ChatResponse {
  content: string
  model: string
  usage?: { promptTokens: number; completionTokens: number }
}

export interface LlmProvider {
  /** The model's name as recorded with what it produced (statistics, provenance). */
  readonly model: string
  /**
   * The adapter's circuit breaker, when it has one (open: calls fail at once until the cooldown
   * ends; half-open: one trial call is let through). Read for the processing statistics only.
   */
  readonly circuitState?: LlmCircuitState
  chat(request: ChatRequest): Promise<ChatResponse>
}

export type LlmCircuitState = 'closed' | 'open' | 'half-open'

/** Bounds of one extracted item: a model answer is data from outside and is held to limits. */
export const EXTRACTION_LIMITS = {
  maxItems: 50,
  maxContentChars: 1_000,
  maxTags: 10,
  maxTagChars: 40,
  maxSourceIds: 50,
} as const

const isoDate = z.iso.datetime({ offset: true })

export const ExtractedItemSchema = z.object({
  type: z.enum(MEMORY_ENTRY_TYPES),
  category: z.enum(MEMORY_CATEGORIES),
  content: z.string().trim().min(1).max(EXTRACTION_LIMITS.maxContentChars),
  confidence: z.number().min(0).max(1),
  tags: z
    .array(z.string().trim().min(1).max(EXTRACTION_LIMITS.maxTagChars))
    .max(EXTRACTION_LIMITS.maxTags)
    .default([]),
  validFrom: isoDate.nullable().default(null),
  validUntil: isoDate.nullable().default(null),
  /** The ids of the turns the item comes from, as given in the prompt: provenance, and the bench's recall. */
  sourceMessageIds: z.array(z.string().min(1)).min(1).max(EXTRACTION_LIMITS.maxSourceIds),
  /** The id of an existing memory (shown in the prompt) this item corrects or replaces. */
  supersedesMemoryId: z.string().min(1).nullable().default(null),
})
export type ExtractedItem = z.infer<typeof ExtractedItemSchema>

export const ExtractionAnswerSchema = z.object({
  items: z.array(ExtractedItemSchema).max(EXTRACTION_LIMITS.maxItems),
})
export type ExtractionAnswer = z.infer<typeof ExtractionAnswerSchema>

/** The schema sent with the request, derived from the zod schema so the two never drift apart. */
export const EXTRACTION_ANSWER_JSON_SCHEMA = {
  name: 'memory_extraction',
  schema: z.toJSONSchema(ExtractionAnswerSchema, { io: 'input' }) as Record<string, unknown>,
}

/**
 * Parses a model's answer: JSON (optionally fenced), then the zod schema. Throws a ValidationError
 * naming what is wrong, so the caller retries once and then records a failure; an answer is applied
 * whole or not at all. `allowedSourceIds`, when given, rejects items citing turns that were not in
 * the prompt: the model cannot attach a memory to a conversation it was not shown. An item may
 * supersede only a memory listed in `allowedMemoryIds` (the ones the prompt showed); without the
 * set, no item may supersede anything. Keys the schema does not know (an "agentId" a hostile turn
 * talked the model into) are dropped: who a memory belongs to is never the model's to say.
 */
export function parseExtractionAnswer(
  text: string,
  allowedSourceIds?: ReadonlySet<string>,
  allowedMemoryIds?: ReadonlySet<string>,
): ExtractionAnswer {
  const json = parseJsonAnswer(text)
  const parsed = ExtractionAnswerSchema.safeParse(json)
  if (!parsed.success) {
    throw new ValidationError(
      parsed.error.issues.map((issue) => ({
        field: ['answer', ...issue.path.map(String)].join('.'),
        message: issue.message,
      })),
    )
  }
  if (allowedSourceIds) {
    const foreign = parsed.data.items.flatMap((item, index) =>
      item.sourceMessageIds
        .filter((id) => !allowedSourceIds.has(id))
        .map((id) => ({
          field: `answer.items.${index}.sourceMessageIds`,
          message: `unknown message id ${id}`,
        })),
    )
    if (foreign.length > 0) throw new ValidationError(foreign)
  }
  const superseding = parsed.data.items.flatMap((item, index) =>
    item.supersedesMemoryId !== null && !allowedMemoryIds?.has(item.supersedesMemoryId)
      ? [
          {
            field: `answer.items.${index}.supersedesMemoryId`,
            message: `unknown memory id ${item.supersedesMemoryId}`,
          },
        ]
      : [],
  )
  if (superseding.length > 0) throw new ValidationError(superseding)
  return parsed.data
}

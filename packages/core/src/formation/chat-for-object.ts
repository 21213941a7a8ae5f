import type { z } from 'zod'
import { type FieldIssue, ValidationError, validationErrorFromZod } from '../errors.ts'
import type { ChatRequest, ChatResponse, LlmProvider } from './llm-provider.ts'

/** Models often wrap JSON in a markdown fence even when asked not to, sometimes after a sentence. */
const WHOLE_FENCE = /^\s*```(?:json)?\s*([\s\S]*?)\s*```\s*$/i
const FIRST_FENCE = /```(?:json)?\s*([\s\S]*?)\s*```/i

/** Parses a model's answer as JSON, unwrapping a ```json fence; a ValidationError on `answer` otherwise. */
export function parseJsonAnswer(text: string): unknown {
  const body = WHOLE_FENCE.exec(text)?.[1] ?? FIRST_FENCE.exec(text)?.[1] ?? text
  try {
    return JSON.parse(body)
  } catch {
    throw new ValidationError([{ field: 'answer', message: 'is not valid JSON' }])
  }
}

/**
 * A model's answers that did not validate, twice: the request is recorded as failed and nothing
 * of it is applied. `issues` name the fields of the last answer (`answer.items.0.type`, ...).
 */
export class ModelAnswerError extends Error {
  constructor(
    readonly schemaName: string,
    readonly issues: FieldIssue[],
    readonly attempts: number,
    /** The last answer as the model gave it, for the failure record (bounded by the caller). */
    readonly lastAnswer: string,
  ) {
    super(
      `${schemaName}: the model's answer did not validate after ${attempts} attempts: ` +
        issues.map((issue) => `${issue.field}: ${issue.message}`).join('; '),
    )
    this.name = 'ModelAnswerError'
  }
}

export interface ChatForObjectOptions<T> {
  /**
   * Checks the zod schema cannot express (ids the prompt did not show, ...): throws a
   * ValidationError, which is treated like a schema failure (one correction, then the error).
   */
  check?: (value: T) => void
}

export interface ChatObject<T> {
  value: T
  /** Every response the value took (two when a correction was needed): usage, model. */
  responses: ChatResponse[]
}

const CORRECTION_ATTEMPTS = 2

function issuesOf(error: unknown): FieldIssue[] {
  if (error instanceof ValidationError) return error.issues
  throw error
}

/**
 * Asks the model for an answer that validates against `schema` (the request's `jsonSchema`
 * should be derived from it). An answer that is not JSON or does not validate is answered with
 * one correction message naming what was wrong; a second failure throws ModelAnswerError. The
 * result is the whole parsed value or nothing: a half-valid answer is never returned in part.
 * Provider failures (timeouts, an open circuit) pass through untouched: retrying them is the
 * provider's business.
 */
export async function chatForObject<S extends z.ZodType>(
  provider: LlmProvider,
  request: ChatRequest,
  schema: S,
  options: ChatForObjectOptions<z.infer<S>> = {},
): Promise<ChatObject<z.infer<S>>> {
  const schemaName = request.jsonSchema?.name ?? 'answer'
  const responses: ChatResponse[] = []
  let messages = request.messages
  let issues: FieldIssue[] = []
  for (let attempt = 1; attempt <= CORRECTION_ATTEMPTS; attempt++) {
    const response = await provider.chat({ ...request, messages })
    responses.push(response)
    try {
      const parsed = schema.safeParse(parseJsonAnswer(response.content))
      if (!parsed.success) throw validationErrorFromZod(parsed.error, 'answer')
      options.check?.(parsed.data)
      return { value: parsed.data, responses }
    } catch (error) {
      issues = issuesOf(error)
    }
    // The model sees its own answer and what was wrong with it, which fixes most slips at once.
    messages = [
      ...request.messages,
      { role: 'assistant', content: response.content },
      {
        role: 'user',
        content:
          `That answer is invalid: ${issues.map((issue) => `${issue.field} ${issue.message}`).join('; ')}. ` +
          'Reply again with only the corrected JSON object, following the schema exactly.',
      },
    ]
  }
  throw new ModelAnswerError(schemaName, issues, CORRECTION_ATTEMPTS, responses.at(-1)?.content ?? '')
}

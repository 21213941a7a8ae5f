import {
  type ChatMessage,
  type ChatRequest,
  type ChatResponse,
  type Clock,
  type LlmProvider,
  parseWith,
} from '@engram/core'
import pLimit from 'p-limit'
import { z } from 'zod'
import {
  HttpStatusError,
  OpenAiServiceConfigSchema,
  openAiEndpoint,
  openAiHeaders,
  postJson,
} from './openai-http.ts'
import { type CircuitState, createResilience, ServiceError, systemTimerClock } from './resilience.ts'

export const DEFAULT_LLM_MAX_CONCURRENCY = 4
export const MAX_LLM_MAX_CONCURRENCY = 64

/**
 * How a JSON schema reaches the model, best first. Servers differ: OpenAI and recent vLLM/Ollama
 * take `json_schema`; older ones know only `json_object`; some take no `response_format` at all.
 * The schema is always checked again by the caller (core's chatForObject), whichever way is used.
 */
export const STRUCTURED_OUTPUT_MODES = ['json_schema', 'json_object', 'prompt'] as const
export type StructuredOutputMode = (typeof STRUCTURED_OUTPUT_MODES)[number]

export const OpenAiLlmConfigSchema = OpenAiServiceConfigSchema.extend({
  maxConcurrency: z.number().int().min(1).max(MAX_LLM_MAX_CONCURRENCY).default(DEFAULT_LLM_MAX_CONCURRENCY),
})

export interface OpenAiLlmOptions {
  /** Up to and including the API version (`/chat/completions` is appended); a bare origin gets `/v1`. */
  baseUrl: string
  model: string
  apiKey?: string
  /** Per attempt (spec 003: 60 s). */
  timeoutMs?: number
  /** Requests in flight at once; more wait their turn (a local server has one model to share). */
  maxConcurrency?: number
  retryDelaysMs?: number[]
  /** Time for the breaker; with `setTimer` also for retry delays and attempt timeouts (tests). */
  clock?: Clock
  fetch?: typeof fetch
}

export interface OpenAiLlm extends LlmProvider {
  /** How schemas are sent now: starts at json_schema and steps down once per refusal. */
  readonly structuredOutput: StructuredOutputMode
  readonly circuitState: CircuitState
}

/** What a request's messages and response_format become in one mode. */
function structuredRequest(
  request: ChatRequest,
  mode: StructuredOutputMode,
): { messages: ChatMessage[]; responseFormat?: unknown } {
  const schema = request.jsonSchema
  if (!schema) return { messages: request.messages }
  if (mode === 'json_schema') {
    return {
      messages: request.messages,
      responseFormat: {
        type: 'json_schema',
        json_schema: { name: schema.name, schema: schema.schema, strict: true },
      },
    }
  }
  // Without server-side enforcement the schema goes into the prompt. json_object mode also needs
  // the word "JSON" in the messages (OpenAI refuses the request otherwise): this says it.
  const instruction =
    `Answer with one JSON object only, no prose and no markdown, following this JSON schema ` +
    `("${schema.name}"):\n${JSON.stringify(schema.schema)}`
  const [first, ...rest] = request.messages
  const messages: ChatMessage[] =
    first?.role === 'system'
      ? [{ role: 'system', content: `${first.content}\n\n${instruction}` }, ...rest]
      : [{ role: 'system', content: instruction }, ...request.messages]
  return mode === 'json_object' ? { messages, responseFormat: { type: 'json_object' } } : { messages }
}

/**
 * A server that does not support a response_format says so with a 4xx naming it (OpenAI, vLLM,
 * LM Studio: 400 "response_format ... is not supported"; some gateways 422). Any other 4xx is
 * the request's own fault and is not retried in another mode.
 */
function refusesResponseFormat(error: unknown): boolean {
  if (!(error instanceof HttpStatusError) || error.retryable) return false
  if (error.status < 400 || error.status >= 500) return false
  return /response_format|json_schema|json_object|structured output|grammar/i.test(error.body)
}

interface CompletionPayload {
  model?: unknown
  choices?: { message?: { content?: unknown }; finish_reason?: unknown }[]
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown }
}

/**
 * An LlmProvider for any server that speaks OpenAI's `POST /chat/completions`: OpenAI, Ollama,
 * vLLM, LM Studio, llama.cpp, gateways. Every call waits for one of `maxConcurrency` slots, then
 * goes through the shared retry loop and circuit breaker; the slot is held through its retries,
 * so a struggling server is not sent more work while it recovers.
 */
export function createOpenAiCompatibleLlm(options: OpenAiLlmOptions): OpenAiLlm {
  const { fetch: fetchImpl = fetch, clock = systemTimerClock, ...tunables } = options
  const config = parseWith(OpenAiLlmConfigSchema, tunables, 'llm')
  const url = openAiEndpoint(config.baseUrl, 'chat/completions')
  const headers = openAiHeaders(config.apiKey)
  const resilience = createResilience({
    service: `language model ${url} (${config.model})`,
    timeoutMs: config.timeoutMs,
    retryDelaysMs: config.retryDelaysMs,
    clock,
  })
  const slots = pLimit(config.maxConcurrency)
  // Learnt once per provider: after a refusal, later calls go straight to the mode that works.
  let mode: StructuredOutputMode = 'json_schema'

  const describe = (problem: string) => `${config.model}: ${url} ${problem}`

  const invalid = (problem: string) =>
    new ServiceError(describe(`answered with an invalid chat completion: ${problem}`), { retryable: false })

  const parseCompletion = (payload: unknown, asked: string): ChatResponse => {
    const completion = (payload ?? {}) as CompletionPayload
    const choice = Array.isArray(completion.choices) ? completion.choices[0] : undefined
    if (!choice) throw invalid('no "choices"')
    const content = choice.message?.content
    if (typeof content !== 'string') throw invalid('the first choice has no text content')
    const response: ChatResponse = {
      content,
      model: typeof completion.model === 'string' && completion.model ? completion.model : asked,
    }
    const promptTokens = completion.usage?.prompt_tokens
    const completionTokens = completion.usage?.completion_tokens
    if (typeof promptTokens === 'number' && typeof completionTokens === 'number') {
      response.usage = { promptTokens, completionTokens }
    }
    return response
  }

  const attempt = async (request: ChatRequest, using: StructuredOutputMode, signal: AbortSignal) => {
    const { messages, responseFormat } = structuredRequest(request, using)
    const model = request.model ?? config.model
    const body: Record<string, unknown> = { model, messages, stream: false }
    if (responseFormat) body.response_format = responseFormat
    if (request.temperature !== undefined) body.temperature = request.temperature
    if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens
    // The caller may give up (a shutdown, a cancelled job) as well as the attempt's timeout.
    const both = request.signal ? AbortSignal.any([signal, request.signal]) : signal
    return parseCompletion(
      await postJson({ url, headers, body, signal: both, fetch: fetchImpl, describe, clock }),
      model,
    )
  }

  const chat = async (request: ChatRequest): Promise<ChatResponse> => {
    request.signal?.throwIfAborted()
    for (;;) {
      const using = mode
      try {
        return await resilience.run((signal) => attempt(request, using, signal))
      } catch (error) {
        const next = STRUCTURED_OUTPUT_MODES[STRUCTURED_OUTPUT_MODES.indexOf(using) + 1]
        if (!request.jsonSchema || !next || !refusesResponseFormat(error)) throw error
        // Another call may already have stepped down further; never step back up.
        if (STRUCTURED_OUTPUT_MODES.indexOf(mode) < STRUCTURED_OUTPUT_MODES.indexOf(next)) mode = next
      }
    }
  }

  return {
    model: config.model,
    get structuredOutput() {
      return mode
    },
    get circuitState() {
      return resilience.breaker.state
    },
    chat(request) {
      const call = slots(() => chat(request))
      const signal = request.signal
      if (!signal) return call
      // A caller that gives up while waiting for a slot hears so at once, not when a slot frees
      // (the queued call then starts, sees the abort and sends nothing).
      return new Promise<ChatResponse>((resolve, reject) => {
        const abort = () => reject(signal.reason)
        signal.addEventListener('abort', abort, { once: true })
        call.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort))
      })
    },
  }
}

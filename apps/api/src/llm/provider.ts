import type { Clock } from '@engram/core'
import { createOpenAiCompatibleLlm, type OpenAiLlm } from '@engram/providers'
import type { Env } from '../env.ts'

export type LlmEnv = Pick<
  Env,
  | 'ENGRAM_LLM_URL'
  | 'ENGRAM_LLM_MODEL'
  | 'ENGRAM_LLM_API_KEY'
  | 'ENGRAM_LLM_TIMEOUT_MS'
  | 'ENGRAM_LLM_MAX_CONCURRENCY'
>

export class LlmConfigError extends Error {
  constructor(variable: keyof LlmEnv, problem: string) {
    super(`Invalid configuration:\n  ${variable}: ${problem}`)
    this.name = 'LlmConfigError'
  }
}

/**
 * The language model memory formation may use, or null: with no ENGRAM_LLM_URL, Engram forms
 * memories offline and reaches no model. Nothing is sent at start-up (a chat call costs tokens);
 * a server that is down shows as failed calls and an open circuit, and formation falls back to
 * the offline extractor meanwhile.
 */
export function createLlmFromEnv(
  env: LlmEnv,
  options: { clock?: Clock; fetch?: typeof fetch } = {},
): OpenAiLlm | null {
  if (!env.ENGRAM_LLM_URL) {
    // loadEnv already refuses a model without a URL; a hand-built env object gets the same message.
    if (env.ENGRAM_LLM_MODEL)
      throw new LlmConfigError('ENGRAM_LLM_URL', 'is required when ENGRAM_LLM_MODEL is set')
    return null
  }
  if (!env.ENGRAM_LLM_MODEL)
    throw new LlmConfigError('ENGRAM_LLM_MODEL', 'is required when ENGRAM_LLM_URL is set')
  return createOpenAiCompatibleLlm({
    baseUrl: env.ENGRAM_LLM_URL,
    model: env.ENGRAM_LLM_MODEL,
    timeoutMs: env.ENGRAM_LLM_TIMEOUT_MS,
    maxConcurrency: env.ENGRAM_LLM_MAX_CONCURRENCY,
    ...(env.ENGRAM_LLM_API_KEY ? { apiKey: env.ENGRAM_LLM_API_KEY } : {}),
    ...options,
  })
}

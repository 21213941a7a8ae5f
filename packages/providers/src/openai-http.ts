import type { Clock } from '@engram/core'
import { z } from 'zod'
import {
  DEFAULT_ATTEMPT_TIMEOUT_MS,
  DEFAULT_RETRY_DELAYS_MS,
  isRetryable,
  isRetryableStatus,
  parseRetryAfter,
  ServiceError,
} from './resilience.ts'

/** Servers quote request bodies back in errors; a few hundred characters say what went wrong. */
const ERROR_BODY_CHARS = 300

/** What every OpenAI-compatible client is configured with; each adds its own fields. */
export const OpenAiServiceConfigSchema = z.object({
  baseUrl: z.url({
    protocol: /^https?$/,
    message: 'must be an http(s) URL such as http://127.0.0.1:11434/v1',
  }),
  model: z.string().min(1),
  apiKey: z.string().min(1).optional(),
  /** Per attempt. */
  timeoutMs: z.number().int().min(1).max(600_000).default(DEFAULT_ATTEMPT_TIMEOUT_MS),
  retryDelaysMs: z
    .array(z.number().int().min(0).max(600_000))
    .max(10)
    .default([...DEFAULT_RETRY_DELAYS_MS]),
})

/**
 * The URL of one resource of an OpenAI-compatible API. A base URL with a path is taken as given
 * (`http://127.0.0.1:11434/v1`, `https://gateway.example/openai/v1`); a bare origin
 * (`http://127.0.0.1:11434`) gets `/v1`, where OpenAI, Ollama, vLLM, LM Studio and llama.cpp
 * all serve it.
 */
export function openAiEndpoint(baseUrl: string, resource: string): string {
  const url = new URL(baseUrl)
  const path = url.pathname.replace(/\/+$/, '')
  url.pathname = `${path || '/v1'}/${resource.replace(/^\/+/, '')}`
  return url.toString()
}

export function openAiHeaders(apiKey: string | undefined): Record<string, string> {
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' }
  if (apiKey) headers.authorization = `Bearer ${apiKey}`
  return headers
}

/** An answer with an error status; `body` is the start of what the server said (why it refused). */
export class HttpStatusError extends ServiceError {
  constructor(
    message: string,
    readonly status: number,
    readonly body: string,
    retryAfterMs: number | undefined,
  ) {
    super(message, {
      retryable: isRetryableStatus(status),
      status,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    })
    this.name = 'HttpStatusError'
  }
}

export interface JsonPost {
  url: string
  headers: Record<string, string>
  body: unknown
  signal: AbortSignal
  fetch: typeof fetch
  /** Prefixes every error message: which service and model failed. */
  describe: (problem: string) => string
  /** Reads Retry-After dates. */
  clock: Clock
}

/**
 * One POST of JSON, answered with JSON, with every failure turned into a ServiceError that says
 * whether trying again could help: the network (retryable), the status (408/429/5xx retryable,
 * with the server's Retry-After), or an answer cut off or not JSON.
 */
export async function postJson(post: JsonPost): Promise<unknown> {
  const { signal, describe } = post
  let response: Response
  try {
    response = await post.fetch(post.url, {
      method: 'POST',
      headers: post.headers,
      body: JSON.stringify(post.body),
      signal,
    })
  } catch (error) {
    if (signal.aborted) throw signal.reason
    const cause = (error as { cause?: { code?: string; message?: string } }).cause
    throw new ServiceError(
      describe(`is unreachable: ${cause?.code ?? cause?.message ?? (error as Error).message}`),
      { retryable: isRetryable(error), cause: error },
    )
  }
  if (!response.ok) {
    const text = (await response.text().catch(() => '')).slice(0, ERROR_BODY_CHARS)
    throw new HttpStatusError(
      describe(`answered HTTP ${response.status} ${response.statusText}${text ? `: ${text}` : ''}`),
      response.status,
      text,
      parseRetryAfter(response.headers.get('retry-after'), post.clock.now()),
    )
  }
  let raw: string
  try {
    raw = await response.text()
  } catch (error) {
    if (signal.aborted) throw signal.reason
    // The connection died mid-answer (a server restart, a proxy timeout): worth another try.
    throw new ServiceError(describe(`dropped the connection mid-answer: ${(error as Error).message}`), {
      retryable: isRetryable(error),
      cause: error,
    })
  }
  try {
    return JSON.parse(raw)
  } catch (error) {
    throw new ServiceError(describe('answered with a body that is not JSON'), {
      retryable: false,
      cause: error,
    })
  }
}

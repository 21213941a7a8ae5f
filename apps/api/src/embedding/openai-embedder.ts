import { type Clock, type Embedder, parseWith } from '@engram/core'
import {
  createResilience,
  OpenAiServiceConfigSchema,
  openAiEndpoint,
  openAiHeaders,
  postJson,
  ServiceError,
  systemTimerClock,
} from '@engram/providers'
import { z } from 'zod'

export const DEFAULT_EMBEDDING_BATCH_SIZE = 100
export const MAX_EMBEDDING_DIMENSIONS = 16_384
export const MAX_EMBEDDING_BATCH_SIZE = 2_048

const DIMENSION_PROBE_TEXT = 'dimension probe'

export const OpenAIEmbedderConfigSchema = OpenAiServiceConfigSchema.extend({
  dimensions: z.number().int().min(1).max(MAX_EMBEDDING_DIMENSIONS).optional(),
  batchSize: z.number().int().min(1).max(MAX_EMBEDDING_BATCH_SIZE).default(DEFAULT_EMBEDDING_BATCH_SIZE),
})

export interface OpenAIEmbedderOptions {
  /**
   * Up to and including the API version, e.g. http://127.0.0.1:11434/v1 (`/embeddings` is
   * appended); a bare origin such as http://127.0.0.1:11434 gets `/v1`.
   */
  baseUrl: string
  model: string
  apiKey?: string
  /** Sent to the server (models that can shorten their vectors); learnt from a probe call when unset. */
  dimensions?: number
  batchSize?: number
  timeoutMs?: number
  retryDelaysMs?: number[]
  fetch?: typeof fetch
  sleep?: (ms: number) => Promise<void>
  clock?: Clock
}

interface EmbeddingItem {
  index: number
  embedding: number[]
}

/**
 * An embedder for any server that speaks OpenAI's `POST /embeddings`: OpenAI, Ollama, vLLM,
 * LM Studio, llama.cpp, TEI. Each batch is one request; calls go through the shared retry loop
 * and circuit breaker. Without configured dimensions, one probe call at creation learns them, so
 * a server that is down or misconfigured is reported at start-up, not at the first search.
 */
export async function createOpenAIEmbedder(options: OpenAIEmbedderOptions): Promise<Embedder> {
  const { fetch: fetchImpl = fetch, sleep, clock, ...tunables } = options
  const config = parseWith(OpenAIEmbedderConfigSchema, tunables, 'embedder')
  const url = openAiEndpoint(config.baseUrl, 'embeddings')
  const model = `openai:${config.model}`
  const resilience = createResilience({
    service: `embedding service ${url} (${config.model})`,
    timeoutMs: config.timeoutMs,
    retryDelaysMs: config.retryDelaysMs,
    ...(clock ? { clock } : {}),
    ...(sleep ? { sleep } : {}),
  })
  const headers = openAiHeaders(config.apiKey)
  // Retry-After may be a date, read on the same clock as the breaker's cooldown.
  const timeSource = clock ?? systemTimerClock

  const describe = (problem: string) => `${model}: ${url} ${problem}`

  const requestBatch = async (
    input: readonly string[],
    expectedDimensions: number | undefined,
    signal: AbortSignal,
  ): Promise<Float32Array[]> => {
    const body: Record<string, unknown> = { model: config.model, input }
    if (config.dimensions !== undefined) body.dimensions = config.dimensions
    const payload = await postJson({
      url,
      headers,
      body,
      signal,
      fetch: fetchImpl,
      describe,
      clock: timeSource,
    })
    return parseEmbeddings(payload, input.length, expectedDimensions)
  }

  /** A malformed answer is the server's or the configuration's fault; retrying cannot fix it. */
  const parseEmbeddings = (
    payload: unknown,
    expectedCount: number,
    expectedDimensions: number | undefined,
  ): Float32Array[] => {
    const invalid = (problem: string) =>
      new ServiceError(describe(`answered with an invalid embeddings response: ${problem}`), {
        retryable: false,
      })
    const data = (payload as { data?: unknown } | null)?.data
    if (!Array.isArray(data)) throw invalid('no "data" array')
    if (data.length !== expectedCount) throw invalid(`${data.length} embeddings for ${expectedCount} inputs`)
    const vectors: (Float32Array | undefined)[] = new Array(expectedCount)
    data.forEach((item: Partial<EmbeddingItem>, position) => {
      // Servers may answer out of order; `index` says which input a vector belongs to.
      const index = item?.index ?? position
      if (!Number.isInteger(index) || index < 0 || index >= expectedCount) {
        throw invalid(`index ${String(index)} is out of range 0..${expectedCount - 1}`)
      }
      if (vectors[index]) throw invalid(`index ${index} appears twice`)
      const embedding = item?.embedding
      if (!Array.isArray(embedding)) throw invalid(`item ${index} has no "embedding" array`)
      const dimensions = expectedDimensions ?? (vectors.find(Boolean)?.length || embedding.length)
      if (embedding.length === 0) throw invalid(`item ${index} is an empty vector`)
      if (embedding.length !== dimensions) {
        throw invalid(`item ${index} has ${embedding.length} dimensions, expected ${dimensions}`)
      }
      const vector = new Float32Array(embedding.length)
      for (let i = 0; i < embedding.length; i++) {
        const value = embedding[i]
        if (typeof value !== 'number' || !Number.isFinite(value)) {
          throw invalid(`item ${index} has a non-finite value at position ${i}`)
        }
        vector[i] = value
      }
      vectors[index] = vector
    })
    return vectors as Float32Array[]
  }

  const embedBatches = async (texts: readonly string[], dimensions: number | undefined) => {
    const out: Float32Array[] = []
    // One batch at a time: a local server has one model to share, and a hosted one rate-limits.
    for (let start = 0; start < texts.length; start += config.batchSize) {
      const batch = texts.slice(start, start + config.batchSize)
      out.push(...(await resilience.run((signal) => requestBatch(batch, dimensions, signal))))
    }
    return out
  }

  const dimensions =
    config.dimensions ?? ((await embedBatches([DIMENSION_PROBE_TEXT], undefined))[0] as Float32Array).length

  return {
    model,
    dimensions,
    embed: (texts) => embedBatches(texts, dimensions),
  }
}

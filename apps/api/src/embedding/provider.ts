import type { Embedder } from '@engram/core'
import type { Env } from '../env.ts'
import { createOpenAIEmbedder } from './openai-embedder.ts'
import { createTransformersEmbedder } from './transformers-embedder.ts'

export type EmbeddingEnv = Pick<
  Env,
  | 'ENGRAM_EMBEDDER'
  | 'ENGRAM_EMBEDDING_URL'
  | 'ENGRAM_EMBEDDING_MODEL'
  | 'ENGRAM_EMBEDDING_API_KEY'
  | 'ENGRAM_EMBEDDING_DIMENSIONS'
  | 'ENGRAM_EMBEDDING_BATCH_SIZE'
  | 'ENGRAM_EMBEDDING_TIMEOUT_MS'
  | 'ENGRAM_EMBEDDING_MODEL_PATH'
  | 'ENGRAM_EMBEDDING_ALLOW_REMOTE'
>

export class EmbeddingConfigError extends Error {
  constructor(variable: keyof EmbeddingEnv, problem: string) {
    super(`Invalid configuration:\n  ${variable}: ${problem}`)
    this.name = 'EmbeddingConfigError'
  }
}

/**
 * Picks the embedder named by ENGRAM_EMBEDDER. `hashing` (the default) needs no model and no
 * network, so it is the caller's own embedder (`fallback`); the others are created here and
 * reach their service or model once before returning, so a bad setting fails at start-up.
 */
export async function createEmbedderFromEnv(env: EmbeddingEnv, fallback: () => Embedder): Promise<Embedder> {
  switch (env.ENGRAM_EMBEDDER) {
    case 'hashing':
      return fallback()
    case 'openai': {
      // loadEnv already refuses these; a hand-built env object gets the same message.
      if (!env.ENGRAM_EMBEDDING_URL) throw new EmbeddingConfigError('ENGRAM_EMBEDDING_URL', 'is required')
      if (!env.ENGRAM_EMBEDDING_MODEL) throw new EmbeddingConfigError('ENGRAM_EMBEDDING_MODEL', 'is required')
      return createOpenAIEmbedder({
        baseUrl: env.ENGRAM_EMBEDDING_URL,
        model: env.ENGRAM_EMBEDDING_MODEL,
        batchSize: env.ENGRAM_EMBEDDING_BATCH_SIZE,
        timeoutMs: env.ENGRAM_EMBEDDING_TIMEOUT_MS,
        ...(env.ENGRAM_EMBEDDING_API_KEY ? { apiKey: env.ENGRAM_EMBEDDING_API_KEY } : {}),
        ...(env.ENGRAM_EMBEDDING_DIMENSIONS ? { dimensions: env.ENGRAM_EMBEDDING_DIMENSIONS } : {}),
      })
    }
    case 'transformers': {
      if (!env.ENGRAM_EMBEDDING_MODEL) throw new EmbeddingConfigError('ENGRAM_EMBEDDING_MODEL', 'is required')
      const embedder = await createTransformersEmbedder({
        modelPath: env.ENGRAM_EMBEDDING_MODEL_PATH,
        modelId: env.ENGRAM_EMBEDDING_MODEL,
        allowRemote: env.ENGRAM_EMBEDDING_ALLOW_REMOTE,
        batchSize: env.ENGRAM_EMBEDDING_BATCH_SIZE,
      })
      // A local model's width is fixed; a configured width that differs is a mistake worth stopping on.
      const expected = env.ENGRAM_EMBEDDING_DIMENSIONS
      if (expected !== undefined && expected !== embedder.dimensions) {
        throw new EmbeddingConfigError(
          'ENGRAM_EMBEDDING_DIMENSIONS',
          `is ${expected}, but ${env.ENGRAM_EMBEDDING_MODEL} produces ${embedder.dimensions}-dimensional vectors`,
        )
      }
      return embedder
    }
  }
}

import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createHashingEmbedder, type Embedder } from '@engram/core'
import {
  type EmbeddingServer,
  embeddingsReply,
  startEmbeddingServer,
  vectorFor,
} from '@engram/providers/testing'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { TINY_MODEL_HIDDEN_SIZE, writeTinyModel } from '../../test/fixtures/tiny-model.ts'
import { loadEnv } from '../env.ts'
import { createEmbedderFromEnv } from './provider.ts'

describe('createEmbedderFromEnv', () => {
  let server: EmbeddingServer | undefined
  let modelPath: string
  beforeAll(() => {
    modelPath = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-provider-models-'))
    writeTinyModel(modelPath, 'engram/tiny-bert')
  })
  afterEach(async () => {
    await server?.close()
    server = undefined
  })
  afterAll(() => fs.rmSync(modelPath, { recursive: true, force: true }))

  const unused = (): Embedder => {
    throw new Error('the fallback must not be used')
  }

  it('returns the fallback for the default (hashing) embedder', async () => {
    const hashing = createHashingEmbedder()
    const fallback = vi.fn(() => hashing)
    expect(await createEmbedderFromEnv(loadEnv({}), fallback)).toBe(hashing)
    expect(fallback).toHaveBeenCalledTimes(1)
  })

  it('builds a working OpenAI-compatible embedder from the environment', async () => {
    const embeddingServer = await startEmbeddingServer((request) =>
      embeddingsReply(request.body.input ?? [], 12),
    )
    server = embeddingServer
    const env = loadEnv({
      ENGRAM_EMBEDDER: 'openai',
      ENGRAM_EMBEDDING_URL: embeddingServer.baseUrl,
      ENGRAM_EMBEDDING_MODEL: 'nomic-embed-text',
      ENGRAM_EMBEDDING_API_KEY: 'sk-local',
      ENGRAM_EMBEDDING_BATCH_SIZE: '2',
    })
    const embedder = await createEmbedderFromEnv(env, unused)
    expect(embedder.model).toBe('openai:nomic-embed-text')
    expect(embedder.dimensions).toBe(12) // learnt by the probe call

    const vectors = await embedder.embed(['alpha', 'beta', 'gamma'])
    expect(vectors.map((v) => Array.from(v))).toEqual(
      ['alpha', 'beta', 'gamma'].map((text) => Array.from(new Float32Array(vectorFor(text, 12)))),
    )
    // Probe, then two batches of at most two.
    expect(embeddingServer.requests.map((r) => r.body.input)).toEqual([
      ['dimension probe'],
      ['alpha', 'beta'],
      ['gamma'],
    ])
    expect(embeddingServer.requests.every((r) => r.headers.authorization === 'Bearer sk-local')).toBe(true)
    expect(embeddingServer.requests.every((r) => r.body.model === 'nomic-embed-text')).toBe(true)
  })

  it('sends the configured dimensions and checks the answer against them', async () => {
    const embeddingServer = await startEmbeddingServer((request) =>
      embeddingsReply(request.body.input ?? [], 4),
    )
    server = embeddingServer
    const env = loadEnv({
      ENGRAM_EMBEDDER: 'openai',
      ENGRAM_EMBEDDING_URL: embeddingServer.baseUrl,
      ENGRAM_EMBEDDING_MODEL: 'text-embedding-3-small',
      ENGRAM_EMBEDDING_DIMENSIONS: '8',
    })
    const embedder = await createEmbedderFromEnv(env, unused)
    expect(embedder.dimensions).toBe(8)
    await expect(embedder.embed(['x'])).rejects.toThrow('has 4 dimensions, expected 8')
    expect(embeddingServer.requests[0]?.body.dimensions).toBe(8)
  })

  it('loads a local transformers model from ENGRAM_EMBEDDING_MODEL_PATH', async () => {
    const env = loadEnv({
      ENGRAM_EMBEDDER: 'transformers',
      ENGRAM_EMBEDDING_MODEL: 'engram/tiny-bert',
      ENGRAM_EMBEDDING_MODEL_PATH: modelPath,
    })
    const embedder = await createEmbedderFromEnv(env, unused)
    expect(embedder.model).toBe('transformers:engram/tiny-bert')
    expect(embedder.dimensions).toBe(TINY_MODEL_HIDDEN_SIZE)
    const [vector] = await embedder.embed(['hello world'])
    expect(vector).toHaveLength(TINY_MODEL_HIDDEN_SIZE)
  })

  it('refuses a transformers model whose width differs from ENGRAM_EMBEDDING_DIMENSIONS', async () => {
    const env = loadEnv({
      ENGRAM_EMBEDDER: 'transformers',
      ENGRAM_EMBEDDING_MODEL: 'engram/tiny-bert',
      ENGRAM_EMBEDDING_MODEL_PATH: modelPath,
      ENGRAM_EMBEDDING_DIMENSIONS: '384',
    })
    await expect(createEmbedderFromEnv(env, unused)).rejects.toThrow(
      `ENGRAM_EMBEDDING_DIMENSIONS: is 384, but engram/tiny-bert produces ${TINY_MODEL_HIDDEN_SIZE}-dimensional vectors`,
    )
  })

  it('names the variable when a hand-built environment lacks the URL', async () => {
    const env = { ...loadEnv({}), ENGRAM_EMBEDDER: 'openai' as const, ENGRAM_EMBEDDING_MODEL: 'm' }
    await expect(createEmbedderFromEnv(env, unused)).rejects.toThrow('ENGRAM_EMBEDDING_URL: is required')
  })
})

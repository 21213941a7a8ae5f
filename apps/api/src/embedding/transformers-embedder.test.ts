import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { Embedder } from '@engram/core'
import { env as transformersEnv } from '@huggingface/transformers'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { TINY_MODEL_HIDDEN_SIZE, writeTinyModel } from '../../test/fixtures/tiny-model.ts'
import { createTransformersEmbedder, ModelNotFoundError } from './transformers-embedder.ts'

const MODEL_ID = 'engram/tiny-bert'

const norm = (v: Float32Array) => Math.sqrt(v.reduce((sum, x) => sum + x * x, 0))
const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * (b[i] as number), 0)

describe('createTransformersEmbedder', () => {
  let modelPath: string
  let embedder: Embedder
  // transformers.js downloads through its own `env.fetch` (bound at import), not the global one.
  const originalFetch = transformersEnv.fetch
  const fetchSpy = vi.fn(async (url: string | URL) => {
    throw new Error(`network disabled in tests: ${String(url)}`)
  })

  beforeAll(async () => {
    transformersEnv.fetch = fetchSpy
    modelPath = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-models-'))
    writeTinyModel(modelPath, MODEL_ID)
    embedder = await createTransformersEmbedder({ modelPath, modelId: MODEL_ID })
  })
  afterAll(() => {
    transformersEnv.fetch = originalFetch
    fs.rmSync(modelPath, { recursive: true, force: true })
  })

  it('loads the model from the local folder without touching the network', () => {
    expect(embedder.model).toBe(`transformers:${MODEL_ID}`)
    expect(embedder.dimensions).toBe(TINY_MODEL_HIDDEN_SIZE)
    expect(fetchSpy).not.toHaveBeenCalled()
  })

  it('returns one normalised vector of the hidden size per text', async () => {
    const vectors = await embedder.embed(['the cat sat on the mat', 'memory for agents', 'zyzzyva'])
    expect(vectors).toHaveLength(3)
    for (const vector of vectors) {
      expect(vector).toBeInstanceOf(Float32Array)
      expect(vector).toHaveLength(TINY_MODEL_HIDDEN_SIZE)
      expect(norm(vector)).toBeCloseTo(1, 5)
    }
  })

  it('is deterministic across calls and across loads', async () => {
    const texts = ['water in the river', 'a story about a king']
    const first = await embedder.embed(texts)
    const second = await embedder.embed(texts)
    const reloaded = await createTransformersEmbedder({ modelPath, modelId: MODEL_ID })
    const third = await reloaded.embed(texts)
    expect(second).toEqual(first)
    expect(third).toEqual(first)
  })

  it('gives different texts different vectors', async () => {
    const [a, b, c] = await embedder.embed([
      'the black dog ran home',
      'ocean waves under the moon',
      'the black dog',
    ])
    expect(cosine(a as Float32Array, b as Float32Array)).toBeLessThan(0.99)
    expect(cosine(a as Float32Array, c as Float32Array)).toBeLessThan(0.9999)
  })

  it('gives the same vectors whatever the batching (padding is masked out)', async () => {
    const texts = ['one', 'a much longer sentence with many more words in it', 'two words', 'x']
    const batchedByTwo = await createTransformersEmbedder({ modelPath, modelId: MODEL_ID, batchSize: 2 })
    const together = await embedder.embed(texts)
    const inPairs = await batchedByTwo.embed(texts)
    together.forEach((vector, i) => {
      expect(cosine(vector, inPairs[i] as Float32Array)).toBeCloseTo(1, 5)
    })
  })

  it('honours pooling and normalize', async () => {
    const text = 'the quick brown fox'
    const [mean] = await embedder.embed([text])
    const cls = await createTransformersEmbedder({ modelPath, modelId: MODEL_ID, pooling: 'cls' })
    const raw = await createTransformersEmbedder({ modelPath, modelId: MODEL_ID, normalize: false })
    const [clsVector] = await cls.embed([text])
    const [rawVector] = await raw.embed([text])
    expect(cosine(mean as Float32Array, clsVector as Float32Array)).toBeLessThan(0.999)
    expect(norm(rawVector as Float32Array)).not.toBeCloseTo(1, 2)
    // Normalising the raw mean gives the default vector back.
    const scale = norm(rawVector as Float32Array)
    expect(
      cosine(
        mean as Float32Array,
        (rawVector as Float32Array).map((x) => x / scale),
      ),
    ).toBeCloseTo(1, 5)
  })

  it('names the missing folder when the model is not there', async () => {
    const missing = path.join(modelPath, 'nobody/no-model')
    const error = await createTransformersEmbedder({ modelPath, modelId: 'nobody/no-model' }).catch(
      (e: unknown) => e as Error,
    )
    expect(error).toBeInstanceOf(ModelNotFoundError)
    expect((error as Error).message).toContain(missing)
    expect(fetchSpy).not.toHaveBeenCalled()
  })

  it('names the missing file when the folder is incomplete', async () => {
    writeTinyModel(modelPath, 'engram/no-weights')
    fs.rmSync(path.join(modelPath, 'engram/no-weights/onnx/model.onnx'))
    await expect(createTransformersEmbedder({ modelPath, modelId: 'engram/no-weights' })).rejects.toThrow(
      path.join(modelPath, 'engram/no-weights/onnx/model.onnx'),
    )
    expect(fetchSpy).not.toHaveBeenCalled()
  })

  it('tries the hub only when remote models are allowed', async () => {
    const error = await createTransformersEmbedder({
      modelPath,
      modelId: 'nobody/no-model',
      allowRemote: true,
    }).catch((e: unknown) => e as Error)
    expect(error).toBeInstanceOf(Error)
    expect(fetchSpy).toHaveBeenCalled()
    expect(String(fetchSpy.mock.calls[0]?.[0])).toContain('nobody/no-model')
    fetchSpy.mockClear()
  })

  it('rejects a model id that climbs out of the model folder', async () => {
    await expect(createTransformersEmbedder({ modelPath, modelId: '../etc' })).rejects.toThrow(/modelId/)
  })
})

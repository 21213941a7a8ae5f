import fs from 'node:fs'
import path from 'node:path'
import { type Embedder, parseWith } from '@engram/core'
import { z } from 'zod'

export const DEFAULT_TRANSFORMERS_BATCH_SIZE = 32
const DIMENSION_PROBE_TEXT = 'dimension probe'

export const TransformersEmbedderConfigSchema = z.object({
  modelPath: z.string().min(1),
  // A Hugging Face id such as Xenova/all-MiniLM-L6-v2: it names the folder under modelPath.
  modelId: z
    .string()
    .min(1)
    .refine((id) => !id.split(/[\\/]/).includes('..'), 'must not climb out of modelPath'),
  allowRemote: z.boolean().default(false),
  pooling: z.enum(['mean', 'cls']).default('mean'),
  normalize: z.boolean().default(true),
  batchSize: z.number().int().min(1).max(2_048).default(DEFAULT_TRANSFORMERS_BATCH_SIZE),
})

export interface TransformersEmbedderOptions {
  /** The folder holding model folders: `<modelPath>/<modelId>/{config.json, tokenizer.json, onnx/model.onnx}`. */
  modelPath: string
  modelId: string
  /** Download from the Hugging Face hub into modelPath when the folder is missing; off by default. */
  allowRemote?: boolean
  pooling?: 'mean' | 'cls'
  normalize?: boolean
  batchSize?: number
}

export class ModelNotFoundError extends Error {
  constructor(
    readonly modelFolder: string,
    readonly modelId: string,
  ) {
    super(
      `transformers embedder: no model folder at ${modelFolder} for model ${modelId}. ` +
        'Put the model there (config.json, tokenizer.json, onnx/model.onnx), or allow remote downloads.',
    )
    this.name = 'ModelNotFoundError'
  }
}

// transformers.js keeps its settings in one process-wide `env`, read while a model loads: two
// loads with different folders must not interleave, so they queue.
let loading: Promise<unknown> = Promise.resolve()

/**
 * A local model run in-process through transformers.js on the CPU (onnxruntime-node). The
 * library is imported only here, so a server on the default embedder never loads the runtime.
 */
export async function createTransformersEmbedder(options: TransformersEmbedderOptions): Promise<Embedder> {
  const config = parseWith(TransformersEmbedderConfigSchema, options, 'embedder')
  const modelPath = path.resolve(config.modelPath)
  const modelFolder = path.join(modelPath, config.modelId)
  if (!config.allowRemote && !fs.existsSync(path.join(modelFolder, 'config.json'))) {
    throw new ModelNotFoundError(modelFolder, config.modelId)
  }

  const load = loading.then(async () => {
    const { env, pipeline } = await import('@huggingface/transformers')
    env.allowLocalModels = true
    env.allowRemoteModels = config.allowRemote
    env.localModelPath = modelPath
    // Downloads land in the same `<modelPath>/<modelId>` layout, so the next start finds them locally.
    env.cacheDir = modelPath
    // fp32 is `onnx/model.onnx`, the file every export has; quantized variants are optional extras.
    return pipeline('feature-extraction', config.modelId, { dtype: 'fp32', device: 'cpu' })
  })
  loading = load.catch(() => {})
  const extractor = await load

  const embedBatch = async (texts: string[]): Promise<Float32Array[]> => {
    const output = await extractor(texts, { pooling: config.pooling, normalize: config.normalize })
    const [rows, width] = output.dims as [number, number]
    const data = output.data as Float32Array
    return Array.from({ length: rows }, (_, row) => data.slice(row * width, (row + 1) * width))
  }

  const embed = async (texts: readonly string[]): Promise<Float32Array[]> => {
    const out: Float32Array[] = []
    for (let start = 0; start < texts.length; start += config.batchSize) {
      out.push(...(await embedBatch(texts.slice(start, start + config.batchSize))))
    }
    return out
  }

  // The output says what the model produces; config.json's hidden_size need not (projection heads).
  const [probe] = await embed([DIMENSION_PROBE_TEXT])
  return {
    model: `transformers:${config.modelId}`,
    dimensions: (probe as Float32Array).length,
    embed,
  }
}

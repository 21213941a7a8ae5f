import { randomUUID } from 'node:crypto'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import {
  type ApproximateBuildInput,
  type ApproximateBuildResult,
  buildApproximateIndex,
  type Calibration,
} from '@engram/core'
import { type HnswConfig, HnswVectorIndex } from './hnsw-index.ts'

const WORKER_FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'hnsw-build-worker.mjs')

export interface GraphBuildRequest {
  snapshot: ApproximateBuildInput
  hnsw: Partial<HnswConfig>
  /** Where the graph is saved (its manifest; see HnswVectorIndex.save). */
  file: string
}

/** In the worker: fills and calibrates a graph, then saves it for the server to load. */
export async function buildGraphFile(request: GraphBuildRequest): Promise<Calibration | null> {
  // Sized for what it receives plus a little room: slots are allocated up front, and growing
  // from the default step would leave a graph up to a quarter empty (see GROWTH).
  const capacity = Math.max(request.hnsw.initialCapacity ?? 16, Math.ceil(request.snapshot.ids.length * 1.05))
  const built = await buildApproximateIndex(
    request.snapshot,
    () => new HnswVectorIndex({ ...request.hnsw, initialCapacity: capacity }),
  )
  // Without `abandoned` the build always finishes; the server terminates the thread to stop it.
  const { index, calibration } = built as ApproximateBuildResult
  ;(index as HnswVectorIndex).save(request.file)
  return calibration
}

/**
 * Builds an HNSW graph on a worker thread and loads it: 100k vectors take ~40 s of CPU that
 * would otherwise run on the event loop between requests (bench: load, reads during a build).
 * The graph is saved at `file` (the server's saved copy; a temporary file when there is none),
 * so loading it is the asynchronous read a restart does. Aborting terminates the thread.
 */
export async function buildHnswInWorker(
  snapshot: ApproximateBuildInput,
  signal: AbortSignal,
  options: { hnsw: Partial<HnswConfig>; file: string | null },
): Promise<ApproximateBuildResult> {
  const file = options.file ?? path.join(os.tmpdir(), `engram-hnsw-${randomUUID()}.hnsw`)
  try {
    const calibration = await runWorker({ snapshot, hnsw: options.hnsw, file }, signal)
    const index = await HnswVectorIndex.load(file, options.hnsw, snapshot.dimensions)
    if (!index) throw new Error(`the graph built at ${file} could not be read back`)
    return { index, calibration }
  } finally {
    if (!options.file) HnswVectorIndex.delete(file)
  }
}

function runWorker(request: GraphBuildRequest, signal: AbortSignal): Promise<Calibration | null> {
  signal.throwIfAborted()
  return new Promise((resolve, reject) => {
    // The vectors move to the worker instead of being copied.
    const worker = new Worker(WORKER_FILE, {
      workerData: request,
      transferList: [request.snapshot.vectors.buffer as ArrayBuffer],
    })
    // A build in progress must not keep a stopping process alive.
    worker.unref()
    let settled = false
    const settle = (done: () => void) => {
      if (settled) return
      settled = true
      signal.removeEventListener('abort', stop)
      done()
    }
    const stop = () => {
      void worker.terminate()
      settle(() => reject(signal.reason))
    }
    signal.addEventListener('abort', stop, { once: true })
    worker.once('message', (calibration: Calibration | null) => settle(() => resolve(calibration)))
    worker.once('error', (error) => settle(() => reject(error)))
    worker.once('exit', (code) =>
      settle(() => reject(new Error(`the HNSW build thread exited (code ${code}) before finishing`))),
    )
  })
}

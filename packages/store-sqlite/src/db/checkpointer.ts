import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'

export const CHECKPOINT_INTERVAL_MS = 200

/**
 * Moves WAL checkpoints off the event loop. A checkpoint copies the WAL into the database file and
 * syncs it: milliseconds to tens of milliseconds that SQLite's auto-checkpoint spends inside
 * whichever commit crosses 1,000 pages, stalling every request behind it. A worker thread with its
 * own connection checkpoints every CHECKPOINT_INTERVAL_MS instead, so the WAL rarely grows that
 * far; the auto-checkpoint stays on as the fallback should the worker ever stop.
 */
export function startCheckpointer(databaseFile: string, intervalMs = CHECKPOINT_INTERVAL_MS) {
  const worker = new Worker(
    path.join(path.dirname(fileURLToPath(import.meta.url)), 'checkpoint-worker.mjs'),
    {
      workerData: { file: databaseFile, intervalMs },
    },
  )
  worker.unref()
  // A failing worker leaves SQLite's own auto-checkpoint in charge: nothing else to do.
  worker.on('error', () => {})
  return {
    async stop(): Promise<void> {
      // Referenced again while stopping: an unreferenced worker and timer would let the process
      // exit with this await still pending.
      worker.ref()
      const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()))
      worker.postMessage('stop')
      let timer: NodeJS.Timeout | undefined
      await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 1_000)))])
      clearTimeout(timer)
      await worker.terminate()
    },
  }
}

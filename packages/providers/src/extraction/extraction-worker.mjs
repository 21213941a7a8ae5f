// Runs the offline extractor for the server on a thread of its own (see extraction-pool.ts).
// Plain JavaScript that loads the TypeScript through tsx: a worker thread starts without the
// loader its parent may run under (tsx, vitest).
import { parentPort } from 'node:worker_threads'
import { tsImport } from 'tsx/esm/api'

const { serveExtraction } = await tsImport('./extraction-thread.ts', import.meta.url)
serveExtraction(parentPort)

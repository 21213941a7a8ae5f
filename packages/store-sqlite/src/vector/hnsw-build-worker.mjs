// Builds an HNSW graph for the server on a thread of its own (see hnsw-build.ts). Plain
// JavaScript that loads the TypeScript through tsx: a worker thread starts without the loader
// its parent may run under (tsx, vitest).
import { parentPort, workerData } from 'node:worker_threads'
import { tsImport } from 'tsx/esm/api'

const { buildGraphFile } = await tsImport('./hnsw-build.ts', import.meta.url)
parentPort.postMessage(await buildGraphFile(workerData))

// The extraction worker of the pool's tests, which dies (as a thread hitting a native fault or
// running out of memory would) when a call's first turn says CRASH; any other call is served.
import { parentPort } from 'node:worker_threads'
import { tsImport } from 'tsx/esm/api'

const { serveExtraction } = await tsImport('../extraction-thread.ts', import.meta.url)
parentPort.on('message', (request) => {
  if (request.turns[0]?.content === 'CRASH') process.exit(3)
})
serveExtraction(parentPort)

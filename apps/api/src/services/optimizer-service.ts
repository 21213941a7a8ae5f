// The optimizer moved to @engram/engine (src/optimizer). Re-exported here only for the files of
// other groups still importing it from this path (embedding-service.ts: Logger); the lead drops
// this file once they import from the engine.
export type { Logger } from '@engram/engine'
export { MAX_SNAPSHOT_HISTORY, OptimizerService, type OptimizerServiceConfig } from '@engram/engine'

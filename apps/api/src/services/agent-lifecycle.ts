// The agent lifecycle moved to @engram/engine (src/agents). Re-exported here only for the files of
// other groups still importing it from this path (transfer-service.ts); the lead drops this file
// once they import from the engine.
export {
  AgentLifecycle,
  type DeletionReport,
  type StoreKind,
  type StoreRemainder,
} from '@engram/engine'

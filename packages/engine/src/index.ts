// The engine's public surface: the facade, the use cases the doors and adapters name, and the ports.
export { AgentWrites } from './agents/agent-writes.ts'
export { createEngine, type Engine, type EngineDeps } from './engine.ts'
export { InProcessEventBus } from './events/in-process-event-bus.ts'
export {
  DEFAULT_JOB_POLL_INTERVAL_MS,
  type JobBatchResult,
  type JobHandler,
  JobWorker,
} from './jobs/job-worker.ts'
export { MemoryService, type SearchHit } from './memory/memory-service.ts'
export {
  assertOffsetPage,
  assertPageSize,
  beyondCursor,
  decodeCursor,
  encodeCursor,
  type ListOrder,
  type PageArgs,
  type TimeIdCursor,
  timeIdPage,
} from './paging/cursor.ts'
export {
  type OptimizerTotals,
  PARAMETER_KEYS,
  ParameterStore,
  STAT_KEYS,
} from './parameters/parameter-store.ts'
export * from './ports/index.ts'
export type {
  TransferEmbeddings,
  TransferLifecycle,
  TransferPrivacy,
  TransferPrivacyPolicy,
} from './transfer/collaborators.ts'
export {
  EXPORT_FORMAT,
  EXPORT_VERSION,
  type ExportDocument,
  type ImportMode,
  type ImportReport,
  MAX_IMPORT_ITEMS,
} from './transfer/document.ts'
export { TransferService, type TransferServiceDeps } from './transfer/transfer-service.ts'
export { assertDimensions } from './vectors/dimensions.ts'

// The engine's public surface: the facade, the use cases the doors and adapters name, and the ports.
export {
  AgentLifecycle,
  type AgentLifecycleDeps,
  type DeletionReport,
} from './agents/agent-lifecycle.ts'
export { AgentWrites } from './agents/agent-writes.ts'
export type { LifecycleAgents, LifecycleEmbeddings, LifecycleSearch } from './agents/collaborators.ts'
export type {
  ContextMemoryItems,
  ContextSearch,
  ContextSearchHit,
  ContextSearchOptions,
} from './context/collaborators.ts'
export {
  CONTEXT_CACHE_TTL_MS,
  ContextService,
  type MemoryContextRequest,
  type MemoryContextResult,
} from './context/context-service.ts'
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
  MAX_SNAPSHOT_HISTORY,
  OptimizerService,
  type OptimizerServiceConfig,
} from './optimizer/optimizer-service.ts'
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
export { assertDimensions } from './vectors/dimensions.ts'

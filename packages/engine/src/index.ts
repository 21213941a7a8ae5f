// The engine's public surface: the facade, the use cases the doors and adapters name, and the ports.
export { AgentWrites } from './agents/agent-writes.ts'
export { ConversationReads } from './conversations/conversation-reads.ts'
export { type AgentText, CachedEmbedder } from './embeddings/cached-embedder.ts'
export { contentHash } from './embeddings/content-hash.ts'
export {
  EMBED_JOB,
  EMBED_JOB_BATCH,
  EMBED_JOBS_PER_SEARCH,
  type EmbedPayload,
  embedJob,
  embedJobCounts,
  enqueueMissingEmbeddings,
  registerEmbedJobs,
  wireEmbedJobs,
} from './embeddings/embed-jobs.ts'
export {
  EMBEDDING_BATCH_SIZE,
  type EmbeddingCoverage,
  type EmbeddingJobs,
  EmbeddingService,
  type EmbeddingServiceDeps,
  type OwnerToEmbed,
} from './embeddings/embedding-service.ts'
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
  decodeCursor,
  encodeCursor,
  inTimeIdRange,
  type ListOrder,
  type PageArgs,
  sortByTimeId,
  type TimeIdCursor,
  type TimeIdPageQuery,
  type TimeIdRange,
  timeIdPage,
} from './paging/cursor.ts'
export {
  type OptimizerTotals,
  PARAMETER_KEYS,
  ParameterStore,
  STAT_KEYS,
} from './parameters/parameter-store.ts'
export * from './ports/index.ts'
export { SearchService, type SearchServiceDeps } from './search/search-service.ts'
export { assertDimensions } from './vectors/dimensions.ts'

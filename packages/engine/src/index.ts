// The engine's public surface: the facade, the use cases the doors and adapters name, and the ports.

export {
  AgentLifecycle,
  type AgentLifecycleDeps,
  type DeletionReport,
} from './agents/agent-lifecycle.ts'
export { AgentService, assertAgentId, type KeyHolder, MAX_LABEL_CHARS } from './agents/agent-service.ts'
export { AgentWrites } from './agents/agent-writes.ts'
export { generateApiKey, hashApiKey, keyPrefix } from './agents/api-keys.ts'
export type { LifecycleAgents, LifecycleEmbeddings, LifecycleSearch } from './agents/collaborators.ts'
export type {
  ContextMemoryItems,
  ContextSearch,
  ContextSearchHit,
  ContextSearchOptions,
} from './context/collaborators.ts'
export { type BuiltContext, ContextBuilder, type ContextBuilderDeps } from './context/context-builder.ts'
export {
  CONTEXT_CACHE_TTL_MS,
  ContextService,
  type MemoryContextRequest,
  type MemoryContextResult,
} from './context/context-service.ts'
export { ConversationReads } from './conversations/conversation-reads.ts'
export {
  type CountedText,
  DEFAULT_MESSAGE_TOKEN_COUNTS,
  MessageTokenCounts,
} from './conversations/message-token-counts.ts'
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
export { createEngine, type Engine, type EngineDeps, type ReplicaOptions, type SyncResult } from './engine.ts'
export { EpisodicLayer } from './episodic/episodic-layer.ts'
export { InProcessEventBus } from './events/in-process-event-bus.ts'
export { type ReplicaCacheHolders, ReplicaCaches } from './events/replica-caches.ts'
export {
  FORMATION_JOB_KINDS,
  type FormationActivity,
  type FormationActivityEvent,
  FormationActivityTracker,
  type FormationQueueDepth,
} from './formation/formation-activity.ts'
export {
  EXTRACT_JOB,
  EXTRACT_JOB_BATCH,
  type ExtractPayload,
  extractJob,
  extractJobKey,
  registerExtractJobs,
} from './formation/formation-jobs.ts'
export {
  DEFAULT_FORMATION_CONFIG,
  type Extractor,
  type FormationConfig,
  FormationConfigSchema,
  type FormationDeps,
  type FormationResult,
  FormationService,
  type FormationSettings,
  FormationSettingsSchema,
} from './formation/formation-service.ts'
export {
  FormationSettingsService,
  type MemoryFormationSettings,
  type MemoryFormationSettingsChanges,
} from './formation/formation-settings.ts'
export {
  DEFAULT_FORMATION_STATS_AGENTS,
  FORMATION_WORK_KINDS,
  type FormationFailure,
  type FormationOutcome,
  FormationStats,
  type FormationWorkKind,
  type FormationWorkStats,
  type FormationWorkTracker,
  MAX_FAILURE_REASON_CHARS,
} from './formation/formation-stats.ts'
export {
  entityMatchScore,
  MIN_SPELLING_SIMILARITY,
  namedIn,
  spellingSimilarity,
} from './graph/entity-match.ts'
export {
  type EntityMatch,
  type EntityRef,
  type GraphPath,
  GraphService,
  type GraphServiceDeps,
  type Neighbourhood,
  type NeighbourhoodRequest,
  type Paths,
  type RelationshipSource,
  type RelationshipView,
  relationshipSourceReader,
  SOURCE_EXCERPT_CHARS,
} from './graph/graph-service.ts'
export {
  DEFAULT_JOB_POLL_INTERVAL_MS,
  type JobBatchResult,
  type JobHandler,
  JobWorker,
  yieldToRequests,
} from './jobs/job-worker.ts'
export type { KnowledgeEmbeddings } from './knowledge/collaborators.ts'
export {
  type KnowledgeFilter,
  type KnowledgeInput,
  type KnowledgeMatch,
  KnowledgeService,
} from './knowledge/knowledge-service.ts'
export { InProcessLease } from './leases/in-process-lease.ts'
export { MemoryService, type SearchHit } from './memory/memory-service.ts'
export type { MemoryEmbeddingCoverage, MemoryEmbeddings } from './memory-items/collaborators.ts'
export {
  assertMemoryFilter,
  MAX_FILTER_SEARCH_CHARS,
  MAX_MEMORY_CHARS,
  MAX_SOURCE_ID_CHARS,
  MAX_TAG_CHARS,
  MAX_TAGS,
  MAX_USER_ID_CHARS,
  type MemoryFilter,
  type MemoryItemInput,
  parseStoredSettings,
  parseTags,
  type StoredSettings,
  safeJson,
} from './memory-items/memory-item-rules.ts'
export {
  type MemoryItemChange,
  type MemoryItemListener,
  MemoryItemService,
  type MemoryWriteResult,
  type WriteOutcome,
} from './memory-items/memory-item-service.ts'
export * from './operations/index.ts'
export {
  DEFAULT_OPTIMIZER_CACHED_ENTRIES,
  OptimizerEntries,
  OptimizerEntriesConfigSchema,
} from './optimizer/optimizer-entries.ts'
export {
  DEFAULT_OPTIMIZER_LEASE_RENEW_MS,
  DEFAULT_OPTIMIZER_LEASE_TTL_MS,
  MAX_SNAPSHOT_HISTORY,
  OptimizerLeaseConfigSchema,
  OptimizerLeaseError,
  type OptimizerRunOptions,
  OptimizerService,
  type OptimizerServiceConfig,
  optimizerLeaseKey,
  optimizerRunLeaseKey,
} from './optimizer/optimizer-service.ts'
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
export { type OffsetConnection, offsetConnection, offsetCursor } from './paging/offset-connection.ts'
export {
  type OptimizerTotals,
  PARAMETER_KEYS,
  ParameterStore,
  STAT_KEYS,
} from './parameters/parameter-store.ts'
export * from './ports/index.ts'
export {
  MAX_GUARDED_METADATA_DEPTH,
  PrivacyService,
  readStoredPrivacyPolicy,
} from './privacy/privacy-service.ts'
export {
  MAX_PROFILE_VERSIONS_PAGE,
  PROFILE_JOB,
  PROFILE_SOURCE_CATEGORIES,
  ProfileService,
  type ProfileServiceDeps,
} from './profile/profile-service.ts'
export { repeat, schedulerOf, sleep, systemScheduler, withScheduler } from './scheduling/scheduler.ts'
export {
  AgentLexicalIndexes,
  type LexicalIndexCacheConfig,
  LexicalIndexCacheConfigSchema,
} from './search/lexical-indexes.ts'
export {
  AccessBuffer,
  type AccessFlushConfig,
  AccessFlushConfigSchema,
  DEFAULT_ACCESS_FLUSH,
} from './search/search-access.ts'
export { SearchService, type SearchServiceDeps } from './search/search-service.ts'
export {
  MAX_SUMMARY_LIST,
  SUMMARY_JOB,
  SUMMARY_RETENTION_JOB,
  SummaryService,
  type SummaryServiceDeps,
} from './summaries/summary-service.ts'
export {
  type AgentMemoryExport,
  type AgentMemoryImportReport,
  AgentMemoryTransfer,
  type AgentMemoryTransferDeps,
} from './trajectories/agent-memory-transfer.ts'
export { RunHints } from './trajectories/run-hints.ts'
export { InputCheck as TrajectoryInputCheck, originOf, type TextGuard } from './trajectories/run-input.ts'
export { decodeRunCursor } from './trajectories/run-lineage.ts'
export { RunMemory, type RunMemoryDeps } from './trajectories/run-memory.ts'
export { RunRegistry, type RunRegistryDeps } from './trajectories/run-registry.ts'
export type * from './trajectories/run-types.ts'
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
export {
  type FlushReason,
  type RecentItem,
  type RecentSource,
  type WorkingContextFlush,
  WorkingContextService,
  type WorkingContextServiceDeps,
} from './working-context/working-context-service.ts'

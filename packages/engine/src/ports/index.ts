// The ports the engine is written against; adapters (store-sqlite, the in-memory testing store)
// implement them, and only start-up code chooses which.

export type {
  AgentArchive,
  AgentArchiveRepository,
  ArchivedEntry,
  ArchivedGraph,
  ArchivedGraphEntity,
  ArchivedGraphEvidence,
  ArchivedGraphRelationship,
  ArchivedKnowledge,
  ArchivedMemory,
  ArchivedMessage,
  ArchivedPrivacyPolicy,
  ArchivedSession,
  ArchivedSnapshot,
  ArchivedVector,
  ClearedCounts,
  NewArchivedMemory,
  NewArchivedSession,
  NewArchivedVector,
} from './agent-archive.ts'
export type { AgentDataStore, StoreKind, StoreRemainder } from './agent-data.ts'
export type { ApiKeyRecord, ApiKeyRepository, ApiKeyRole, NewApiKey } from './api-keys.ts'
export type { BackupInfo, BackupStore, RestoreResult } from './backup-store.ts'
export type { Clock, Scheduler, TimerClock } from './clock.ts'
export type {
  ContextMemory,
  ContextMemoryOrder,
  ContextMemoryQuery,
  ContextSources,
  ContextTurn,
} from './context-sources.ts'
export type { ConversationHistory } from './conversation-history.ts'
export type {
  CachedVector,
  EmbeddingKind,
  EmbeddingRepository,
  OwnerText,
  OwnerToFill,
} from './embeddings.ts'
export { EMBEDDING_KINDS } from './embeddings.ts'
export type { EpisodicStore } from './episodic-store.ts'
export type {
  CacheChange,
  CacheInvalidateEvent,
  EmbeddingProgressEvent,
  EngramEvents,
  EventBus,
  RunEvent,
  SnapshotEvent,
} from './event-bus.ts'
export {
  inProcessExtractor,
  inProcessSummarizer,
  type OfflineExtractor,
  type OfflineSummarizer,
  type OfflineSummaryOptions,
} from './extractor.ts'
export type { ConversationToExtract, FormationRepository, MessageJobProducer } from './formation.ts'
export type {
  CorpusFigures,
  DocumentCursor,
  DocumentSet,
  FullTextCollection,
  FullTextDocument,
  FullTextIndex,
  IndexedDocument,
  IndexedDocumentBatch,
  Posting,
} from './full-text.ts'
export {
  FULL_TEXT_COLLECTIONS,
  frequencyTerms,
  INDEXED_DOCUMENT_BATCH,
  MAX_FREQUENCY_TERMS,
} from './full-text.ts'
export type {
  GraphEntityChanges,
  GraphEntityQuery,
  GraphEntityRecord,
  GraphEvidenceRecord,
  GraphForgetResult,
  GraphRelationshipChanges,
  GraphRelationshipFilter,
  GraphRelationshipRecord,
  GraphRepository,
  GraphSource,
  NewGraphEntity,
  NewGraphRelationship,
} from './graph.ts'
export type { ClaimOptions, Job, JobPolicy, JobQueue, JobQueueStats, JobState, NewJob } from './job-queue.ts'
export type {
  KnowledgeChanges,
  KnowledgeOrder,
  KnowledgeQuery,
  KnowledgeRecord,
  KnowledgeRepository,
  NewKnowledge,
} from './knowledge.ts'
export type { Lease } from './lease.ts'
export type { Logger } from './logger.ts'
export { SILENT_LOGGER } from './logger.ts'
export type {
  CompactionReport,
  ExpiredConversation,
  MaintenanceRemoved,
  MaintenanceRepository,
  MaintenanceRun,
  MaintenanceRunOutcome,
  MaintenanceStatus,
  MaintenanceStep,
  MaintenanceTrigger,
  NewMaintenanceRun,
  StoreCompaction,
} from './maintenance.ts'
export { MAINTENANCE_STATUSES, MAINTENANCE_TRIGGERS, NOTHING_REMOVED } from './maintenance.ts'
export type {
  MemoryItemChanges,
  MemoryItemFigures,
  MemoryItemOrder,
  MemoryItemQuery,
  MemoryItemRepository,
  MemoryItemView,
  NewMemoryItem,
  StoredMemorySettings,
  VerificationCandidate,
} from './memory-items.ts'
export type {
  EntryCompression,
  EntryStamp,
  OptimizerRepository,
  OptimizerRunChanges,
  StampedEntry,
} from './optimizer.ts'
export type {
  PoolChanges,
  PoolContributionRecord,
  PoolMemberRecord,
  PoolRecord,
  PoolRepository,
} from './pools.ts'
export type { PrivacyPolicyRepository, StoredPrivacyPolicy } from './privacy-policies.ts'
export type {
  NewProfileVersion,
  ProfileRepository,
  ProfileTrigger,
  ProfileVersion,
  ProfileWriter,
} from './profiles.ts'
export type {
  MemoryItemFilter,
  MemoryUserActivity,
  RecalledKnowledge,
  RecalledMemoryItem,
  RecalledMessage,
  RecallSources,
  SpanTurn,
  SpeakerActivity,
  TurnBeside,
  TurnFilter,
  TurnSpan,
} from './recall-sources.ts'
export type {
  AgentRecord,
  AgentRepository,
  EntryChanges,
  EntryFilter,
  EntryVector,
  EntryView,
  MemoryEntryRepository,
  NewEntry,
  ParameterRepository,
  Repositories,
  SessionRepository,
} from './repositories.ts'
export {
  NO_SERVER_METRICS,
  type ServerMetricsReport,
  type ServerMetricsSample,
  type ServerMetricsSource,
} from './server-metrics.ts'
export type { Storage, StorageCapabilities } from './storage.ts'
export type {
  NewSummary,
  RecordedTurn,
  RemovedSummary,
  StoredSummary,
  StoredSummaryTrigger,
  SummaryCursor,
  SummaryListQuery,
  SummaryRepository,
  SummaryWriter,
  TurnRecorder,
  TurnToRecord,
} from './summaries.ts'
export { type JobOutcome, NO_TELEMETRY, type Telemetry, type TelemetryCache } from './telemetry.ts'
export type {
  AppFactRecord,
  Extra,
  HintRecord,
  ListWindow,
  NewAppFact,
  NewHint,
  NewRun,
  NewRunSession,
  NewSelector,
  NewTrajectory,
  RunChanges,
  RunCursor,
  RunDomainSummary,
  RunFilter,
  RunRecord,
  RunSessionRecord,
  SelectorRecord,
  TrajectoryCandidate,
  TrajectoryForgetResult,
  TrajectoryMemoryRepository,
  TrajectoryMemorySnapshot,
  TrajectoryRecord,
  TrajectoryStep,
} from './trajectories.ts'
export type { TransactionOptions, UnitOfWork } from './unit-of-work.ts'
export type {
  SearchableVectors,
  SearchIndexOptions,
  StoredVector,
  VectorHit,
  VectorStore,
} from './vector-store.ts'
export type { WorkingContextStore } from './working-context.ts'

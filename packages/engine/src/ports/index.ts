// The ports the engine is written against; adapters (store-sqlite, the in-memory testing store)
// implement them, and only start-up code chooses which.
export type {
  AgentArchive,
  AgentArchiveRepository,
  ArchivedEntry,
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
  StoredMemorySettings,
} from './agent-archive.ts'
export type { BackupInfo, BackupStore, RestoreResult } from './backup-store.ts'
export type { Clock } from './clock.ts'
export type {
  EmbeddingProgressEvent,
  EngramEvents,
  EventBus,
  SnapshotEvent,
} from './event-bus.ts'
export type {
  CorpusFigures,
  DocumentSet,
  FullTextCollection,
  FullTextDocument,
  FullTextIndex,
  Posting,
} from './full-text.ts'
export { FULL_TEXT_COLLECTIONS } from './full-text.ts'
export type { ClaimOptions, Job, JobPolicy, JobQueue, JobQueueStats, JobState, NewJob } from './job-queue.ts'
export type { Logger } from './logger.ts'
export { SILENT_LOGGER } from './logger.ts'
export type {
  AgentRecord,
  AgentRepository,
  EntryChanges,
  EntryVector,
  EntryView,
  MemoryEntryRepository,
  NewEntry,
  ParameterRepository,
  Repositories,
  SessionRepository,
} from './repositories.ts'
export type { Storage, StorageCapabilities } from './storage.ts'
export type { TransactionOptions, UnitOfWork } from './unit-of-work.ts'
export type { StoredVector, VectorHit, VectorStore } from './vector-store.ts'

// The SQLite adapter's public surface. Start-up code (the API server) opens the database, applies
// the migrations and builds the storage bundle; the engine sees only the ports.

export { SqliteAgentData } from './agents/sqlite-agent-data.ts'
export {
  sqliteApiKeys,
  sqlitePrivacyPolicies,
  toApiKey,
} from './agents/sqlite-agent-records.ts'
export { SqliteContextSources } from './context/sqlite-context-sources.ts'
export { CHECKPOINT_INTERVAL_MS, startCheckpointer } from './db/checkpointer.ts'
export {
  APPEND_INSERTS,
  APPENDS_PER_GROUP,
  type AppendInserts,
  BUSY_TIMEOUT_MS,
  CONNECTION_PRAGMAS,
  createDatabase,
  type Database,
  type DatabaseOptions,
  DirectSqlite,
  directSqlite,
  GROUP_COMMIT_LOCK_DEADLINE_MS,
  GROUP_COMMIT_LOCK_WAIT_MS,
  GROUP_COMMIT_SAVEPOINTS,
  type GroupCommitSavepoints,
  type HotRowReader,
  hotReaderOf,
  MAX_GROUP_COMMIT,
  NEW_ROW_JOBS,
  type NewRowJobs,
  readHotRows,
  refreshPlannerStatistics,
  registerHotReader,
  STATISTICS_REFRESH_MS,
  type SyncStatements,
  sqliteDate,
  type Transaction,
  type WritePaths,
  writePaths,
} from './db/client.ts'
export { besideOrder, type SqlDialect, type Statement, sqliteDialect } from './db/dialect.ts'
export { applyMigrations, MigrationError, migrationsDirectory } from './db/migrate.ts'
export {
  type CommittedMigration,
  checkUnchanged,
  pendingMigrations,
  type RecordedMigration,
} from './db/migration-history.ts'
export { SqliteEmbeddingRepository } from './embeddings/sqlite-embedding-repository.ts'
export { SqliteFormation } from './formation/sqlite-formation.ts'
export { sqliteProfiles } from './formation/sqlite-profiles.ts'
export { sqliteSummaries } from './formation/sqlite-summaries.ts'
export {
  INDEXED_SOURCES,
  type IndexedRow,
  type IndexedRowReader,
  indexedDocumentBatches,
} from './full-text/indexed-documents.ts'
export { COLLECTION_TABLES, SqliteFullTextIndex } from './full-text/sqlite-full-text-index.ts'
export * from './full-text/term-statistics.ts'
export type * from './generated/prisma/client.ts'
export {
  entityTerms,
  holdsAt,
  sqliteGraph,
  toGraphEntity,
  toGraphEvidence,
  toGraphRelationship,
} from './graph/sqlite-graph.ts'
export * from './jobs/sqlite-job-queue.ts'
export { knowledgeWhere, sqliteKnowledge, toKnowledge } from './knowledge/sqlite-knowledge.ts'
export {
  type SparseIndexes,
  SqliteCompaction,
  sqliteMaintenance,
} from './maintenance/sqlite-maintenance.ts'
export * from './mappers.ts'
export { memoryItemWhere, sqliteMemoryItems, toMemoryItem } from './memory-items/sqlite-memory-items.ts'
export { SqliteOptimizerRepository } from './optimizer/sqlite-optimizer-repository.ts'
export { sqlitePools } from './pools/sqlite-pools.ts'
export { type MemoryRowReads, SqliteRecallSources, storedTime } from './recall/sqlite-recall-sources.ts'
export {
  agentsIn,
  type Executor,
  memoryEntriesIn,
  parametersIn,
  prismaRepositories,
} from './repositories/prisma-repositories.ts'
export { PrismaUnitOfWork } from './repositories/prisma-unit-of-work.ts'
export * from './sessions/prisma-session-repository.ts'
export { SqliteConversationHistory } from './sessions/sqlite-conversation-history.ts'
export {
  composeEngine,
  createSqliteEngine,
  type EngineCompositionOptions,
  type SqliteEngine,
  type SqliteEngineOptions,
} from './sqlite-engine.ts'
export { createSqliteStorage, type SqliteStorage, type SqliteStorageOptions } from './storage.ts'
export { sqliteTrajectories } from './trajectories/atomic-trajectories.ts'
export { trajectoriesIn } from './trajectories/sqlite-trajectories.ts'
export {
  toAppFact,
  toHint,
  toRun,
  toRunSession,
  toSelector,
  toTrajectory,
} from './trajectories/trajectory-rows.ts'
export { BackupFolder } from './transfer/backup-folder.ts'
export { agentArchiveIn } from './transfer/prisma-agent-archive.ts'
export { type SqliteBackupOptions, SqliteBackupStore } from './transfer/sqlite-backup-store.ts'
export { buildHnswInWorker } from './vector/hnsw-build.ts'
export * from './vector/hnsw-index.ts'
export type {
  ApproximateIndexKind,
  EmbeddingRowWrite,
  EmbeddingWriteStatement,
  VectorIndexOptions,
} from './vector/sqlite-vector-store.ts'
export { approximateIndexFor, SqliteVectorStore } from './vector/sqlite-vector-store.ts'

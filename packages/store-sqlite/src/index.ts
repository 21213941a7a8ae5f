// The SQLite adapter's public surface. Start-up code (the API server) opens the database, applies
// the migrations and builds the storage bundle; the engine sees only the ports.
export { CHECKPOINT_INTERVAL_MS, startCheckpointer } from './db/checkpointer.ts'
export {
  CONNECTION_PRAGMAS,
  createDatabase,
  type Database,
  DirectSqlite,
  directSqlite,
  MAX_GROUP_COMMIT,
  refreshPlannerStatistics,
  STATISTICS_REFRESH_MS,
  type SyncStatements,
  sqliteDate,
  type Transaction,
} from './db/client.ts'
export { applyMigrations, MigrationError, migrationsDirectory } from './db/migrate.ts'
export { COLLECTION_TABLES, SqliteFullTextIndex } from './full-text/sqlite-full-text-index.ts'
export * from './full-text/term-statistics.ts'
export type * from './generated/prisma/client.ts'
export * from './jobs/sqlite-job-queue.ts'
export * from './mappers.ts'
export {
  agentsIn,
  type Executor,
  memoryEntriesIn,
  parametersIn,
  prismaRepositories,
} from './repositories/prisma-repositories.ts'
export { PrismaUnitOfWork } from './repositories/prisma-unit-of-work.ts'
export * from './sessions/prisma-session-repository.ts'
export { createSqliteStorage, type SqliteStorage, type SqliteStorageOptions } from './storage.ts'
export { agentArchiveIn } from './transfer/prisma-agent-archive.ts'
export { type SqliteBackupOptions, SqliteBackupStore } from './transfer/sqlite-backup-store.ts'
export { buildHnswInWorker } from './vector/hnsw-build.ts'
export * from './vector/hnsw-index.ts'
export { SqliteVectorStore } from './vector/sqlite-vector-store.ts'

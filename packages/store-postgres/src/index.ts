// The Postgres adapter's public surface: start-up code opens the database (a pool), applies the
// migrations and builds the storage bundle; the engine sees only the ports.

export { PostgresAgentData } from './agents/postgres-agent-data.ts'
export {
  createPostgresDatabase,
  DEFAULT_POOL_SIZE,
  type PostgresDatabase,
  type PostgresDatabaseOptions,
  poolActivity,
  postgresPlaceholders,
  sharedView,
} from './db/client.ts'
export { postgresDialect } from './db/dialect.ts'
export {
  indexLexeme,
  MAX_LEXEME_BYTES,
  MAX_LEXEME_POSITION,
  MAX_LEXEME_POSITIONS,
  quoteLexeme,
  SEARCH_COLUMNS,
  searchTokens,
} from './db/search-tokens.ts'
export { PostgresFullTextIndex } from './full-text/postgres-full-text-index.ts'
export { applyPostgresMigrations, MigrationError, postgresMigrationsDirectory } from './migrate.ts'
export { createPostgresEngine, type PostgresEngine, type PostgresEngineOptions } from './postgres-engine.ts'
export {
  type AppendBatchOptions,
  appendBatchSize,
  DEFAULT_APPEND_BATCH_MESSAGES,
  MAX_APPEND_BATCH_MESSAGES,
  PostgresSessionRepository,
} from './sessions/batched-appends.ts'
export { createPostgresStorage, type PostgresStorage, type PostgresStorageOptions } from './storage.ts'
export { type PostgresBackupOptions, PostgresBackupStore } from './transfer/postgres-backup-store.ts'
export {
  DEFAULT_PGVECTOR_HNSW,
  PGVECTOR_MAX_INDEXED_DIMENSIONS,
  type PostgresVectorOptions,
  type PostgresVectorSearch,
  PostgresVectorStore,
} from './vector/postgres-vector-store.ts'
export { VECTOR_CHANNEL, VectorChangeListener } from './vector/vector-changes.ts'

import type { Clock, NewJob } from '@engram/core'
import type { Logger, Storage } from '@engram/engine'
import {
  PrismaUnitOfWork,
  prismaRepositories,
  SqliteContextSources,
  SqliteConversationHistory,
  SqliteEmbeddingRepository,
  SqliteFormation,
  SqliteJobQueue,
  SqliteOptimizerRepository,
  SqliteRecallSources,
  sqliteApiKeys,
  sqliteGraph,
  sqliteKnowledge,
  sqliteMaintenance,
  sqliteMemoryItems,
  sqlitePools,
  sqlitePrivacyPolicies,
  sqliteProfiles,
  sqliteSummaries,
  sqliteTrajectories,
  type VectorIndexOptions,
} from '@engram/store-sqlite'
import { PostgresAgentData } from './agents/postgres-agent-data.ts'
import { type PostgresDatabase, sharedView } from './db/client.ts'
import { postgresDialect } from './db/dialect.ts'
import { PostgresFullTextIndex } from './full-text/postgres-full-text-index.ts'
import { PostgresCompaction } from './maintenance-compaction.ts'
import { type AppendBatchOptions, PostgresSessionRepository } from './sessions/batched-appends.ts'
import { type PostgresBackupOptions, PostgresBackupStore } from './transfer/postgres-backup-store.ts'
import { type PostgresVectorOptions, PostgresVectorStore } from './vector/postgres-vector-store.ts'

export interface PostgresStorageOptions {
  /** An open, migrated database (createPostgresDatabase + applyPostgresMigrations). */
  db: PostgresDatabase
  clock: Clock
  /** Jobs queued with each stored message, in its transaction (its embedding). */
  messageJobs?: (agentId: string, messageIds: number[]) => NewJob[]
  /** The embedding model the vector store's rows belong to. */
  vectorModel?: string
  /** When an (agent, kind) in-process vector index moves to HNSW (tests lower it). */
  vectorIndex?: Pick<
    VectorIndexOptions,
    'approximateAbove' | 'approximateIndex' | 'slotPostings' | 'scan'
  > & {
    hnsw?: { initialCapacity?: number }
  }
  /**
   * How vectors are searched: pgvector when the server has it, else in-process indexes kept in
   * step by NOTIFY (`search`), the pgvector HNSW parameters and exact threshold, and where the
   * LISTEN connection goes (`listenUrl`: the database URL; without it each search checks the table).
   */
  vectors?: Omit<PostgresVectorOptions, 'index'>
  log?: Logger
  /** A replica's concurrent appends share transactions: at most this many messages in one. */
  appendBatch?: AppendBatchOptions
  /** The database's URL and a folder for logical backups; without them the store declares none. */
  backups?: PostgresBackupOptions | null
}

/** The Postgres bundle; the shared classes' extras (failed jobs, participants) stay visible. */
export interface PostgresStorage extends Storage {
  db: PostgresDatabase
  sessions: PostgresSessionRepository
  jobs: SqliteJobQueue
  vectors: PostgresVectorStore
}

/**
 * The storage ports on Postgres. The repositories whose code is Prisma's model API (the same on
 * both generated clients) are the SQLite adapter's, run on the Postgres client through
 * `sharedView`, given the few SQL fragments that differ (postgresDialect: JSON, the tsvector
 * index, row locks for claims); what differs throughout has its own implementation here: full-text
 * search (tsvector), the agent data purge (VACUUM) and its report.
 */
export function createPostgresStorage(options: PostgresStorageOptions): PostgresStorage {
  const { db, clock } = options
  const shared = sharedView(db)
  const jobs = new SqliteJobQueue(shared, clock, postgresDialect)
  const fullText = new PostgresFullTextIndex(db)
  const vectors = new PostgresVectorStore(
    db,
    clock,
    options.vectorModel ?? 'vector-store',
    { ...options.vectors, ...(options.vectorIndex ? { index: options.vectorIndex } : {}) },
    options.log,
  )
  // Concurrent appends batched into shared transactions (see batched-appends.ts).
  const sessions = new PostgresSessionRepository(
    shared,
    clock,
    { queue: jobs, ...(options.messageJobs ? { jobsFor: options.messageJobs } : {}) },
    options.appendBatch,
  )
  return {
    name: 'postgres',
    // Logical backups (PostgresBackupStore) when given a folder for them.
    capabilities: { backup: options.backups != null, multiProcess: true },
    db,
    unitOfWork: new PrismaUnitOfWork(shared, postgresDialect),
    repositories: prismaRepositories(shared, postgresDialect),
    sessions,
    formation: new SqliteFormation(shared, sessions, postgresDialect),
    history: new SqliteConversationHistory(shared),
    fullText,
    recall: new SqliteRecallSources(shared, postgresDialect),
    // pgvector where the server has it; otherwise bytes and per-replica indexes kept in step by NOTIFY.
    vectors,
    jobs,
    embeddings: new SqliteEmbeddingRepository(shared, jobs, postgresDialect),
    memoryItems: sqliteMemoryItems(shared, postgresDialect),
    knowledge: sqliteKnowledge(shared, postgresDialect),
    graph: sqliteGraph(shared, postgresDialect),
    trajectories: sqliteTrajectories(shared),
    pools: sqlitePools(shared),
    privacyPolicies: sqlitePrivacyPolicies(shared),
    apiKeys: sqliteApiKeys(shared),
    optimizer: new SqliteOptimizerRepository(shared, postgresDialect),
    summaries: sqliteSummaries(shared, jobs),
    profiles: sqliteProfiles(shared),
    contextSources: new SqliteContextSources(shared, postgresDialect),
    agentData: new PostgresAgentData(db, options.log),
    maintenance: sqliteMaintenance(shared),
    compaction: new PostgresCompaction(db, options.log),
    ...(options.backups ? { backups: new PostgresBackupStore(clock, options.backups) } : {}),
    close: async () => {
      await vectors.close()
      await db.$disconnect()
    },
  }
}

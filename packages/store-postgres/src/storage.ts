import type { Clock, NewJob } from '@engram/core'
import type { Logger, Storage } from '@engram/engine'
import {
  PrismaSessionRepository,
  PrismaUnitOfWork,
  prismaRepositories,
  SqliteContextSources,
  SqliteConversationHistory,
  SqliteEmbeddingRepository,
  SqliteFormation,
  SqliteJobQueue,
  SqliteOptimizerRepository,
  SqliteRecallSources,
  SqliteVectorStore,
  sqliteApiKeys,
  sqliteKnowledge,
  sqliteMemoryItems,
  sqlitePrivacyPolicies,
  sqliteProfiles,
  sqliteSummaries,
} from '@engram/store-sqlite'
import { PostgresAgentData } from './agents/postgres-agent-data.ts'
import { type PostgresDatabase, sharedView } from './db/client.ts'
import { postgresDialect } from './db/dialect.ts'
import { PostgresFullTextIndex } from './full-text/postgres-full-text-index.ts'

export interface PostgresStorageOptions {
  /** An open, migrated database (createPostgresDatabase + applyPostgresMigrations). */
  db: PostgresDatabase
  clock: Clock
  /** Jobs queued with each stored message, in its transaction (its embedding). */
  messageJobs?: (agentId: string, messageIds: number[]) => NewJob[]
  /** The embedding model the vector store's rows belong to. */
  vectorModel?: string
  /** When an (agent, kind) in-process vector index moves to HNSW (tests lower it). */
  vectorIndex?: { approximateAbove?: number; hnsw?: { initialCapacity?: number } }
  log?: Logger
}

/** The Postgres bundle; the shared classes' extras (failed jobs, participants) stay visible. */
export interface PostgresStorage extends Storage {
  db: PostgresDatabase
  sessions: PrismaSessionRepository
  jobs: SqliteJobQueue
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
  const sessions = new PrismaSessionRepository(shared, {
    queue: jobs,
    ...(options.messageJobs ? { jobsFor: options.messageJobs } : {}),
  })
  return {
    name: 'postgres',
    // No file to copy: backups of a Postgres deployment are the server's (pg_dump), or the
    // agents' logical export.
    capabilities: { backup: false, multiProcess: true },
    db,
    unitOfWork: new PrismaUnitOfWork(shared),
    repositories: prismaRepositories(shared),
    sessions,
    formation: new SqliteFormation(shared, sessions, postgresDialect),
    history: new SqliteConversationHistory(shared),
    fullText,
    recall: new SqliteRecallSources(shared, postgresDialect),
    // Vectors as bytes, each replica's index caught up from the table before it answers.
    vectors: new SqliteVectorStore(
      shared,
      clock,
      options.vectorModel ?? 'vector-store',
      { directory: null, ...options.vectorIndex },
      options.log,
    ),
    jobs,
    embeddings: new SqliteEmbeddingRepository(shared, jobs, postgresDialect),
    memoryItems: sqliteMemoryItems(shared, postgresDialect),
    knowledge: sqliteKnowledge(shared),
    privacyPolicies: sqlitePrivacyPolicies(shared),
    apiKeys: sqliteApiKeys(shared),
    optimizer: new SqliteOptimizerRepository(shared),
    summaries: sqliteSummaries(shared, jobs),
    profiles: sqliteProfiles(shared),
    contextSources: new SqliteContextSources(shared),
    agentData: new PostgresAgentData(db, options.log),
    close: async () => {
      await db.$disconnect()
    },
  }
}

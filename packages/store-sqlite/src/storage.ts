import type { Clock, NewJob } from '@engram/core'
import type { Logger, Storage } from '@engram/engine'
import { SqliteAgentData } from './agents/sqlite-agent-data.ts'
import { sqliteApiKeys, sqlitePrivacyPolicies } from './agents/sqlite-agent-records.ts'
import { SqliteContextSources } from './context/sqlite-context-sources.ts'
import type { Database } from './db/client.ts'
import { SqliteEmbeddingRepository } from './embeddings/sqlite-embedding-repository.ts'
import { SqliteFormation } from './formation/sqlite-formation.ts'
import { sqliteProfiles } from './formation/sqlite-profiles.ts'
import { sqliteSummaries } from './formation/sqlite-summaries.ts'
import { SqliteFullTextIndex } from './full-text/sqlite-full-text-index.ts'
import { sqliteGraph } from './graph/sqlite-graph.ts'
import { SqliteJobQueue } from './jobs/sqlite-job-queue.ts'
import { sqliteKnowledge } from './knowledge/sqlite-knowledge.ts'
import { SqliteCompaction, sqliteMaintenance } from './maintenance/sqlite-maintenance.ts'
import { sqliteMemoryItems } from './memory-items/sqlite-memory-items.ts'
import { SqliteOptimizerRepository } from './optimizer/sqlite-optimizer-repository.ts'
import { sqlitePools } from './pools/sqlite-pools.ts'
import { SqliteRecallSources } from './recall/sqlite-recall-sources.ts'
import { prismaRepositories } from './repositories/prisma-repositories.ts'
import { PrismaUnitOfWork } from './repositories/prisma-unit-of-work.ts'
import { PrismaSessionRepository } from './sessions/prisma-session-repository.ts'
import { SqliteConversationHistory } from './sessions/sqlite-conversation-history.ts'
import { sqliteTrajectories } from './trajectories/atomic-trajectories.ts'
import { type SqliteBackupOptions, SqliteBackupStore } from './transfer/sqlite-backup-store.ts'
import { SqliteVectorStore, type VectorIndexOptions } from './vector/sqlite-vector-store.ts'

export interface SqliteStorageOptions {
  /** An open, migrated database (createDatabase + applyMigrations). */
  db: Database
  clock: Clock
  /** Jobs queued with each stored message, in its transaction (its embedding). */
  messageJobs?: (agentId: string, messageIds: number[]) => NewJob[]
  /** The embedding model the vector store's rows belong to. */
  vectorModel?: string
  /** How the vector indexes are kept: the folder for saved HNSW graphs, when HNSW takes over. */
  vectorIndex?: VectorIndexOptions
  /** Where index maintenance reports failures and rebuilds. */
  /** Where the purge reports a WAL it could not truncate (console when none is given). */
  log?: Logger
  /** The database file and the folder for backups; without them the store declares no backup. */
  backups?: SqliteBackupOptions | null
}

/** The SQLite adapter's bundle; the concrete types stay visible to code that needs SQLite's extras. */
export interface SqliteStorage extends Storage {
  db: Database
  sessions: PrismaSessionRepository
  fullText: SqliteFullTextIndex
  recall: SqliteRecallSources
  vectors: SqliteVectorStore
  jobs: SqliteJobQueue
  embeddings: SqliteEmbeddingRepository
  backups?: SqliteBackupStore
}

export function createSqliteStorage(options: SqliteStorageOptions): SqliteStorage {
  const { db, clock } = options
  const jobs = new SqliteJobQueue(db, clock)
  const messageJobs = options.messageJobs
  const fullText = new SqliteFullTextIndex(db)
  // Always given the queue: the engine adds its own producers (extraction) to the caller's.
  const sessions = new PrismaSessionRepository(db, {
    queue: jobs,
    ...(messageJobs ? { jobsFor: messageJobs } : {}),
  })
  const vectors = new SqliteVectorStore(
    db,
    clock,
    options.vectorModel ?? 'vector-store',
    options.vectorIndex,
    options.log,
  )
  return {
    name: 'sqlite',
    capabilities: { backup: options.backups != null, multiProcess: true },
    db,
    unitOfWork: new PrismaUnitOfWork(db),
    repositories: prismaRepositories(db),
    sessions,
    formation: new SqliteFormation(db, sessions),
    history: new SqliteConversationHistory(db),
    fullText,
    recall: new SqliteRecallSources(db),
    vectors,
    jobs,
    embeddings: new SqliteEmbeddingRepository(db, jobs),
    memoryItems: sqliteMemoryItems(db),
    knowledge: sqliteKnowledge(db),
    graph: sqliteGraph(db),
    trajectories: sqliteTrajectories(db),
    pools: sqlitePools(db),
    privacyPolicies: sqlitePrivacyPolicies(db),
    apiKeys: sqliteApiKeys(db),
    optimizer: new SqliteOptimizerRepository(db),
    summaries: sqliteSummaries(db, jobs),
    profiles: sqliteProfiles(db),
    contextSources: new SqliteContextSources(db),
    agentData: new SqliteAgentData(db, options.log),
    maintenance: sqliteMaintenance(db),
    compaction: new SqliteCompaction(db, vectors, options.log),
    ...(options.backups ? { backups: new SqliteBackupStore(db, clock, options.backups) } : {}),
    close: async () => {
      fullText.close()
      await db.$disconnect()
    },
  }
}

import type { Clock, NewJob } from '@engram/core'
import type { Logger, Storage } from '@engram/engine'
import { SqliteAgentData } from './agents/sqlite-agent-data.ts'
import { SqliteContextSources } from './context/sqlite-context-sources.ts'
import type { Database } from './db/client.ts'
import { SqliteFullTextIndex } from './full-text/sqlite-full-text-index.ts'
import { SqliteJobQueue } from './jobs/sqlite-job-queue.ts'
import { SqliteOptimizerRepository } from './optimizer/sqlite-optimizer-repository.ts'
import { prismaRepositories } from './repositories/prisma-repositories.ts'
import { PrismaUnitOfWork } from './repositories/prisma-unit-of-work.ts'
import { PrismaSessionRepository } from './sessions/prisma-session-repository.ts'
import { SqliteVectorStore } from './vector/sqlite-vector-store.ts'

export interface SqliteStorageOptions {
  /** An open, migrated database (createDatabase + applyMigrations). */
  db: Database
  clock: Clock
  /** Jobs queued with each stored message, in its transaction (its embedding). */
  messageJobs?: (agentId: string, messageIds: number[]) => NewJob[]
  /** The embedding model the vector store's rows belong to. */
  vectorModel?: string
  /** Where the purge reports a WAL it could not truncate (console when none is given). */
  log?: Logger
}

/** The SQLite adapter's bundle; the concrete types stay visible to code that needs SQLite's extras. */
export interface SqliteStorage extends Storage {
  db: Database
  sessions: PrismaSessionRepository
  fullText: SqliteFullTextIndex
  vectors: SqliteVectorStore
  jobs: SqliteJobQueue
}

export function createSqliteStorage(options: SqliteStorageOptions): SqliteStorage {
  const { db, clock } = options
  const jobs = new SqliteJobQueue(db, clock)
  const messageJobs = options.messageJobs
  const fullText = new SqliteFullTextIndex(db)
  return {
    name: 'sqlite',
    capabilities: { backup: true, multiProcess: true },
    db,
    unitOfWork: new PrismaUnitOfWork(db),
    repositories: prismaRepositories(db),
    sessions: new PrismaSessionRepository(
      db,
      messageJobs ? { queue: jobs, jobsFor: messageJobs } : undefined,
    ),
    fullText,
    vectors: new SqliteVectorStore(db, clock, options.vectorModel ?? 'vector-store'),
    jobs,
    optimizer: new SqliteOptimizerRepository(db),
    contextSources: new SqliteContextSources(db),
    agentData: new SqliteAgentData(db, options.log),
    close: async () => {
      fullText.close()
      await db.$disconnect()
    },
  }
}

import type { Clock, NewJob } from '@engram/core'
import type { Storage } from '@engram/engine'
import type { Database } from './db/client.ts'
import { SqliteFullTextIndex } from './full-text/sqlite-full-text-index.ts'
import { SqliteJobQueue } from './jobs/sqlite-job-queue.ts'
import { prismaRepositories } from './repositories/prisma-repositories.ts'
import { PrismaUnitOfWork } from './repositories/prisma-unit-of-work.ts'
import { PrismaSessionRepository } from './sessions/prisma-session-repository.ts'
import { type SqliteBackupOptions, SqliteBackupStore } from './transfer/sqlite-backup-store.ts'
import { SqliteVectorStore } from './vector/sqlite-vector-store.ts'

export interface SqliteStorageOptions {
  /** An open, migrated database (createDatabase + applyMigrations). */
  db: Database
  clock: Clock
  /** Jobs queued with each stored message, in its transaction (its embedding). */
  messageJobs?: (agentId: string, messageIds: number[]) => NewJob[]
  /** The embedding model the vector store's rows belong to. */
  vectorModel?: string
  /** The database file and the folder for backups; without them the store declares no backup. */
  backups?: SqliteBackupOptions | null
}

/** The SQLite adapter's bundle; the concrete types stay visible to code that needs SQLite's extras. */
export interface SqliteStorage extends Storage {
  db: Database
  sessions: PrismaSessionRepository
  fullText: SqliteFullTextIndex
  vectors: SqliteVectorStore
  jobs: SqliteJobQueue
  backups?: SqliteBackupStore
}

export function createSqliteStorage(options: SqliteStorageOptions): SqliteStorage {
  const { db, clock } = options
  const jobs = new SqliteJobQueue(db, clock)
  const messageJobs = options.messageJobs
  const fullText = new SqliteFullTextIndex(db)
  return {
    name: 'sqlite',
    capabilities: { backup: options.backups != null, multiProcess: true },
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
    ...(options.backups ? { backups: new SqliteBackupStore(db, clock, options.backups) } : {}),
    close: async () => {
      fullText.close()
      await db.$disconnect()
    },
  }
}

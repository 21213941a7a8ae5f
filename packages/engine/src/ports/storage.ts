import type { BackupStore } from './backup-store.ts'
import type { FullTextIndex } from './full-text.ts'
import type { JobQueue } from './job-queue.ts'
import type { Repositories, SessionRepository } from './repositories.ts'
import type { UnitOfWork } from './unit-of-work.ts'
import type { VectorStore } from './vector-store.ts'

/** What an adapter can do beyond the ports, declared so the engine never probes for methods. */
export interface StorageCapabilities {
  /** Online backup and restore of the whole store. */
  backup: boolean
  /** Several processes may share the store (leases and counters hold across them). */
  multiProcess: boolean
}

/** One storage adapter's bundle, built by start-up code and handed to createEngine. */
export interface Storage {
  name: string
  capabilities: StorageCapabilities
  unitOfWork: UnitOfWork
  /** The repositories outside any transaction: each call commits on its own. */
  repositories: Repositories
  sessions: SessionRepository
  fullText: FullTextIndex
  vectors: VectorStore
  jobs: JobQueue
  /** Present exactly when `capabilities.backup` is declared. */
  backups?: BackupStore
  close(): Promise<void>
}

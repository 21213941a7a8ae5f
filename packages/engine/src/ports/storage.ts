import type { AgentDataStore } from './agent-data.ts'
import type { ContextSources } from './context-sources.ts'
import type { FullTextIndex } from './full-text.ts'
import type { JobQueue } from './job-queue.ts'
import type { OptimizerRepository } from './optimizer.ts'
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
  /** The optimizer's entries, knowledge decay and snapshot history. */
  optimizer: OptimizerRepository
  /** What memoryContext's sections read. */
  contextSources: ContextSources
  /** The physical purge of deleted agents' data and the count of what remains. */
  agentData: AgentDataStore
  close(): Promise<void>
}

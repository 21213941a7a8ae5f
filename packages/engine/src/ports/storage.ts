import type { AgentDataStore } from './agent-data.ts'
import type { ApiKeyRepository } from './api-keys.ts'
import type { BackupStore } from './backup-store.ts'
import type { ContextSources } from './context-sources.ts'
import type { ConversationHistory } from './conversation-history.ts'
import type { EmbeddingRepository } from './embeddings.ts'
import type { FormationRepository } from './formation.ts'
import type { FullTextIndex } from './full-text.ts'
import type { GraphRepository } from './graph.ts'
import type { JobQueue } from './job-queue.ts'
import type { KnowledgeRepository } from './knowledge.ts'
import type { MaintenanceRepository, StoreCompaction } from './maintenance.ts'
import type { MemoryItemRepository } from './memory-items.ts'
import type { OptimizerRepository } from './optimizer.ts'
import type { PoolRepository } from './pools.ts'
import type { PrivacyPolicyRepository } from './privacy-policies.ts'
import type { ProfileRepository } from './profiles.ts'
import type { RecallSources } from './recall-sources.ts'
import type { Repositories, SessionRepository } from './repositories.ts'
import type { SummaryRepository } from './summaries.ts'
import type { TrajectoryMemoryRepository } from './trajectories.ts'
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
  /** Paged reads of sessions and messages. */
  history: ConversationHistory
  fullText: FullTextIndex
  /** What search reads besides the index and the vectors: rows by id, dialogue, participants. */
  recall: RecallSources
  vectors: VectorStore
  /** Owner texts, the per-agent vector cache and other models' vectors, for embedding. */
  embeddings: EmbeddingRepository
  jobs: JobQueue
  /** Long-term memory items (spec 003), with their verification reads and the agent's memory settings. */
  memoryItems: MemoryItemRepository
  /** The cross-session knowledge tier. */
  knowledge: KnowledgeRepository
  /** The knowledge graph: entities, bi-temporal relationships and where each was learnt (issue 15). */
  graph: GraphRepository
  /** Trajectory memory (spec 004, issue 16): the run registry, trajectories, run sessions, app facts, selectors, hints. */
  trajectories: TrajectoryMemoryRepository
  /** Shared memory pools (issue 17): pools, members, who contributed which memory. */
  pools: PoolRepository
  /** Each agent's sensitive-data policy (spec 001). */
  privacyPolicies: PrivacyPolicyRepository
  /** API keys (agents themselves are in `repositories.agents`). */
  apiKeys: ApiKeyRepository
  /** The optimizer's entries, knowledge decay and snapshot history. */
  optimizer: OptimizerRepository
  /** Automatic conversation summaries and the cursors that schedule them (issue 13 §3). */
  summaries: SummaryRepository
  /** The generated user profiles, every version kept (issue 13 §4). */
  profiles: ProfileRepository
  /** What memoryContext's sections read. */
  contextSources: ContextSources
  /** Automatic memory formation's watermarks, and its jobs queued with stored messages. */
  formation: FormationRepository
  /** The physical purge of deleted agents' data and the count of what remains. */
  agentData: AgentDataStore
  /** Maintenance's runs and retention reads (issue 17 §4). */
  maintenance: MaintenanceRepository
  /** The store's compaction (vacuum, full-text merge, WAL truncation), run by maintenance. */
  compaction: StoreCompaction
  /** Present exactly when `capabilities.backup` is declared. */
  backups?: BackupStore
  close(): Promise<void>
}

import path from 'node:path'
import {
  type Clock,
  createHashingEmbedder,
  DEFAULT_LIMITS,
  DEFAULT_OPTIMIZER_CONFIG,
  type Embedder,
  type KeyFactMode,
  type LexicalPlanConfig,
  LexicalPlanConfigSchema,
  type Limits,
  parseWith,
  type TokenCounter,
} from '@engram/core'
import { AgentWrites, createEngine, type Logger, TransferService } from '@engram/engine'
import { createSqliteStorage, type Database } from '@engram/store-sqlite'
import { LiveTokens } from '../auth.ts'
import {
  EMBED_JOB,
  EMBED_JOBS_PER_SEARCH,
  embedJob,
  embedJobCounts,
  enqueueMissingEmbeddings,
  registerEmbedJobs,
} from '../jobs/embed-jobs.ts'
import { asEventBus, type EngramPubSub } from '../pubsub.ts'
import { AgentLifecycle } from './agent-lifecycle.ts'
import { AgentService } from './agent-service.ts'
import { ContextService } from './context-service.ts'
import { EmbeddingService, type VectorIndexOptions } from './embedding-service.ts'
import { KnowledgeService } from './knowledge-service.ts'
import { MemoryItemService } from './memory-item-service.ts'
import { OptimizerService } from './optimizer-service.ts'
import { PrivacyService } from './privacy-service.ts'
import { SearchService } from './search-service.ts'

export interface ServicesOptions {
  db: Database
  clock: Clock
  tokenCounter: TokenCounter
  pubsub: EngramPubSub
  limits?: Limits
  optimizerIntervalMs?: number
  /** What the optimizer counts as an error key fact (default: spec 000's words). */
  keyFactMode?: KeyFactMode
  log?: Logger
  /** The embedding provider; the offline hashing embedder when none is given. */
  embedder?: Embedder
  /** When common query terms stop selecting documents (see planLexicalQuery). */
  lexicalPlan?: Partial<LexicalPlanConfig>
  /** The SQLite file and the folder for backups (null: backups unavailable, e.g. in-memory tests). */
  databaseFile?: string | null
  backupDirectory?: string | null
  /** How often a started job worker looks for due jobs (ms); see JobWorker. */
  jobPollIntervalMs?: number
  /** When an (agent, kind) vector index moves to HNSW, and its graph parameters (tests lower them). */
  vectorIndex?: Pick<VectorIndexOptions, 'approximateAbove' | 'hnsw'>
}

export type Services = ReturnType<typeof createServices>

/** Wires the core engine to its SQLite adapters; one set per server process. */
export function createServices(options: ServicesOptions) {
  const { db, clock, tokenCounter, pubsub } = options
  const limits = options.limits ?? DEFAULT_LIMITS
  const log = options.log ?? console
  // The SQLite adapter's bundle. Each message's embed job is queued in the transaction that
  // stores the message.
  const storage = createSqliteStorage({
    db,
    clock,
    messageJobs: (scope, messageIds) => messageIds.map((id) => embedJob(scope, 'message', id)),
    // Backups need a file to copy and a folder to put copies in; without them the store has none.
    backups:
      options.databaseFile && options.backupDirectory
        ? { databaseFile: options.databaseFile, directory: options.backupDirectory }
        : null,
  })
  const engine = createEngine({
    storage,
    clock,
    tokenCounter,
    events: asEventBus(pubsub),
    log,
    limits,
    jobPollIntervalMs: options.jobPollIntervalMs,
  })
  const { parameters, memory, sessions, jobs } = engine
  const jobQueue = storage.jobs
  const sessionRepository = storage.sessions
  const writes = new AgentWrites()
  const privacy = new PrivacyService(db)
  const embeddings = new EmbeddingService(
    db,
    options.embedder ?? createHashingEmbedder(),
    clock,
    pubsub,
    log,
    {
      // HNSW graphs of large indexes are saved beside the database, so a restart loads them.
      directory: options.databaseFile ? path.join(path.dirname(options.databaseFile), 'vectors') : null,
      ...options.vectorIndex,
    },
    writes,
  )
  registerEmbedJobs(jobs, embeddings)
  embeddings.useJobs({
    enqueue: (agentId, kind, ownerIds) => jobQueue.enqueue(ownerIds.map((id) => embedJob(agentId, kind, id))),
    enqueueMissing: (agentId) => enqueueMissingEmbeddings(jobQueue, embeddings.model, agentId),
    runFor: (agentId) => jobs.runFor(EMBED_JOB, agentId, EMBED_JOBS_PER_SEARCH),
    counts: (agentId) => embedJobCounts(jobQueue, agentId),
  })
  const memoryItems = new MemoryItemService(db, clock, tokenCounter, limits, privacy, embeddings)
  const search = new SearchService(
    db,
    limits,
    embeddings,
    memoryItems,
    () => clock.now(),
    writes,
    parseWith(LexicalPlanConfigSchema, options.lexicalPlan ?? {}, 'lexicalPlan'),
  )
  const context = new ContextService(db, clock, tokenCounter, memoryItems, search, writes)
  const optimizer = new OptimizerService(
    db,
    clock,
    tokenCounter,
    parameters,
    memory,
    pubsub,
    {
      intervalMs: options.optimizerIntervalMs ?? DEFAULT_OPTIMIZER_CONFIG.intervalMs,
      snapshotHistoryLimit: DEFAULT_OPTIMIZER_CONFIG.snapshotHistoryLimit,
      keyFactMode: options.keyFactMode ?? 'spec',
    },
    log,
    writes,
  )
  const agents = new AgentService(db)
  const lifecycle = new AgentLifecycle({
    db,
    agents,
    writes,
    context,
    embeddings,
    sessions,
    memory,
    search,
    optimizer,
    pubsub,
    log,
  })
  const transfer = new TransferService({
    storage,
    clock,
    tokenCounter,
    limits,
    privacy,
    embeddings,
    writes,
    lifecycle,
  })
  return {
    engine,
    storage,
    db,
    clock,
    tokenCounter,
    pubsub,
    limits,
    parameters,
    memory,
    sessions,
    sessionRepository,
    optimizer,
    knowledge: new KnowledgeService(db, clock, limits, embeddings),
    agents,
    lifecycle,
    liveTokens: new LiveTokens(clock, undefined, (agentId) => writes.incarnation(agentId)),
    search,
    privacy,
    writes,
    embeddings,
    memoryItems,
    context,
    transfer,
    jobs,
  }
}

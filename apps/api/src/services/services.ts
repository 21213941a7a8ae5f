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
import {
  AgentLifecycle,
  AgentWrites,
  ContextService,
  createEngine,
  EmbeddingService,
  embedJob,
  KnowledgeService,
  type Logger,
  MemoryItemService,
  OptimizerService,
  SearchService,
  TransferService,
  wireEmbedJobs,
} from '@engram/engine'
import { createSqliteStorage, type Database, type VectorIndexOptions } from '@engram/store-sqlite'
import { LiveTokens } from '../auth.ts'
import { asEventBus, type EngramPubSub } from '../pubsub.ts'

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
  const embedder = options.embedder ?? createHashingEmbedder()
  const storage = createSqliteStorage({
    db,
    clock,
    messageJobs: (scope, messageIds) => messageIds.map((id) => embedJob(scope, 'message', id)),
    // The vector store holds the embedder's vectors; its HNSW graphs are saved beside the
    // database, so a restart loads them.
    vectorModel: embedder.model,
    vectorIndex: {
      directory: options.databaseFile ? path.join(path.dirname(options.databaseFile), 'vectors') : null,
      ...options.vectorIndex,
    },
    log,
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
  const { parameters, memory, sessions, jobs, privacy, agents } = engine
  const jobQueue = storage.jobs
  const sessionRepository = storage.sessions
  const writes = new AgentWrites()
  const embeddings = new EmbeddingService({
    vectors: storage.vectors,
    repository: storage.embeddings,
    embedder,
    clock,
    events: asEventBus(pubsub),
    log,
    writes,
  })
  wireEmbedJobs(embeddings, jobs, jobQueue, storage.embeddings)
  const memoryItems = new MemoryItemService(
    storage.memoryItems,
    clock,
    tokenCounter,
    limits,
    privacy,
    embeddings,
  )
  // Search reads through the storage ports; vectors and memory settings through the services
  // that own them (still in the app), which satisfy its collaborator interfaces.
  const search = new SearchService({
    fullText: storage.fullText,
    recall: storage.recall,
    embeddings,
    memories: memoryItems,
    limits,
    clock,
    writes,
    lexicalPlan: parseWith(LexicalPlanConfigSchema, options.lexicalPlan ?? {}, 'lexicalPlan'),
  })
  const context = new ContextService(storage.contextSources, clock, tokenCounter, memoryItems, search, writes)
  const optimizer = new OptimizerService(
    storage.optimizer,
    clock,
    tokenCounter,
    parameters,
    memory,
    engine.events,
    {
      intervalMs: options.optimizerIntervalMs ?? DEFAULT_OPTIMIZER_CONFIG.intervalMs,
      snapshotHistoryLimit: DEFAULT_OPTIMIZER_CONFIG.snapshotHistoryLimit,
      keyFactMode: options.keyFactMode ?? 'spec',
    },
    log,
    writes,
  )
  const lifecycle = new AgentLifecycle({
    data: storage.agentData,
    agents,
    writes,
    context,
    embeddings,
    sessions,
    memory,
    search,
    optimizer,
    events: engine.events,
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
    knowledge: new KnowledgeService(storage.knowledge, clock, limits, embeddings),
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

import path from 'node:path'
import {
  type Clock,
  createHashingEmbedder,
  type Embedder,
  type KeyFactMode,
  type LexicalPlanConfig,
  type Limits,
  type LlmProvider,
  type TokenCounter,
} from '@engram/core'
import {
  createEngine,
  type EngineDeps,
  type EventBus,
  embedJob,
  type FormationConfig,
  type Lease,
  type Logger,
  type OfflineExtractor,
  type OfflineSummarizer,
  type ReplicaOptions,
  type Storage,
} from '@engram/engine'
import type { Database } from './db/client.ts'
import { createSqliteStorage, type SqliteStorage } from './storage.ts'
import type { VectorIndexOptions } from './vector/sqlite-vector-store.ts'

export interface SqliteEngineOptions {
  db: Database
  clock: Clock
  tokenCounter: TokenCounter
  /** Where snapshots and progress are published (the API passes yoga's pubsub); in-process when omitted. */
  events?: EventBus
  limits?: Limits
  optimizerIntervalMs?: number
  /** What the optimizer counts as an error key fact (default: spec 000's words). */
  keyFactMode?: KeyFactMode
  /** Leases giving each agent's optimizer to one replica (REDIS_URL); in process when omitted. */
  lease?: Lease
  /** The optimizer leases' TTL and renewal interval (ms; the engine's defaults when omitted). */
  optimizerLease?: { ttlMs?: number; renewMs?: number }
  /** Entries the optimizer keeps between runs over all agents (the engine's default when omitted; 0: none). */
  optimizerCachedEntries?: number
  /** Messages whose token counts contextWindow and memoryContext keep (the engine's default when omitted; 0: none). */
  messageTokenCounts?: EngineDeps['messageTokenCounts']
  log?: Logger
  /** The embedding provider; the offline hashing embedder when none is given. */
  embedder?: Embedder
  /** The language model memory formation uses (ENGRAM_LLM_*); none means offline formation. */
  llm?: LlmProvider | null
  /** Automatic memory formation's engine-wide dials (ENGRAM_EXTRACTION, ENGRAM_EXTRACTION_DEBOUNCE_MS). */
  formation?: Partial<FormationConfig>
  /** Where the offline extractor runs (the API's worker-thread pool); in process when none is given. */
  offlineExtractor?: OfflineExtractor
  /** Where summaries without a model are written (the same pool); in process when none is given. */
  offlineSummarizer?: OfflineSummarizer
  /** ENGRAM_SUMMARIES and ENGRAM_PROFILE: whether summaries and the profile form by themselves (default on). */
  automaticSummaries?: boolean
  automaticProfile?: boolean
  /** ENGRAM_GRAPH: whether memories written form the knowledge graph (default on). */
  automaticGraph?: boolean
  /** When common query terms stop selecting documents (see planLexicalQuery). */
  lexicalPlan?: Partial<LexicalPlanConfig>
  /** When search's memory accesses are written (ENGRAM_SEARCH_ACCESS_FLUSH_MS). */
  accessFlush?: EngineDeps['accessFlush']
  /** Bounds of the in-process lexical indexes' cache (see LexicalIndexCacheConfigSchema). */
  lexicalIndexes?: EngineDeps['lexicalIndexes']
  /** How much of the conversations search reads for dialogue context (ENGRAM_SEARCH_DIALOGUE_READS). */
  dialogueReads?: EngineDeps['dialogueReads']
  /** When hybrid MESSAGES search reads its candidates' rows (ENGRAM_SEARCH_CANDIDATE_ROWS). */
  candidateRows?: EngineDeps['candidateRows']
  /** Trajectory memory's rules (spec 004: similarity 0.5, traceTtlDays 30, trace scoring...); core's defaults for the rest. */
  trajectoryRules?: EngineDeps['trajectoryRules']
  /** Maintenance's rules (spec 002: retention 90 days, '0 3 * * *', compaction on); core's defaults for the rest. */
  maintenance?: EngineDeps['maintenance']
  /** Spec 002's context builder's rules (ENGRAM_CONTEXT_WINDOW, ENGRAM_CONTEXT_BUILDER_RULES); core's defaults for the rest. */
  contextBuilder?: EngineDeps['contextBuilder']
  /** Shared memory pools' limits (issue 17; ENGRAM_POOL_MAX_MEMBERS); core's defaults for the rest. */
  poolLimits?: EngineDeps['poolLimits']
  /** The SQLite file and the folder for backups (null: backups unavailable, e.g. in-memory tests). */
  databaseFile?: string | null
  backupDirectory?: string | null
  /** How often a started job worker looks for due jobs (ms); see JobWorker. */
  jobPollIntervalMs?: number
  /** When an (agent, kind) vector index moves to HNSW, and its graph parameters (tests lower them). */
  vectorIndex?: Pick<
    VectorIndexOptions,
    'approximateAbove' | 'hnsw' | 'approximateIndex' | 'slotPostings' | 'scan'
  >
  /** What several replicas share beside the database (Redis, issue 14); nothing when absent. */
  replicas?: ReplicaOptions
  /** Where cache lookups, searches, jobs and optimizer savings are reported (the API's metrics, issue 17). */
  telemetry?: EngineDeps['telemetry']
  /** The server's sampled headline series for the admin query serverMetrics (the API's ring). */
  serverMetrics?: EngineDeps['serverMetrics']
  /** Spec 002's L1 working context (issue 17): its rules and, with Redis, the store replicas share. */
  workingContext?: EngineDeps['workingContext']
}

/**
 * The engine on one SQLite database: the composition both the API (services.ts) and the embedded
 * SDK (Engram.open) start from, so the two cannot wire it differently. Nothing is started here:
 * the caller starts the optimizer's schedule and the job worker when it is ready to serve.
 */
export function createSqliteEngine(options: SqliteEngineOptions) {
  const { db, clock } = options
  const log = options.log ?? console
  const embedder = options.embedder ?? createHashingEmbedder()
  const storage = createSqliteStorage({
    db,
    clock,
    // Each message's embed job is queued in the transaction that stores the message.
    // ofNewRow: the message was created by the very transaction that queues the job (ids AUTOINCREMENT).
    messageJobs: (scope, messageIds) =>
      messageIds.map((id) => ({ ...embedJob(scope, 'message', id), ofNewRow: true })),
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
  return composeEngine(storage, { ...options, embedder, log })
}

/** What composeEngine needs besides the storage: the engine's dials, adapter-neutral. */
export type EngineCompositionOptions = Omit<
  SqliteEngineOptions,
  'db' | 'databaseFile' | 'backupDirectory' | 'vectorIndex' | 'embedder' | 'log'
> & { embedder: Embedder; log: Logger }

/**
 * The engine on a storage bundle, wired one way whichever adapter holds the data (the SQLite
 * composition above, the Postgres one in @engram/store-postgres), so the two cannot drift.
 */
export function composeEngine<S extends Storage>(storage: S, options: EngineCompositionOptions) {
  return createEngine({
    storage,
    clock: options.clock,
    tokenCounter: options.tokenCounter,
    events: options.events,
    log: options.log,
    limits: options.limits,
    jobPollIntervalMs: options.jobPollIntervalMs,
    embedder: options.embedder,
    lexicalPlan: options.lexicalPlan,
    accessFlush: options.accessFlush,
    lexicalIndexes: options.lexicalIndexes,
    dialogueReads: options.dialogueReads,
    candidateRows: options.candidateRows,
    messageTokenCounts: options.messageTokenCounts,
    optimizer: {
      intervalMs: options.optimizerIntervalMs,
      keyFactMode: options.keyFactMode,
      leaseTtlMs: options.optimizerLease?.ttlMs,
      leaseRenewMs: options.optimizerLease?.renewMs,
      cachedEntries: options.optimizerCachedEntries,
    },
    ...(options.lease ? { lease: options.lease } : {}),
    formation: options.formation,
    // Memories, summaries and the profile are written by the model when one is configured.
    llm: options.llm ?? null,
    ...(options.offlineExtractor ? { offlineExtractor: options.offlineExtractor } : {}),
    ...(options.offlineSummarizer ? { offlineSummarizer: options.offlineSummarizer } : {}),
    automaticSummaries: options.automaticSummaries,
    automaticProfile: options.automaticProfile,
    automaticGraph: options.automaticGraph,
    ...(options.trajectoryRules ? { trajectoryRules: options.trajectoryRules } : {}),
    ...(options.maintenance ? { maintenance: options.maintenance } : {}),
    ...(options.contextBuilder ? { contextBuilder: options.contextBuilder } : {}),
    ...(options.poolLimits ? { poolLimits: options.poolLimits } : {}),
    ...(options.replicas ? { replicas: options.replicas } : {}),
    ...(options.telemetry ? { telemetry: options.telemetry } : {}),
    ...(options.serverMetrics ? { serverMetrics: options.serverMetrics } : {}),
    ...(options.workingContext ? { workingContext: options.workingContext } : {}),
  })
}

export type SqliteEngine = ReturnType<typeof composeEngine<SqliteStorage>>

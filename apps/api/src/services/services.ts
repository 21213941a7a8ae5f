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
import { createEngine, embedJob, type FormationConfig, type Logger } from '@engram/engine'
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
  /** ENGRAM_SUMMARIES and ENGRAM_PROFILE: whether summaries and the profile form by themselves. */
  automaticSummaries?: boolean
  automaticProfile?: boolean
  log?: Logger
  /** The embedding provider; the offline hashing embedder when none is given. */
  embedder?: Embedder
  /** The language model memory formation uses (ENGRAM_LLM_*); none means offline formation. */
  llm?: LlmProvider | null
  /** When common query terms stop selecting documents (see planLexicalQuery). */
  lexicalPlan?: Partial<LexicalPlanConfig>
  /** The SQLite file and the folder for backups (null: backups unavailable, e.g. in-memory tests). */
  databaseFile?: string | null
  backupDirectory?: string | null
  /** How often a started job worker looks for due jobs (ms); see JobWorker. */
  jobPollIntervalMs?: number
  /** Automatic memory formation's engine-wide dials (ENGRAM_EXTRACTION, ENGRAM_EXTRACTION_DEBOUNCE_MS). */
  formation?: Partial<FormationConfig>
  /** When an (agent, kind) vector index moves to HNSW, and its graph parameters (tests lower them). */
  vectorIndex?: Pick<VectorIndexOptions, 'approximateAbove' | 'hnsw'>
}

export type Services = ReturnType<typeof createServices>

/**
 * The API's composition root: the engine on the SQLite adapter, plus what only the GraphQL door
 * has (yoga's pubsub as the engine's event bus, live tokens for browsers). One set per process.
 */
export function createServices(options: ServicesOptions) {
  const { db, clock, tokenCounter, pubsub } = options
  const log = options.log ?? console
  const embedder = options.embedder ?? createHashingEmbedder()
  const storage = createSqliteStorage({
    db,
    clock,
    // Each message's embed job is queued in the transaction that stores the message.
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
    limits: options.limits,
    jobPollIntervalMs: options.jobPollIntervalMs,
    embedder,
    lexicalPlan: options.lexicalPlan,
    optimizer: { intervalMs: options.optimizerIntervalMs, keyFactMode: options.keyFactMode },
    formation: options.formation,
    // Memories, summaries and the profile are written by the model when one is configured.
    llm: options.llm ?? null,
    automaticSummaries: options.automaticSummaries,
    automaticProfile: options.automaticProfile,
  })
  return {
    ...engine,
    engine,
    db,
    pubsub,
    llm: options.llm ?? null,
    sessionRepository: storage.sessions,
    liveTokens: new LiveTokens(clock, undefined, (agentId) => engine.writes.incarnation(agentId)),
  }
}

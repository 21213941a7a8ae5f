import {
  type Clock,
  DEFAULT_LIMITS,
  DEFAULT_OPTIMIZER_CONFIG,
  type HashingEmbedder,
  type Limits,
  PersistentSessionManager,
  summarizeMessages,
  type TokenCounter,
} from '@engram/core'
import { LiveTokens } from '../auth.ts'
import type { Database } from '../db/client.ts'
import type { EngramPubSub } from '../pubsub.ts'
import { AgentService } from './agent-service.ts'
import { KnowledgeService } from './knowledge-service.ts'
import { MemoryService } from './memory-service.ts'
import { type Logger, OptimizerService } from './optimizer-service.ts'
import { ParameterStore } from './parameter-store.ts'
import { PrismaSessionRepository } from './prisma-session-repository.ts'
import { PrivacyService } from './privacy-service.ts'
import { SearchService } from './search-service.ts'

export interface ServicesOptions {
  db: Database
  clock: Clock
  tokenCounter: TokenCounter
  pubsub: EngramPubSub
  limits?: Limits
  optimizerIntervalMs?: number
  log?: Logger
  /** Embeds messages for hybrid search; the plain hashing embedder when absent. */
  embedder?: HashingEmbedder
}

export type Services = ReturnType<typeof createServices>

/** Wires the core engine to its SQLite adapters; one set per server process. */
export function createServices(options: ServicesOptions) {
  const { db, clock, tokenCounter, pubsub } = options
  const limits = options.limits ?? DEFAULT_LIMITS
  const parameters = new ParameterStore(db)
  const memory = new MemoryService(db, clock, tokenCounter, limits, parameters)
  const sessions = new PersistentSessionManager({
    repository: new PrismaSessionRepository(db),
    clock,
    tokenCounter,
    summarize: (messages) => summarizeMessages(messages),
    limits,
  })
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
    },
    options.log,
  )
  return {
    db,
    clock,
    tokenCounter,
    pubsub,
    limits,
    parameters,
    memory,
    sessions,
    optimizer,
    knowledge: new KnowledgeService(db, clock, limits),
    agents: new AgentService(db),
    liveTokens: new LiveTokens(clock),
    search: new SearchService(db, limits, options.embedder),
    privacy: new PrivacyService(db),
  }
}

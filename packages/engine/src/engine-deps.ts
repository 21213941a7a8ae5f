// What createEngine is built from (engine.ts wires it): the storage adapter, providers, every
// service's rules and limits, and the sharing between replicas.
import type {
  Clock,
  ContextBuilderRulesSchema,
  Embedder,
  GraphLimits,
  KeyFactMode,
  LexicalPlanConfig,
  Limits,
  LlmProvider,
  MaintenanceRulesSchema,
  PoolLimitsSchema,
  Scheduler,
  TokenCounter,
  TrajectoryLimits,
  TrajectoryRulesSchema,
  WorkingContextRulesSchema,
} from '@engram/core'
import type { z } from 'zod'
import type { FormationConfig, FormationResult } from './formation/formation-service.ts'
import type { EpisodicStore } from './ports/episodic-store.ts'
import type { EventBus } from './ports/event-bus.ts'
import type { OfflineExtractor, OfflineSummarizer } from './ports/extractor.ts'
import type { Lease } from './ports/lease.ts'
import type { Logger } from './ports/logger.ts'
import type { ProfileVersion } from './ports/profiles.ts'
import type { ServerMetricsSource } from './ports/server-metrics.ts'
import type { Storage } from './ports/storage.ts'
import type { StoredSummary } from './ports/summaries.ts'
import type { Telemetry } from './ports/telemetry.ts'
import type { WorkingContextStore } from './ports/working-context.ts'
import type { LexicalIndexCacheConfig } from './search/lexical-indexes.ts'
import type { AccessFlushConfig } from './search/search-access.ts'
import type { DialogueReads } from './search/search-context.ts'
import type { CandidateRows } from './search/search-rows.ts'

export interface EngineDeps<S extends Storage = Storage> {
  /** The storage adapter's bundle (store-sqlite's, or the in-memory one in tests). */
  storage: S
  clock: Clock
  /** Where every delay runs (catch-ups, gathers, polls, flushes); the clock's own timers or the system's. */
  scheduler?: Scheduler
  tokenCounter: TokenCounter
  /** Where snapshots and progress are published; an in-process bus when none is given. */
  events?: EventBus
  log?: Logger
  limits?: Limits
  /** How often a started job worker looks for due jobs (ms); see JobWorker. */
  jobPollIntervalMs?: number
  /** How long a started job worker lets queued jobs gather into one batch (ms); see JobWorker. */
  jobGatherMs?: number
  /** The embedding provider; the offline hashing embedder when none is given. */
  embedder?: Embedder
  /** When common query terms stop selecting documents (see planLexicalQuery). */
  lexicalPlan?: Partial<LexicalPlanConfig>
  /** When search's memory accesses are written (search-access.ts; DEFAULT_ACCESS_FLUSH). */
  accessFlush?: Partial<AccessFlushConfig>
  /** Bounds of the in-process lexical indexes' cache (issue 18; see LexicalIndexCacheConfigSchema). */
  lexicalIndexes?: Partial<LexicalIndexCacheConfig>
  /** Messages whose token counts are kept between calls (DEFAULT_MESSAGE_TOKEN_COUNTS; 0: none). */
  messageTokenCounts?: number
  /** How much of the conversations search reads for dialogue context (search-context.ts; default `fewer`). */
  dialogueReads?: DialogueReads
  /** When hybrid MESSAGES search reads its candidates' rows (search-rows.ts; default `pool`). */
  candidateRows?: CandidateRows
  /**
   * The scheduled optimizer: how often it runs (0: never on its own), what counts as an error key
   * fact, its leases' TTL and renewal interval (ms), and how many entries it keeps between runs
   * (see OptimizerService).
   */
  optimizer?: {
    intervalMs?: number
    keyFactMode?: KeyFactMode
    leaseTtlMs?: number
    leaseRenewMs?: number
    cachedEntries?: number
  }
  /**
   * Leases that give each agent's optimizer to one replica (REDIS_URL: Redis's); in process when
   * none is given, which one replica is always granted.
   */
  lease?: Lease
  /**
   * The language model automatic memory formation asks, and summaries and profiles are written
   * by; the offline extractor and extractive summaries and profiles when none is given.
   */
  llm?: LlmProvider | null
  /** Automatic memory formation's engine-wide dials (debounce, turns per extractor call). */
  formation?: Partial<FormationConfig>
  /** Where the offline extractor runs (a server's worker-thread pool); in process when none is given. */
  offlineExtractor?: OfflineExtractor
  /** Where summaries without a model are written (the same pool in a server); in process when none is given. */
  offlineSummarizer?: OfflineSummarizer
  /** Whether stored turns schedule their conversation's summary (default true); off, summaries form on request only. */
  automaticSummaries?: boolean
  /** Whether new memories rebuild the profile (default true); off, on request only (a deleted memory still leaves it). */
  automaticProfile?: boolean
  /** Whether memories written queue their graph formation (default true); off, deletions still leave the graph. */
  automaticGraph?: boolean
  /** The knowledge graph's limits (names, aliases, edges per entity, entities per agent, traversal); core's defaults when not given. */
  graphLimits?: GraphLimits
  /** What several replicas on one database share beside it (issue 14); nothing when absent. */
  replicas?: ReplicaOptions
  /** Trajectory memory's rules (spec 004's numbers by default; any subset, nested ones too). */
  trajectoryRules?: z.input<typeof TrajectoryRulesSchema>
  /** Trajectory memory's size limits (core's defaults when not given). */
  trajectoryLimits?: Partial<TrajectoryLimits>
  /** Where generated ids (runs, run sessions, trajectories) draw their suffix; Math.random when none. */
  random?: () => number
  /** Where cache lookups, searches, jobs and flushes are reported for metrics (issue 17); nowhere when none. */
  telemetry?: Telemetry
  /** Maintenance's rules (spec 002's: retention 90 days, 3 AM daily, compaction on; any subset). */
  maintenance?: z.input<typeof MaintenanceRulesSchema>
  /** Spec 002's context builder's rules (window, reserves, memory share, weights...); core's defaults for the rest. */
  contextBuilder?: z.input<typeof ContextBuilderRulesSchema>
  /** Shared memory pools' limits (issue 17; core's defaults when not given). */
  poolLimits?: z.input<typeof PoolLimitsSchema>
  /** The server's sampled headline series (the API's metrics ring) for serverMetrics; an empty ring when none. */
  serverMetrics?: ServerMetricsSource
  /**
   * Spec 002's L1 working context (issue 17): its rules (LRU size, TTL, flush threshold, limits;
   * core's defaults for what is not given) and, with several replicas, the store they share it in.
   */
  workingContext?: { rules?: z.input<typeof WorkingContextRulesSchema>; store?: WorkingContextStore | null }
}

/** Issue 14's sharing between replicas, chosen by start-up code (REDIS_URL). */
export interface ReplicaOptions {
  /** Spec 002's L2 episodic layer (Redis sorted sets), read before the database. */
  episodic?: EpisodicStore | null
  /**
   * Publish every change to an agent's rows as `cache:invalidate` and drop what other replicas
   * change. Only worth it when the event bus crosses processes (Redis).
   */
  invalidateCaches?: boolean
}

/** What a sync formed: memories (with the verification's counts), summaries and profile versions. */
export interface SyncResult extends FormationResult {
  summaries: StoredSummary[]
  profileVersions: ProfileVersion[]
}

import path from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  ContextBuilderRulesSchema,
  DEFAULT_KERNEL_ABOVE,
  DEFAULT_LEXICAL_PLAN,
  DEFAULT_METRICS_RULES,
  DEFAULT_OPTIMIZER_CONFIG,
  isCronExpression,
  KEY_FACT_MODES,
  MAX_CONTEXT_WINDOW_TOKENS,
  MAX_METRICS_SAMPLES,
  MetricsRulesSchema,
  MIN_CONTEXT_WINDOW_TOKENS,
  RETENTION_DAYS_MAX,
  RETENTION_DAYS_MIN,
  TOKENIZER_NAMES,
  TrajectoryRulesSchema,
  type WorkingContextRules,
  WorkingContextRulesSchema,
} from '@engram/core'
import {
  DEFAULT_ACCESS_FLUSH,
  DEFAULT_FORMATION_CONFIG,
  DEFAULT_MESSAGE_TOKEN_COUNTS,
  DEFAULT_OPTIMIZER_CACHED_ENTRIES,
  DEFAULT_OPTIMIZER_LEASE_RENEW_MS,
  DEFAULT_OPTIMIZER_LEASE_TTL_MS,
} from '@engram/engine'
import {
  DEFAULT_ATTEMPT_TIMEOUT_MS,
  DEFAULT_LLM_MAX_CONCURRENCY,
  MAX_LLM_MAX_CONCURRENCY,
} from '@engram/providers'
import { z } from 'zod'

/** ENGRAM_SEARCH_DIALOGUE_READS' values (engine's DialogueReads), default first. */
const DIALOGUE_READS = ['index', 'fewer', 'all'] as const

/** A bench's ENGRAM_SEARCH_DIALOGUE_READS: one of the values, the default for anything else. */
export function dialogueReadsOf(value: string | undefined): (typeof DIALOGUE_READS)[number] {
  return DIALOGUE_READS.find((reads) => reads === value) ?? 'index'
}

/** ENGRAM_SEARCH_CANDIDATE_ROWS' values (engine's CandidateRows), default first. */
const CANDIDATE_ROWS = ['pool', 'all'] as const

/** A bench's ENGRAM_SEARCH_CANDIDATE_ROWS: one of the values, the default for anything else. */
export function candidateRowsOf(value: string | undefined): (typeof CANDIDATE_ROWS)[number] {
  return CANDIDATE_ROWS.find((rows) => rows === value) ?? 'pool'
}

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')
export const DEFAULT_DATABASE_URL = `file:${path.join(REPO_ROOT, 'data', 'engram.db')}`
export const DEFAULT_EMBEDDING_MODEL_PATH = path.join(REPO_ROOT, 'data', 'models')
// Spec 002's L2 defaults, the same as @engram/bus-redis's (which this file may not import: only
// start-up files load Redis code); env.test.ts checks that they agree.
export const DEFAULT_L2_TTL_SECONDS = 24 * 60 * 60
export const DEFAULT_L2_MAX_MESSAGES = 500
/** The L2 TTL's ceiling: 30 days (a set is a cache of the database, not a store). */
export const MAX_L2_TTL_SECONDS = 30 * 24 * 60 * 60
/** The L2 set's ceiling: each message is a member, so a longer set costs Redis memory and fill time. */
export const MAX_L2_MAX_MESSAGES = 10_000
/** Redis keys and channels are named under it (ENGRAM_REDIS_PREFIX). */
export const DEFAULT_REDIS_PREFIX = 'engram'
export const EMBEDDER_KINDS = ['hashing', 'openai', 'transformers'] as const

/**
 * A variable holding a JSON object of some of core's rules, checked against their schema at
 * start-up (each issue named by its key). Only the rules given are kept: the others keep the
 * engine's defaults.
 */
function jsonRules<S extends z.ZodObject>(schema: S, what: string) {
  return z
    .string()
    .optional()
    .transform((text, ctx) => {
      if (text === undefined || text.trim() === '') return undefined
      let value: unknown
      try {
        value = JSON.parse(text)
      } catch {
        ctx.addIssue({ code: 'custom', message: `must be a JSON object of ${what}` })
        return z.NEVER
      }
      const parsed = schema.strict().safeParse(value)
      if (!parsed.success) {
        for (const issue of parsed.error.issues)
          ctx.addIssue({ code: 'custom', message: `${issue.path.join('.') || 'rules'}: ${issue.message}` })
        return z.NEVER
      }
      const given = new Set(Object.keys(value as object))
      return Object.fromEntries(
        Object.entries(parsed.data as Record<string, unknown>).filter(([key]) => given.has(key)),
      ) as Partial<z.infer<S>>
    })
}

const port = (fallback: number) => z.coerce.number().int().min(0).max(65_535).default(fallback)

/** The server's configuration, read once from the environment at start-up. */
export const EnvSchema = z
  .object({
    NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
    /** `file:` → the embedded SQLite file; `postgres://` (or `postgresql://`) → a Postgres server. */
    DATABASE_URL: z
      .string()
      .regex(
        /^(file:.+|postgres(ql)?:\/\/.+)/,
        'must be a SQLite URL (file:/absolute/path.db) or a Postgres URL (postgres://user:password@host:5432/database)',
      )
      .default(DEFAULT_DATABASE_URL),
    /**
     * Server processes of this replica (node:cluster), all on one port and one database; each runs
     * its own event loop, so a write-heavy load uses more than one core. Events and cache
     * invalidations cross them over the cluster's IPC (Redis when REDIS_URL is set). 1 by default:
     * each process holds its own copy of every loaded vector index (RSS grows with the count) and
     * SQLite still commits one writer at a time; set it to the cores left free for requests when
     * one event loop is saturated (docs/speed-writes18.md measures 1 vs 2 on 2 cores).
     */
    ENGRAM_WORKERS: z.coerce
      .number()
      .int()
      .min(1, 'must be at least 1')
      .max(64, 'must be at most 64')
      .default(1),
    /**
     * SQLite: how long a group commit waits on the event loop for another process's write lock
     * before it hands the loop back and tries again 1 ms later (ms; 0 to 1,000; store-sqlite's
     * GROUP_COMMIT_LOCK_WAIT_MS, 2). Only other processes hold it (ENGRAM_WORKERS, a backup, a
     * second server on the file); a longer wait blocks every request of this process meanwhile.
     */
    ENGRAM_SQLITE_LOCK_WAIT_MS: z.coerce.number().int().min(0).max(1_000).default(2),
    /**
     * SQLite: when a group commit puts each write in a savepoint (store-sqlite's
     * GROUP_COMMIT_SAVEPOINTS). `on-failure` (default): the batch runs without them and is run
     * again with one per write only when a write throws; `each`: always (~40% more SQL CPU per
     * addMessage, issue 18).
     */
    ENGRAM_SQLITE_SAVEPOINTS: z.enum(['on-failure', 'each']).default('on-failure'),
    /**
     * SQLite: how the appends of one group commit insert their messages (store-sqlite's
     * APPEND_INSERTS). `per-commit` (default): counters and cursors first, then all the messages
     * in one INSERT, so the full-text index writes one segment per commit; `per-append`: each
     * append's own statements, a segment per message (the path before issue 18).
     */
    ENGRAM_SQLITE_APPEND_INSERTS: z.enum(['per-commit', 'per-append']).default('per-commit'),
    /**
     * SQLite: appends one group commit writes together at most with `per-commit` (store-sqlite's
     * APPENDS_PER_GROUP, 256; 1 to 4,096); the rest go to the next commit, so a transaction stays short.
     */
    ENGRAM_SQLITE_APPENDS_PER_GROUP: z.coerce.number().int().min(1).max(4_096).default(256),
    /**
     * SQLite: how a new message's embed job is inserted (store-sqlite's NEW_ROW_JOBS). `plain`
     * (default): plain VALUES (its key names a row the transaction just created: nothing can be
     * pending); `checked`: INSERT … WHERE NOT EXISTS a pending job of the key (before issue 18).
     */
    ENGRAM_SQLITE_NEW_ROW_JOBS: z.enum(['plain', 'checked']).default('plain'),
    /** Connections one replica keeps to Postgres at most (spec 002's poolSize); SQLite ignores it. */
    ENGRAM_DB_POOL_SIZE: z.coerce
      .number()
      .int()
      .min(1, 'must be at least 1')
      .max(200, 'must be at most 200')
      .default(10),
    /**
     * Messages one transaction of a replica's batched concurrent appends writes at most
     * (Postgres; docs/postgres-redis.md); unset: the adapter's measured default (256). SQLite
     * group-commits on its own and ignores it.
     */
    ENGRAM_DB_APPEND_BATCH: z.coerce
      .number()
      .int()
      .min(1, 'must be at least 1')
      .max(4_000, 'must be at most 4000 (Postgres bind parameters per statement)')
      .optional(),
    API_HOST: z.string().min(1).default('0.0.0.0'),
    API_PORT: port(4000),
    DASHBOARD_PORT: port(3000),
    ENGRAM_ADMIN_KEY: z
      .string()
      .min(16, 'must be at least 16 characters')
      .max(256, 'must be at most 256 characters')
      .optional(),
    OPTIMIZER_INTERVAL_MS: z.coerce
      .number()
      .int()
      .min(0, 'must be >= 0 (0 turns the schedule off)')
      .max(86_400_000, 'must be at most 86400000 (one day)')
      .default(DEFAULT_OPTIMIZER_CONFIG.intervalMs),
    /**
     * How long a replica's claim on an agent's optimizer lasts unless renewed (ms): a replica that
     * dies hands its agents over within it. Only matters with several replicas (REDIS_URL).
     */
    ENGRAM_OPTIMIZER_LEASE_TTL_MS: z.coerce
      .number()
      .int()
      .min(100)
      .max(3_600_000)
      .default(DEFAULT_OPTIMIZER_LEASE_TTL_MS),
    /**
     * Memory entries the optimizer keeps between runs over all agents (text and features), so a
     * run reads only the rows new or changed since the last; the least recently run agents go
     * first past it. 0 reads every run's entries whole.
     */
    ENGRAM_OPTIMIZER_CACHED_ENTRIES: z.coerce
      .number()
      .int()
      .min(0)
      .max(10_000_000)
      .default(DEFAULT_OPTIMIZER_CACHED_ENTRIES),
    /**
     * Messages whose token counts this process keeps between contextWindow and memoryContext
     * calls, over all agents (~150 bytes each); the least recently used go first past it. 0
     * counts every message afresh on every call.
     */
    ENGRAM_MESSAGE_TOKEN_COUNTS: z.coerce
      .number()
      .int()
      .min(0)
      .max(10_000_000)
      .default(DEFAULT_MESSAGE_TOKEN_COUNTS),
    /** How often held optimizer leases are renewed (ms); must be below the TTL. */
    ENGRAM_OPTIMIZER_LEASE_RENEW_MS: z.coerce
      .number()
      .int()
      .min(10)
      .max(3_600_000)
      .default(DEFAULT_OPTIMIZER_LEASE_RENEW_MS),
    /**
     * What the optimizer counts as an "error" key fact when it promotes: `spec` (spec 000: the
     * word anywhere) or `strict` (an actual error message, stack trace or error code).
     */
    ENGRAM_KEY_FACT_MODE: z.enum(KEY_FACT_MODES).default('spec'),
    /** Automatic conversation summaries (issue 13 §3): `auto` after each pause, switch or threshold; `off` only on request. */
    ENGRAM_SUMMARIES: z.enum(['auto', 'off']).default('auto'),
    /** The generated user profile (issue 13 §4): `auto` rebuilt as memories arrive; `off` only on request. */
    ENGRAM_PROFILE: z.enum(['auto', 'off']).default('auto'),
    /** The knowledge graph (issue 15): `auto` formed from every memory written; `off` formed by nothing (deletions still leave it). */
    ENGRAM_GRAPH: z.enum(['auto', 'off']).default('auto'),
    /** Trajectory memory (issue 16): rank reference trajectories by spec 004's 60/20/10/10 blend instead of similarity alone. */
    ENGRAM_TRACE_SCORING: z.stringbool().optional(),
    /** Days a recorded trajectory stays a candidate reference (spec 004's traceTtlDays: 30). */
    ENGRAM_TRACE_TTL_DAYS: z.coerce.number().int().min(1).max(3_650).optional(),
    /** Maintenance (issue 17 §4): `auto` runs on ENGRAM_CLEANUP_INTERVAL; `off` only on demand (runMaintenance). */
    ENGRAM_MAINTENANCE: z.enum(['auto', 'off']).default('auto'),
    /** Days episodic memory is kept after Engram stored it, unless promoted or pinned (spec 002: 90; per agent too). */
    ENGRAM_RETENTION_DAYS: z.coerce
      .number()
      .int()
      .min(RETENTION_DAYS_MIN)
      .max(RETENTION_DAYS_MAX)
      .default(90),
    /** When scheduled maintenance runs: a cron expression on UTC (spec 002: "0 3 * * *", 3 AM daily). */
    ENGRAM_CLEANUP_INTERVAL: z
      .string()
      .default('0 3 * * *')
      .refine(isCronExpression, { message: 'must be a cron expression such as "0 3 * * *"' }),
    /** Whether maintenance compacts the store (SQLite vacuum, FTS merge, WAL truncation; Postgres VACUUM). */
    ENGRAM_COMPACTION: z.stringbool().default(true),
    /**
     * Any other of trajectory memory's rules as a JSON object (core's TrajectoryRulesSchema:
     * similarityThreshold, sessionHistoryLimit, factInitialConfidence, priorities, ...), checked at
     * start-up; the two variables above win over the same keys here.
     */
    ENGRAM_TRAJECTORY_RULES: jsonRules(TrajectoryRulesSchema, 'trajectory rules'),
    /** The window spec 002's context builder (memoryContext's buildContext) assumes when a request names none (128,000). */
    ENGRAM_CONTEXT_WINDOW: z.coerce
      .number()
      .int()
      .min(MIN_CONTEXT_WINDOW_TOKENS)
      .max(MAX_CONTEXT_WINDOW_TOKENS)
      .optional(),
    /**
     * Any other of the context builder's rules as a JSON object (core's ContextBuilderRulesSchema:
     * systemReserveShare, tokensPerTool, memoryShare, candidateLimit, summaryMaxTokens, weights...),
     * checked at start-up; ENGRAM_CONTEXT_WINDOW wins over contextWindow here.
     */
    ENGRAM_CONTEXT_BUILDER_RULES: jsonRules(ContextBuilderRulesSchema, 'context builder rules'),
    /** Members a shared memory pool may hold (issue 17; core's DEFAULT_POOL_LIMITS: 1,000). */
    ENGRAM_POOL_MAX_MEMBERS: z.coerce.number().int().min(1).max(100_000).optional(),
    ENGRAM_TOKENIZER: z.enum(TOKENIZER_NAMES).default('o200k_base'),
    /** Automatic memory formation (issue 13 §2): `auto` extracts every conversation; `off` only on syncMemory. */
    ENGRAM_EXTRACTION: z.enum(['auto', 'off']).default('auto'),
    /** How long after a conversation's last turn its extraction runs (ms; 0 to 60,000). */
    ENGRAM_EXTRACTION_DEBOUNCE_MS: z.coerce
      .number()
      .int()
      .min(0)
      .max(60_000)
      .default(DEFAULT_FORMATION_CONFIG.extractionDebounceMs),
    /**
     * How late a conversation's pending extraction or summary job may run behind its latest turn
     * before a turn rewrites it (ms; 0 rewrites it on every turn): a burst of turns writes the
     * queue about once per this time instead of once per turn (issue 18).
     */
    ENGRAM_DEBOUNCE_GRANULARITY_MS: z.coerce
      .number()
      .int()
      .min(0)
      .max(60_000)
      .default(DEFAULT_FORMATION_CONFIG.debounceGranularityMs),
    /**
     * Worker threads running the offline extractor (issue 13 §2), off the request thread; 0 runs
     * it in process. One by default: on a 2-core machine the other core stays with requests.
     */
    ENGRAM_EXTRACTION_WORKERS: z.coerce.number().int().min(0).max(32).default(1),
    ENGRAM_MAX_QUERY_DEPTH: z.coerce.number().int().min(2).max(100).default(12),
    ENGRAM_MAX_QUERY_COST: z.coerce.number().int().min(100).max(1_000_000).default(20_000),
    /** Brackets ({ [ () a document may nest, checked before parsing (the parser recurses per level). */
    ENGRAM_MAX_QUERY_NESTING: z.coerce.number().int().min(8).max(1_000).default(64),
    /** Schema introspection; unset means on, except with NODE_ENV=production. */
    ENGRAM_INTROSPECTION: z.stringbool().optional(),
    ENGRAM_MAX_REQUEST_BYTES: z.coerce.number().int().min(1_024).max(1_073_741_824).default(16_777_216),
    ENGRAM_CORS_ORIGIN: z.string().optional(),
    /** Share of indexed documents above which a query term only ranks (see planLexicalQuery). */
    ENGRAM_SEARCH_COMMON_TERM_SHARE: z.coerce.number().gt(0).max(1).default(DEFAULT_LEXICAL_PLAN.commonShare),
    /** Indexed documents below which every query term selects (exact BM25 is cheap there). */
    ENGRAM_SEARCH_COMMON_TERM_MIN_DOCUMENTS: z.coerce
      .number()
      .int()
      .min(0)
      .max(1_000_000_000)
      .default(DEFAULT_LEXICAL_PLAN.minDocuments),
    /**
     * How long search's memory accesses wait in memory before they are written together (ms; 0
     * writes them inside each search, as before issue 18). The hits show the counts either way.
     */
    ENGRAM_SEARCH_ACCESS_FLUSH_MS: z.coerce
      .number()
      .int()
      .min(0)
      .max(60_000)
      .default(DEFAULT_ACCESS_FLUSH.flushIntervalMs),
    /** Search accesses (memory, agent) held at most before the next search writes them at once. */
    ENGRAM_SEARCH_ACCESS_MAX_PENDING: z.coerce
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .default(DEFAULT_ACCESS_FLUSH.maxPending),
    /** off: search reads postings from the store per query, as before issue 18 (for comparison). */
    ENGRAM_LEXICAL_INDEX: z.enum(['on', 'off']).default('on'),
    /**
     * In-process lexical indexes (one per agent and collection, issue 18) held at most; the least
     * recently searched is dropped and rebuilt from the store on its next search.
     */
    ENGRAM_LEXICAL_INDEX_MAX_INDEXES: z.coerce.number().int().min(1).max(1_000_000).default(256),
    /** Milliseconds after a write that a held lexical index catches up (writes within it share one). */
    ENGRAM_LEXICAL_INDEX_REFRESH_MS: z.coerce.number().int().min(0).max(60_000).default(100),
    /** Megabytes those indexes take at most (100K messages take ~25 MB). */
    ENGRAM_LEXICAL_INDEX_MAX_MB: z.coerce.number().int().min(1).max(1_048_576).default(1_024),
    /**
     * How much of the conversations hybrid search reads for dialogue context, and from where:
     * `index` (`fewer`'s reads answered from the agent's turn timeline held beside its messages'
     * lexical index, no statement), `fewer` (the turns beside the candidates, and the rows of
     * context turns that can still reach the hits, read from the store) or `all` (whole episode
     * spans and every context turn's row, as before issue 18's hybrid18 slice). The same hits;
     * the last two are kept for comparison.
     */
    ENGRAM_SEARCH_DIALOGUE_READS: z.enum(DIALOGUE_READS).default('index'),
    /**
     * When hybrid MESSAGES search reads its candidates' rows: `pool` (only the turns that reach
     * MMR's pool, after fusion; the rest is ranked on the agent's turn timeline) or `all` (every
     * candidate's row before scoring, as before issue 18's hybridmsg18 slice). The same hits; `all`
     * is kept for comparison.
     */
    ENGRAM_SEARCH_CANDIDATE_ROWS: z.enum(CANDIDATE_ROWS).default('pool'),
    /**
     * Vectors in one (agent, kind) index from which its exact scan runs on the WebAssembly SIMD
     * kernel (issue 18). Each kernel memory reserves address space, so thousands of small indexes
     * stay in JavaScript, where 1,024 x 384 dims scan in well under a millisecond anyway.
     */
    ENGRAM_VECTOR_KERNEL_ABOVE: z.coerce
      .number()
      .int()
      .min(0)
      .max(1_000_000_000)
      .default(DEFAULT_KERNEL_ABOVE),
    /** javascript: never the SIMD kernel (to compare the two, or on a host that mis-runs it). */
    ENGRAM_VECTOR_KERNEL: z.enum(['auto', 'javascript']).default('auto'),
    /** Where backupDatabase writes (default: a "backups" folder beside the database file). */
    ENGRAM_BACKUP_DIR: z.string().min(1).optional(),
    ENGRAM_EMBEDDER: z.enum(EMBEDDER_KINDS).default('hashing'),
    ENGRAM_EMBEDDING_URL: z
      .url({ protocol: /^https?$/, error: 'must be an http(s) URL such as http://127.0.0.1:11434/v1' })
      .optional(),
    ENGRAM_EMBEDDING_MODEL: z.string().min(1).optional(),
    ENGRAM_EMBEDDING_API_KEY: z.string().min(1).optional(),
    ENGRAM_EMBEDDING_DIMENSIONS: z.coerce.number().int().min(1).max(16_384).optional(),
    ENGRAM_EMBEDDING_BATCH_SIZE: z.coerce.number().int().min(1).max(2_048).default(100),
    ENGRAM_EMBEDDING_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(60_000),
    // Relative folders are taken from the repository root, like DATABASE_URL's files.
    ENGRAM_EMBEDDING_MODEL_PATH: z
      .string()
      .min(1)
      .default(DEFAULT_EMBEDDING_MODEL_PATH)
      .transform((folder) => path.resolve(REPO_ROOT, folder)),
    ENGRAM_EMBEDDING_ALLOW_REMOTE: z.stringbool().default(false),
    /**
     * An OpenAI-compatible chat endpoint for memory formation (issue 13). Unset: formation runs
     * offline (the deterministic extractor); set, with ENGRAM_LLM_MODEL: the model is used.
     */
    ENGRAM_LLM_URL: z
      .url({ protocol: /^https?$/, error: 'must be an http(s) URL such as http://127.0.0.1:11434/v1' })
      .optional(),
    ENGRAM_LLM_MODEL: z.string().min(1).optional(),
    ENGRAM_LLM_API_KEY: z.string().min(1).optional(),
    /** Per attempt (spec 003: 60 s); a slow local model may need more. */
    ENGRAM_LLM_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(DEFAULT_ATTEMPT_TIMEOUT_MS),
    /**
     * Redis for several API replicas (issue 14): events and subscriptions reach every replica.
     * Unset: one process, everything in process.
     */
    REDIS_URL: z
      .url({
        protocol: /^rediss?$/,
        error: 'must be a Redis URL such as redis://127.0.0.1:6379 (or rediss:// for TLS)',
      })
      .optional(),
    /** Names Redis keys and channels (`<prefix>:events:<topic>`), so deployments can share a server. */
    ENGRAM_REDIS_PREFIX: z
      .string()
      .regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'must be 1 to 64 letters, digits or _ . : -')
      .default(DEFAULT_REDIS_PREFIX),
    /** How long a conversation's L2 set (spec 002) lives after its last write: 24 h by default. */
    ENGRAM_L2_TTL_SECONDS: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_L2_TTL_SECONDS)
      .default(DEFAULT_L2_TTL_SECONDS),
    /** The newest messages a conversation's L2 set holds (a longer one is read from the database past them). */
    ENGRAM_L2_MAX_MESSAGES: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_L2_MAX_MESSAGES)
      .default(DEFAULT_L2_MAX_MESSAGES),
    /**
     * Who may read GET /metrics on the main port besides the admin key: `Authorization: Bearer
     * <this token>` (a Prometheus scrape config's bearer_token). Unset: the admin key only.
     */
    ENGRAM_METRICS_TOKEN: z
      .string()
      .min(16, 'must be at least 16 characters')
      .max(256, 'must be at most 256 characters')
      .optional(),
    /**
     * `host:port` of a listener of its own serving /metrics without a token (a private interface,
     * localhost for a sidecar); the main port then has no /metrics.
     */
    ENGRAM_METRICS_BIND: z
      .string()
      .regex(/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'must be host:port, such as 127.0.0.1:9464')
      .refine((bind) => Number(bind.slice(bind.lastIndexOf(':') + 1)) <= 65_535, 'port must be at most 65535')
      .optional(),
    /** How often the server samples the headline series serverMetrics and the dashboard chart (ms). */
    ENGRAM_METRICS_SAMPLE_MS: z.coerce
      .number()
      .int()
      .min(1_000, 'must be at least 1000 (one second)')
      .max(600_000, 'must be at most 600000 (ten minutes)')
      .default(DEFAULT_METRICS_RULES.sampleIntervalMs),
    /** How long those samples are kept (ms): the last hour by default. */
    ENGRAM_METRICS_WINDOW_MS: z.coerce
      .number()
      .int()
      .min(60_000, 'must be at least 60000 (one minute)')
      .max(86_400_000, 'must be at most 86400000 (one day)')
      .default(DEFAULT_METRICS_RULES.windowMs),
    // Spec 002's L1 working context (issue 17); each checked against core's WorkingContextRulesSchema below.
    /** Agents whose working context one replica's LRU holds (spec 002: 1,000). */
    ENGRAM_WORKING_CONTEXT_MAX_AGENTS: z.coerce.number().int().optional(),
    /** The LRU's size in bytes of the held contexts (spec 002: 500 MB). */
    ENGRAM_WORKING_CONTEXT_MAX_BYTES: z.coerce.number().int().optional(),
    /** How long a working context lives after its last write (spec 002: 30 minutes). */
    ENGRAM_WORKING_CONTEXT_TTL_SECONDS: z.coerce.number().int().optional(),
    /** Past this many tokens after an append the context flushes into the stored conversation (spec 002: 32,000). */
    ENGRAM_WORKING_CONTEXT_FLUSH_TOKENS: z.coerce.number().int().optional(),
    /** The conversation a flush stores into when the append named none ("working-context"). */
    ENGRAM_WORKING_CONTEXT_CONVERSATION: z.string().optional(),
    ENGRAM_LLM_MAX_CONCURRENCY: z.coerce
      .number()
      .int()
      .min(1)
      .max(MAX_LLM_MAX_CONCURRENCY)
      .default(DEFAULT_LLM_MAX_CONCURRENCY),
  })
  // Cross-variable rules sit on the object so each issue still names the variable to fix.
  .superRefine((env, ctx) => {
    const requires = (variable: 'ENGRAM_EMBEDDING_URL' | 'ENGRAM_EMBEDDING_MODEL') => {
      if (env[variable] === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: [variable],
          message: `is required when ENGRAM_EMBEDDER=${env.ENGRAM_EMBEDDER}`,
        })
      }
    }
    if (env.ENGRAM_EMBEDDER === 'openai') {
      requires('ENGRAM_EMBEDDING_URL')
      requires('ENGRAM_EMBEDDING_MODEL')
    }
    if (env.ENGRAM_EMBEDDER === 'transformers') requires('ENGRAM_EMBEDDING_MODEL')
    // A lease renewed no sooner than it lapses would pass from replica to replica while its holder lives.
    if (env.ENGRAM_OPTIMIZER_LEASE_RENEW_MS >= env.ENGRAM_OPTIMIZER_LEASE_TTL_MS) {
      ctx.addIssue({
        code: 'custom',
        path: ['ENGRAM_OPTIMIZER_LEASE_RENEW_MS'],
        message: `must be below ENGRAM_OPTIMIZER_LEASE_TTL_MS (${env.ENGRAM_OPTIMIZER_LEASE_TTL_MS})`,
      })
    }
    // The ring keeps at most MAX_METRICS_SAMPLES samples: a one-second interval over a day would not fit.
    const metrics = MetricsRulesSchema.safeParse({
      sampleIntervalMs: env.ENGRAM_METRICS_SAMPLE_MS,
      windowMs: env.ENGRAM_METRICS_WINDOW_MS,
    })
    if (!metrics.success) {
      ctx.addIssue({
        code: 'custom',
        path: ['ENGRAM_METRICS_SAMPLE_MS'],
        message: `keeps at most ${MAX_METRICS_SAMPLES} samples: ENGRAM_METRICS_WINDOW_MS / ENGRAM_METRICS_SAMPLE_MS must be at most ${MAX_METRICS_SAMPLES}`,
      })
    }
    // The working context's rules, checked as the engine will parse them, each issue naming its variable.
    const rules = WorkingContextRulesSchema.safeParse(workingContextRulesOf(env))
    if (!rules.success) {
      for (const issue of rules.error.issues) {
        const rule = String(issue.path[0])
        const variable = WORKING_CONTEXT_VARIABLES[rule as keyof typeof WORKING_CONTEXT_VARIABLES] ?? rule
        ctx.addIssue({ code: 'custom', path: [variable], message: issue.message })
      }
    }
    // A URL with no model (or a model with nowhere to send it) is a half-made setting: refuse it
    // rather than silently staying offline.
    if ((env.ENGRAM_LLM_URL === undefined) !== (env.ENGRAM_LLM_MODEL === undefined)) {
      const [missing, given] =
        env.ENGRAM_LLM_URL === undefined
          ? (['ENGRAM_LLM_URL', 'ENGRAM_LLM_MODEL'] as const)
          : (['ENGRAM_LLM_MODEL', 'ENGRAM_LLM_URL'] as const)
      ctx.addIssue({ code: 'custom', path: [missing], message: `is required when ${given} is set` })
    }
  })
export type Env = z.infer<typeof EnvSchema>

/** Which variable sets which of the working context's rules (the rest keep core's defaults). */
const WORKING_CONTEXT_VARIABLES = {
  maxAgents: 'ENGRAM_WORKING_CONTEXT_MAX_AGENTS',
  maxBytes: 'ENGRAM_WORKING_CONTEXT_MAX_BYTES',
  ttlMs: 'ENGRAM_WORKING_CONTEXT_TTL_SECONDS',
  flushThresholdTokens: 'ENGRAM_WORKING_CONTEXT_FLUSH_TOKENS',
  defaultConversationId: 'ENGRAM_WORKING_CONTEXT_CONVERSATION',
} as const

type WorkingContextEnv = Partial<
  Pick<
    Env,
    | 'ENGRAM_WORKING_CONTEXT_MAX_AGENTS'
    | 'ENGRAM_WORKING_CONTEXT_MAX_BYTES'
    | 'ENGRAM_WORKING_CONTEXT_TTL_SECONDS'
    | 'ENGRAM_WORKING_CONTEXT_FLUSH_TOKENS'
    | 'ENGRAM_WORKING_CONTEXT_CONVERSATION'
  >
>

/** The working context's rules the environment sets (only those given). */
export function workingContextRulesOf(env: WorkingContextEnv): Partial<WorkingContextRules> {
  const given = <K extends keyof WorkingContextRules>(key: K, value: WorkingContextRules[K] | undefined) =>
    value === undefined ? {} : { [key]: value }
  return {
    ...given('maxAgents', env.ENGRAM_WORKING_CONTEXT_MAX_AGENTS),
    ...given('maxBytes', env.ENGRAM_WORKING_CONTEXT_MAX_BYTES),
    ...given(
      'ttlMs',
      env.ENGRAM_WORKING_CONTEXT_TTL_SECONDS === undefined
        ? undefined
        : env.ENGRAM_WORKING_CONTEXT_TTL_SECONDS * 1000,
    ),
    ...given('flushThresholdTokens', env.ENGRAM_WORKING_CONTEXT_FLUSH_TOKENS),
    ...given('defaultConversationId', env.ENGRAM_WORKING_CONTEXT_CONVERSATION),
  }
}

export class EnvError extends Error {}

/**
 * Introspection is for development: in production the printed schema (apps/api/schema.graphql)
 * and the SDK are the contract, and a key holder gains nothing from mapping the API.
 */
export function introspectionEnabled(env: Pick<Env, 'NODE_ENV' | 'ENGRAM_INTROSPECTION'>): boolean {
  return env.ENGRAM_INTROSPECTION ?? env.NODE_ENV !== 'production'
}

export function loadEnv(source: Record<string, string | undefined> = process.env): Env {
  // An empty variable means "unset", as in most shells' `VAR= cmd`.
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, v]) => v !== undefined && v !== ''))
  const parsed = EnvSchema.safeParse(cleaned)
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`)
    throw new EnvError(`Invalid configuration:\n${lines.join('\n')}`)
  }
  const env = parsed.data
  if (databaseBackend(env.DATABASE_URL) === 'sqlite') databaseFileFromUrl(env.DATABASE_URL)
  return env
}

/** Which adapter a DATABASE_URL selects. */
export function databaseBackend(url: string): 'sqlite' | 'postgres' {
  return url.startsWith('file:') ? 'sqlite' : 'postgres'
}

/** `file:` URLs may be relative; they are resolved against the repository root, like prisma.config.ts. */
export function databaseFileFromUrl(url: string): string {
  const file = url.replace(/^file:/, '').replace(/\?.*$/, '')
  if (!file) throw new EnvError('Invalid configuration:\n  DATABASE_URL: names no file')
  return path.isAbsolute(file) ? file : path.resolve(REPO_ROOT, file)
}

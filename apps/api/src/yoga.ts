import { RedisEpisodicStore, RedisEventTarget, RedisLease, RedisWorkingContextStore } from '@engram/bus-redis'
import {
  type Clock,
  createTokenCounter,
  type Embedder,
  type Limits,
  type LlmProvider,
  MetricsRulesSchema,
  parseWith,
  type Scheduler,
} from '@engram/core'
import { type Logger, withScheduler } from '@engram/engine'
import { ExtractionPool } from '@engram/providers'
import type { Database } from '@engram/store-sqlite'
import { startCheckpointer } from '@engram/store-sqlite'
import { costLimitPlugin } from '@escape.tech/graphql-armor-cost-limit'
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases'
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth'
import { renderGraphiQL } from '@graphql-yoga/render-graphiql'
import {
  GraphQLError,
  getOperationAST,
  NoSchemaIntrospectionCustomRule,
  parse,
  type ValidationContext,
} from 'graphql'
import { createYoga, type Plugin } from 'graphql-yoga'
import { bearerToken, keyFromConnectionParams, resolveViewer } from './auth.ts'
import { maskError } from './client-errors.ts'
import type { Context } from './context.ts'
import { assertDocumentNesting } from './document-limits.ts'
import {
  DEFAULT_L2_MAX_MESSAGES,
  DEFAULT_L2_TTL_SECONDS,
  DEFAULT_REDIS_PREFIX,
  type Env,
  introspectionEnabled,
  workingContextRulesOf,
} from './env.ts'
import { metricsRoute } from './metrics/endpoint.ts'
import { graphqlMetrics } from './metrics/graphql-metrics.ts'
import { createMetricsRegistry } from './metrics/registry.ts'
import { MetricsSampler } from './metrics/sampler.ts'
import {
  readStoreFigures,
  registerStoreGauges,
  type StoreGaugeSources,
  type VectorIndexState,
} from './metrics/store-gauges.ts'
import { createEngramPubSub } from './pubsub.ts'
import { optimizerStatusRoute } from './rest.ts'
import { schema } from './schema/index.ts'
import { createServices, type ServicesOptions } from './services/services.ts'
import type { PostgresBackend } from './store.ts'

export const API_VERSION = '0.1.0'

export interface AppOptions {
  db: Database
  /** Set when DATABASE_URL names Postgres (store.ts): the engine runs there, `db` is its shared view. */
  postgres?: PostgresBackend | null
  env: Pick<
    Env,
    | 'NODE_ENV'
    | 'OPTIMIZER_INTERVAL_MS'
    | 'ENGRAM_TOKENIZER'
    | 'ENGRAM_MAX_QUERY_DEPTH'
    | 'ENGRAM_MAX_QUERY_COST'
  > &
    Partial<
      Pick<
        Env,
        | 'ENGRAM_CORS_ORIGIN'
        | 'ENGRAM_SEARCH_COMMON_TERM_SHARE'
        | 'ENGRAM_SEARCH_ACCESS_FLUSH_MS'
        | 'ENGRAM_SEARCH_ACCESS_MAX_PENDING'
        | 'ENGRAM_SEARCH_COMMON_TERM_MIN_DOCUMENTS'
        | 'ENGRAM_LEXICAL_INDEX'
        | 'ENGRAM_SEARCH_DIALOGUE_READS'
        | 'ENGRAM_SEARCH_CANDIDATE_ROWS'
        | 'ENGRAM_LEXICAL_INDEX_MAX_INDEXES'
        | 'ENGRAM_LEXICAL_INDEX_REFRESH_MS'
        | 'ENGRAM_LEXICAL_INDEX_MAX_MB'
        | 'ENGRAM_VECTOR_KERNEL_ABOVE'
        | 'ENGRAM_VECTOR_KERNEL'
        | 'ENGRAM_MAX_QUERY_NESTING'
        | 'ENGRAM_INTROSPECTION'
        | 'ENGRAM_KEY_FACT_MODE'
        | 'ENGRAM_EXTRACTION'
        | 'ENGRAM_EXTRACTION_DEBOUNCE_MS'
        | 'ENGRAM_DEBOUNCE_GRANULARITY_MS'
        | 'ENGRAM_EXTRACTION_WORKERS'
        | 'ENGRAM_SUMMARIES'
        | 'ENGRAM_PROFILE'
        | 'ENGRAM_GRAPH'
        | 'ENGRAM_TRACE_SCORING'
        | 'ENGRAM_TRACE_TTL_DAYS'
        | 'ENGRAM_TRAJECTORY_RULES'
        | 'ENGRAM_MAINTENANCE'
        | 'ENGRAM_RETENTION_DAYS'
        | 'ENGRAM_CLEANUP_INTERVAL'
        | 'ENGRAM_COMPACTION'
        | 'ENGRAM_CONTEXT_WINDOW'
        | 'ENGRAM_CONTEXT_BUILDER_RULES'
        | 'ENGRAM_POOL_MAX_MEMBERS'
        | 'REDIS_URL'
        | 'ENGRAM_REDIS_PREFIX'
        | 'ENGRAM_L2_TTL_SECONDS'
        | 'ENGRAM_L2_MAX_MESSAGES'
        | 'ENGRAM_OPTIMIZER_LEASE_TTL_MS'
        | 'ENGRAM_OPTIMIZER_LEASE_RENEW_MS'
        | 'ENGRAM_OPTIMIZER_CACHED_ENTRIES'
        | 'ENGRAM_MESSAGE_TOKEN_COUNTS'
        | 'ENGRAM_METRICS_TOKEN'
        | 'ENGRAM_METRICS_BIND'
        | 'ENGRAM_METRICS_SAMPLE_MS'
        | 'ENGRAM_METRICS_WINDOW_MS'
        | 'ENGRAM_WORKING_CONTEXT_MAX_AGENTS'
        | 'ENGRAM_WORKING_CONTEXT_MAX_BYTES'
        | 'ENGRAM_WORKING_CONTEXT_TTL_SECONDS'
        | 'ENGRAM_WORKING_CONTEXT_FLUSH_TOKENS'
        | 'ENGRAM_WORKING_CONTEXT_CONVERSATION'
      >
    >
  clock?: Clock
  /**
   * Where the app's delays run (lexical catch-up, job gather and poll, lease waits, access
   * flushes, metric samples, token expiry): the clock's own timers when it has them (a test's
   * manual clock), real unref'd timers otherwise.
   */
  scheduler?: Scheduler
  limits?: Limits
  log?: Logger
  embedder?: Embedder
  /** The language model for memory formation (none: offline). */
  llm?: LlmProvider | null
  databaseFile?: string | null
  backupDirectory?: string | null
  vectorIndex?: ServicesOptions['vectorIndex']
  /** Formation dials beyond the environment's (the memory-formation bench's extractor settings). */
  formation?: ServicesOptions['formation']
  /** The ceiling of Redis' reconnection backoff (ms; tests lower it). */
  redisReconnectMaxDelayMs?: number
  /**
   * Carries events to the other server processes of this replica (cluster.ts' ClusterEventTarget,
   * ENGRAM_WORKERS > 1 without Redis); REDIS_URL's bus wins when both are there.
   */
  eventTarget?: EventTarget
  /** This process's index in the cluster (1..N), reported by /health; absent when it runs alone. */
  workerIndex?: number
  /**
   * Awaited before each operation's context is built: a worker waits there for the other workers'
   * invalidations of writes already answered (cluster.ts' freshAcrossWorkers).
   */
  beforeOperation?: () => Promise<void>
}

/** Builds the GraphQL app (schema, plugins, services). It never listens: server.ts does. */
export function createApp(options: AppOptions) {
  const { db, env } = options
  const clock = withScheduler(options.clock ?? { now: () => new Date() }, options.scheduler)
  const log = options.log ?? console
  // The offline extractor's threads (ENGRAM_EXTRACTION_WORKERS; the server's default is 1). Unset,
  // as in tests that build an app from a partial environment, it runs in process.
  const extractionWorkers = env.ENGRAM_EXTRACTION_WORKERS ?? 0
  const extractionPool = extractionWorkers > 0 ? new ExtractionPool({ size: extractionWorkers }) : null
  // The server every Redis client of this replica connects to (REDIS_URL), keys under one prefix.
  const redis = env.REDIS_URL
    ? {
        url: env.REDIS_URL,
        prefix: env.ENGRAM_REDIS_PREFIX ?? DEFAULT_REDIS_PREFIX,
        reconnectMaxDelayMs: options.redisReconnectMaxDelayMs,
      }
    : null
  // REDIS_URL carries events across replicas; without it the bus stays in process, as before,
  // or crosses this replica's workers (ENGRAM_WORKERS).
  const redisEvents = redis ? new RedisEventTarget({ ...redis, log }) : null
  const sharedEvents: EventTarget | null = redisEvents ?? options.eventTarget ?? null
  // With Redis the replicas also share spec 002's L2 episodic layer and drop each other's stale
  // caches (cache:invalidate crosses them on the same bus).
  const episodicStore = redis
    ? new RedisEpisodicStore({
        ...redis,
        log,
        ttlMs: (env.ENGRAM_L2_TTL_SECONDS ?? DEFAULT_L2_TTL_SECONDS) * 1000,
        maxMessages: env.ENGRAM_L2_MAX_MESSAGES ?? DEFAULT_L2_MAX_MESSAGES,
      })
    : null
  // With Redis the replicas share each agent's working context (spec 002's L1) too.
  const workingContextStore = redis ? new RedisWorkingContextStore({ ...redis, log }) : null
  // With REDIS_URL, replicas share the optimizer's leases: each agent is optimized by one of them.
  const lease = redis ? new RedisLease(redis) : null
  // Issue 17's metrics: one registry per app (never prom-client's global one), the engine's
  // observations reported into it, and the ring of samples behind serverMetrics.
  const metrics = createMetricsRegistry()
  const metricsRules = parseWith(
    MetricsRulesSchema,
    { sampleIntervalMs: env.ENGRAM_METRICS_SAMPLE_MS, windowMs: env.ENGRAM_METRICS_WINDOW_MS },
    'metrics',
  )
  // The store's figures need the engine's vector store: bound once the services exist, below.
  let storeSources: StoreGaugeSources | null = null
  const sampler = new MetricsSampler(
    metrics,
    () => readStoreFigures(storeSources as StoreGaugeSources),
    clock,
    metricsRules,
    log,
  )
  const services = createServices({
    telemetry: metrics.telemetry,
    serverMetrics: sampler,
    db,
    clock,
    // Other processes' writes drop this one's caches wherever events cross processes.
    ...(sharedEvents ? { replicas: { episodic: episodicStore, invalidateCaches: true } } : {}),
    ...(lease ? { lease } : {}),
    workingContext: { rules: workingContextRulesOf(env), store: workingContextStore },
    optimizerLease: {
      ttlMs: env.ENGRAM_OPTIMIZER_LEASE_TTL_MS,
      renewMs: env.ENGRAM_OPTIMIZER_LEASE_RENEW_MS,
    },
    optimizerCachedEntries: env.ENGRAM_OPTIMIZER_CACHED_ENTRIES,
    messageTokenCounts: env.ENGRAM_MESSAGE_TOKEN_COUNTS,
    tokenCounter: createTokenCounter(env.ENGRAM_TOKENIZER),
    pubsub: createEngramPubSub(sharedEvents ?? undefined),
    limits: options.limits,
    optimizerIntervalMs: env.OPTIMIZER_INTERVAL_MS,
    keyFactMode: env.ENGRAM_KEY_FACT_MODE,
    formation: {
      automatic: env.ENGRAM_EXTRACTION !== 'off',
      ...(env.ENGRAM_EXTRACTION_DEBOUNCE_MS === undefined
        ? {}
        : { extractionDebounceMs: env.ENGRAM_EXTRACTION_DEBOUNCE_MS }),
      debounceGranularityMs: env.ENGRAM_DEBOUNCE_GRANULARITY_MS,
      ...options.formation,
    },
    automaticSummaries: env.ENGRAM_SUMMARIES !== 'off',
    automaticProfile: env.ENGRAM_PROFILE !== 'off',
    automaticGraph: env.ENGRAM_GRAPH !== 'off',
    trajectoryRules: {
      ...env.ENGRAM_TRAJECTORY_RULES,
      ...(env.ENGRAM_TRACE_SCORING === undefined ? {} : { traceScoring: env.ENGRAM_TRACE_SCORING }),
      ...(env.ENGRAM_TRACE_TTL_DAYS === undefined ? {} : { traceTtlDays: env.ENGRAM_TRACE_TTL_DAYS }),
    },
    // Spec 002's maintenance block; what is not set keeps core's defaults (the env schema's too).
    maintenance: {
      ...(env.ENGRAM_MAINTENANCE === undefined ? {} : { enabled: env.ENGRAM_MAINTENANCE !== 'off' }),
      ...(env.ENGRAM_RETENTION_DAYS === undefined ? {} : { retentionDays: env.ENGRAM_RETENTION_DAYS }),
      ...(env.ENGRAM_CLEANUP_INTERVAL === undefined ? {} : { cleanupInterval: env.ENGRAM_CLEANUP_INTERVAL }),
      ...(env.ENGRAM_COMPACTION === undefined ? {} : { compactionEnabled: env.ENGRAM_COMPACTION }),
    },
    contextBuilder: {
      ...env.ENGRAM_CONTEXT_BUILDER_RULES,
      ...(env.ENGRAM_CONTEXT_WINDOW === undefined ? {} : { contextWindow: env.ENGRAM_CONTEXT_WINDOW }),
    },
    ...(env.ENGRAM_POOL_MAX_MEMBERS === undefined
      ? {}
      : { poolLimits: { maxPoolMembers: env.ENGRAM_POOL_MAX_MEMBERS } }),
    log,
    embedder: options.embedder,
    llm: options.llm,
    // One pool serves both kinds of offline formation work: extraction and summaries.
    ...(extractionPool ? { offlineExtractor: extractionPool, offlineSummarizer: extractionPool } : {}),
    postgres: options.postgres ?? null,
    databaseFile: options.databaseFile,
    backupDirectory: options.backupDirectory,
    vectorIndex: {
      // The exact scans' SIMD kernel and its threshold (issue 18); the test's own settings win.
      scan: {
        ...(env.ENGRAM_VECTOR_KERNEL_ABOVE === undefined
          ? {}
          : { kernelAbove: env.ENGRAM_VECTOR_KERNEL_ABOVE }),
        ...(env.ENGRAM_VECTOR_KERNEL === undefined ? {} : { kernel: env.ENGRAM_VECTOR_KERNEL }),
      },
      ...options.vectorIndex,
    },
    accessFlush: {
      ...(env.ENGRAM_SEARCH_ACCESS_FLUSH_MS === undefined
        ? {}
        : { flushIntervalMs: env.ENGRAM_SEARCH_ACCESS_FLUSH_MS }),
      ...(env.ENGRAM_SEARCH_ACCESS_MAX_PENDING === undefined
        ? {}
        : { maxPending: env.ENGRAM_SEARCH_ACCESS_MAX_PENDING }),
    },
    lexicalPlan: {
      ...(env.ENGRAM_SEARCH_COMMON_TERM_SHARE === undefined
        ? {}
        : { commonShare: env.ENGRAM_SEARCH_COMMON_TERM_SHARE }),
      ...(env.ENGRAM_SEARCH_COMMON_TERM_MIN_DOCUMENTS === undefined
        ? {}
        : { minDocuments: env.ENGRAM_SEARCH_COMMON_TERM_MIN_DOCUMENTS }),
    },
    ...(env.ENGRAM_SEARCH_DIALOGUE_READS === undefined
      ? {}
      : { dialogueReads: env.ENGRAM_SEARCH_DIALOGUE_READS }),
    ...(env.ENGRAM_SEARCH_CANDIDATE_ROWS === undefined
      ? {}
      : { candidateRows: env.ENGRAM_SEARCH_CANDIDATE_ROWS }),
    lexicalIndexes: {
      enabled: env.ENGRAM_LEXICAL_INDEX !== 'off',
      ...(env.ENGRAM_LEXICAL_INDEX_REFRESH_MS === undefined
        ? {}
        : { refreshDelayMs: env.ENGRAM_LEXICAL_INDEX_REFRESH_MS }),
      ...(env.ENGRAM_LEXICAL_INDEX_MAX_INDEXES === undefined
        ? {}
        : { maxIndexes: env.ENGRAM_LEXICAL_INDEX_MAX_INDEXES }),
      ...(env.ENGRAM_LEXICAL_INDEX_MAX_MB === undefined
        ? {}
        : { maxBytes: env.ENGRAM_LEXICAL_INDEX_MAX_MB * 1024 * 1024 }),
    },
  })

  storeSources = {
    db,
    backend: options.postgres ? 'postgres' : 'sqlite',
    databaseFile: options.databaseFile ?? null,
    // Both adapters' vector stores (SqliteVectorStore, and Postgres' which extends it) have it.
    vectors: () =>
      (services.storage.vectors as { indexState?: () => VectorIndexState }).indexState?.() ?? null,
    redisConnected:
      redisEvents && episodicStore
        ? () => redisEvents.status() === 'up' && episodicStore.status() === 'up'
        : null,
    postgresPool: options.postgres?.poolActivity ?? null,
  }
  registerStoreGauges(metrics.registry, storeSources)

  // A mutation's writes are seen by caches once it ends (agentScope records what it touched).
  const writesDone: Plugin<Context> = {
    onExecute() {
      return {
        onExecuteDone({ args }) {
          const context = args.contextValue as Context
          for (const scope of context.writes ?? []) services.writes.touch(scope)
        },
      }
    },
  }

  const health: Plugin = {
    async onRequest({ url, endResponse, fetchAPI }) {
      if (url.pathname !== '/health') return
      let database = 'ok'
      try {
        await db.$queryRawUnsafe('SELECT 1')
      } catch {
        database = 'unreachable'
      }
      // Redis down still answers 200: requests and local subscriptions work, only other replicas
      // miss this one's events. Absent when REDIS_URL is not set.
      const redis =
        redisEvents && episodicStore
          ? redisEvents.status() === 'up' && episodicStore.status() === 'up'
            ? 'up'
            : 'down'
          : undefined
      const status = database === 'ok' && redis !== 'down' ? 'ok' : 'degraded'
      endResponse(
        new fetchAPI.Response(
          JSON.stringify({
            status,
            version: API_VERSION,
            database,
            ...(redis ? { redis } : {}),
            // Which worker answered (ENGRAM_WORKERS): a connection stays with one.
            ...(options.workerIndex === undefined ? {} : { worker: options.workerIndex }),
          }),
          {
            status: database === 'ok' ? 200 : 503,
            headers: { 'content-type': 'application/json' },
          },
        ),
      )
    },
  }

  // Only for a database file (not an in-memory one, not a test that passes none).
  const checkpointer = options.databaseFile ? startCheckpointer(options.databaseFile) : null

  const yoga = createYoga<Record<string, unknown>, Context>({
    schema,
    graphqlEndpoint: '/graphql',
    healthCheckEndpoint: '/livez',
    landingPage: false,
    // The body limit is listen()'s (ENGRAM_MAX_REQUEST_BYTES: a declared length before yoga, a
    // chunked body counted as it arrives). yoga's own 25 MB check piped every body through a
    // TransformStream, whose stream pipeline ends by aborting a signal (a DOMException with a
    // stack): ~3% of an addMessage's CPU under load (issue 18).
    maxRequestBodySize: false,
    // GraphiQL with its assets inlined: the default loads them from a CDN, which offline fails.
    renderGraphiQL,
    graphiql:
      env.NODE_ENV === 'development'
        ? { title: 'Engram', headers: '{"Authorization": "Bearer <your key>"}' }
        : false,
    cors: env.ENGRAM_CORS_ORIGIN
      ? { origin: env.ENGRAM_CORS_ORIGIN.split(','), credentials: false }
      : undefined,
    // Unexpected errors reach clients as "Unexpected error."; the detail goes to the log only.
    maskedErrors: { maskError: (error, message) => maskError(error, message, log) },
    // yoga logs every error the mask replaced, expected ones included (a wrong variable, a
    // forbidden key); maskError logs the unexpected ones itself, once.
    logging: {
      debug: () => {},
      info: (...args) => log.info?.(...args),
      warn: (...args) => log.warn?.(...args),
      error: () => {},
    },
    plugins: [
      health,
      // Spec 000's one REST endpoint, beside GraphQL on the same server and port.
      optimizerStatusRoute(services),
      // Prometheus' /metrics (issue 17): the admin key or ENGRAM_METRICS_TOKEN, unless on its own bind.
      metricsRoute(metrics, services, {
        token: env.ENGRAM_METRICS_TOKEN,
        servedElsewhere: env.ENGRAM_METRICS_BIND !== undefined,
      }),
      graphqlMetrics(metrics, schema, '/graphql'),
      writesDone,
      requestLimits(env.ENGRAM_MAX_QUERY_NESTING ?? DEFAULT_MAX_QUERY_NESTING, introspectionEnabled(env)),
      maxDepthPlugin({
        n: env.ENGRAM_MAX_QUERY_DEPTH,
        ignoreIntrospection: true,
        ...plainRejection('QUERY_TOO_DEEP'),
      }),
      costLimitPlugin({
        maxCost: env.ENGRAM_MAX_QUERY_COST,
        ignoreIntrospection: true,
        ...plainRejection('QUERY_TOO_COMPLEX'),
      }),
      maxAliasesPlugin({ n: MAX_ALIASES, ...plainRejection('TOO_MANY_ALIASES') }),
    ],
    context: async (initial) => {
      if (options.beforeOperation) await options.beforeOperation()
      const request = (initial as { request?: Request }).request
      const key =
        bearerToken(request?.headers.get('authorization')) ??
        keyFromConnectionParams((initial as { connectionParams?: unknown }).connectionParams)
      const viewer = await resolveViewer(services.agents, key, services.liveTokens)
      if (!viewer) {
        throw new GraphQLError('Missing or invalid API key: send "Authorization: Bearer <key>".', {
          extensions: { code: 'UNAUTHENTICATED', http: { status: 401 } },
        })
      }
      if (
        viewer.kind === 'live' &&
        !isSubscription((initial as { params?: { query?: string; operationName?: string } }).params)
      ) {
        throw new GraphQLError('A live token can only subscribe.', {
          extensions: { code: 'FORBIDDEN', http: { status: 403 } },
        })
      }
      const params = (initial as { params?: { query?: string; operationName?: string } }).params
      return { services, viewer, writes: new Set<string>(), isMutation: operationType(params) === 'mutation' }
    },
  })

  return {
    yoga,
    services,
    /** The app's Prometheus registry (issue 17): what /metrics serves. */
    metrics,
    /** The ring of samples behind serverMetrics; server.ts starts its timer, tests call sample(). */
    sampler,
    /** The offline extractor's threads (null: in process); its stats show the backlog. */
    extractionPool,
    async close() {
      // Stopping releases this replica's optimizer leases, so the others take its agents at once.
      await sampler.stop()
      await services.optimizer.stop()
      // A scheduled maintenance run in progress finishes (and releases its lease) first.
      await services.maintenance.stop()
      lease?.close()
      // Jobs in flight finish first; queued ones stay in the table for the next start.
      await services.jobs.stop()
      // Search's buffered memory accesses are written before the database closes.
      await services.search.accesses.stop()
      await extractionPool?.close()
      await services.embeddings.flush()
      await checkpointer?.stop()
      await services.replicas?.stop()
      redisEvents?.close()
      episodicStore?.close()
      workingContextStore?.close()
    },
  }
}

export type App = ReturnType<typeof createApp>

const DEFAULT_MAX_QUERY_NESTING = 64

/** Aliases per operation: each can run a whole resolver (twenty searches in one request). */
export const MAX_ALIASES = 20

/**
 * The armor plugins word their refusals as "Syntax Error: Query Cost limit…" and throw them from
 * inside validation; reported here instead, plain and with a stable code.
 */
function plainRejection(code: string) {
  return {
    propagateOnRejection: false,
    onReject: [
      (context: ValidationContext | null, error: GraphQLError) => {
        context?.reportError(
          new GraphQLError(error.message.replace(/^Syntax Error: /, ''), {
            extensions: { code, http: { status: 400 } },
          }),
        )
      },
    ],
  }
}

/**
 * Checks made on the raw request, before graphql-js does its own work: a document nesting past the
 * limit is refused before the recursive parser sees it; `variables` that are not JSON (GET's
 * `?variables=%7Bbad`) are a client error, not a SyntaxError masked as a server fault; and
 * introspection is off unless enabled.
 */
function requestLimits(maxNesting: number, introspection: boolean): Plugin {
  return {
    onRequestParse({ requestParser, setRequestParser }) {
      if (!requestParser) return
      setRequestParser(async (request) => {
        try {
          return await requestParser(request)
        } catch (error) {
          if (!(error instanceof SyntaxError)) throw error
          throw new GraphQLError('The request\'s "variables" or "extensions" parameter is not valid JSON.', {
            extensions: { code: 'BAD_REQUEST', http: { status: 400 } },
          })
        }
      })
    },
    onParse({ params }) {
      if (typeof params.source === 'string') assertDocumentNesting(params.source, maxNesting)
    },
    onValidate({ addValidationRule }) {
      if (!introspection) addValidationRule(NoSchemaIntrospectionCustomRule)
    },
  }
}

// The context factory needs the operation's type before yoga has parsed it for execution; clients
// send the same few documents over and over, so each is parsed once, not once per request.
const OPERATION_TYPES_CACHED = 1_000
const operationTypes = new Map<string, string | null>()

function operationType(params: { query?: string; operationName?: string } | undefined) {
  if (!params?.query) return null
  const key = `${params.operationName ?? ''}\u0000${params.query}`
  const cached = operationTypes.get(key)
  if (cached !== undefined) return cached
  let type: string | null
  try {
    type = getOperationAST(parse(params.query), params.operationName)?.operation ?? null
  } catch {
    type = null
  }
  if (operationTypes.size >= OPERATION_TYPES_CACHED)
    operationTypes.delete(operationTypes.keys().next().value as string)
  operationTypes.set(key, type)
  return type
}

function isSubscription(params: { query?: string; operationName?: string } | undefined): boolean {
  return operationType(params) === 'subscription'
}

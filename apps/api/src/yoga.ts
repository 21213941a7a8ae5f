import {
  type Clock,
  createTokenCounter,
  type Embedder,
  EngramError,
  type Limits,
  ValidationError,
} from '@engram/core'
import { costLimitPlugin } from '@escape.tech/graphql-armor-cost-limit'
import { maxAliasesPlugin } from '@escape.tech/graphql-armor-max-aliases'
import { maxDepthPlugin } from '@escape.tech/graphql-armor-max-depth'
import { renderGraphiQL } from '@graphql-yoga/render-graphiql'
import { GraphQLError, getOperationAST, parse } from 'graphql'
import { createYoga, type Plugin } from 'graphql-yoga'
import { bearerToken, keyFromConnectionParams, resolveViewer } from './auth.ts'
import type { Context } from './context.ts'
import { startCheckpointer } from './db/checkpointer.ts'
import type { Database } from './db/client.ts'
import type { Env } from './env.ts'
import { createEngramPubSub } from './pubsub.ts'
import { schema } from './schema/index.ts'
import type { Logger } from './services/optimizer-service.ts'
import { createServices, type ServicesOptions } from './services/services.ts'

export const API_VERSION = '0.1.0'

export interface AppOptions {
  db: Database
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
        'ENGRAM_CORS_ORIGIN' | 'ENGRAM_SEARCH_COMMON_TERM_SHARE' | 'ENGRAM_SEARCH_COMMON_TERM_MIN_DOCUMENTS'
      >
    >
  clock?: Clock
  limits?: Limits
  log?: Logger
  embedder?: Embedder
  databaseFile?: string | null
  backupDirectory?: string | null
  vectorIndex?: ServicesOptions['vectorIndex']
}

/** Builds the GraphQL app (schema, plugins, services). It never listens: server.ts does. */
export function createApp(options: AppOptions) {
  const { db, env } = options
  const clock = options.clock ?? { now: () => new Date() }
  const log = options.log ?? console
  const services = createServices({
    db,
    clock,
    tokenCounter: createTokenCounter(env.ENGRAM_TOKENIZER),
    pubsub: createEngramPubSub(),
    limits: options.limits,
    optimizerIntervalMs: env.OPTIMIZER_INTERVAL_MS,
    log,
    embedder: options.embedder,
    databaseFile: options.databaseFile,
    backupDirectory: options.backupDirectory,
    vectorIndex: options.vectorIndex,
    lexicalPlan: {
      ...(env.ENGRAM_SEARCH_COMMON_TERM_SHARE === undefined
        ? {}
        : { commonShare: env.ENGRAM_SEARCH_COMMON_TERM_SHARE }),
      ...(env.ENGRAM_SEARCH_COMMON_TERM_MIN_DOCUMENTS === undefined
        ? {}
        : { minDocuments: env.ENGRAM_SEARCH_COMMON_TERM_MIN_DOCUMENTS }),
    },
  })

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
      endResponse(
        new fetchAPI.Response(
          JSON.stringify({ status: database === 'ok' ? 'ok' : 'degraded', version: API_VERSION, database }),
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
    maskedErrors: {
      maskError: (error, message) => {
        // Errors raised by GraphQL itself (syntax, validation, limits) carry no originalError and
        // are the client's to see. Duck-typed: the armor plugins load graphql's CommonJS build, so
        // their GraphQLError is not an instance of ours.
        const graphqlError = error as Partial<GraphQLError>
        if ((error as Error)?.name === 'GraphQLError' && !graphqlError.originalError)
          return error as GraphQLError
        const original = graphqlError.originalError ?? error
        // An expected error raised where no error union is declared (a nested field) still
        // reaches the client typed, through extensions.
        if (original instanceof EngramError) {
          return new GraphQLError(original.message, {
            path: graphqlError.path,
            extensions: {
              code: original.code,
              ...(original instanceof ValidationError ? { issues: original.issues } : {}),
            },
          })
        }
        log.error('[graphql] unexpected error:', original)
        return new GraphQLError(message, { extensions: { code: 'INTERNAL_SERVER_ERROR' } })
      },
    },
    plugins: [
      health,
      writesDone,
      maxDepthPlugin({ n: env.ENGRAM_MAX_QUERY_DEPTH, ignoreIntrospection: true }),
      costLimitPlugin({ maxCost: env.ENGRAM_MAX_QUERY_COST, ignoreIntrospection: true }),
      maxAliasesPlugin({ n: 20 }),
    ],
    context: async (initial) => {
      const request = (initial as { request?: Request }).request
      const key =
        bearerToken(request?.headers.get('authorization')) ??
        keyFromConnectionParams((initial as { connectionParams?: unknown }).connectionParams)
      const viewer = await resolveViewer(db, key, services.liveTokens)
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
    async close() {
      await services.optimizer.stop()
      await services.embeddings.flush()
      await checkpointer?.stop()
    },
  }
}

export type App = ReturnType<typeof createApp>

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

import cluster from 'node:cluster'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { createHashingEmbedder } from '@engram/core'
import { loadWordNetLexicon } from '@engram/providers'
import { directSqlite } from '@engram/store-sqlite'
import { GraphQLError } from 'graphql'
import { useServer } from 'graphql-ws/use/ws'
import { WebSocketServer } from 'ws'
import { ensureAdminKey } from './admin-key.ts'
import { keyFromConnectionParams, resolveViewer } from './auth.ts'
import { maskError } from './client-errors.ts'
import { ClusterEventTarget, freshAcrossWorkers, runWorkers, workerIndex } from './cluster.ts'
import { createEmbedderFromEnv } from './embedding/provider.ts'
import { type Env, EnvError, loadEnv, REPO_ROOT } from './env.ts'
import { createLlmFromEnv } from './llm/provider.ts'
import { listenMetrics } from './metrics/endpoint.ts'
import { openStore } from './store.ts'
import { type App, createApp } from './yoga.ts'

type Enveloped = ReturnType<App['yoga']['getEnveloped']>

/**
 * The same typed, plain error an HTTP client would get (client-errors.ts), less the HTTP status
 * yoga would have turned into a response code.
 */
function toClientError(error: unknown): GraphQLError {
  const masked = maskError(error, 'Unexpected error.', console) as GraphQLError
  const { http: _status, ...extensions } = masked.extensions ?? {}
  return new GraphQLError(masked.message, { nodes: masked.nodes, path: masked.path, extensions })
}

export interface RunningServer {
  app: App
  server: Server
  port: number
  close(): Promise<void>
}

/**
 * Serves GraphQL over HTTP (and SSE) and graphql-ws on the same port and path. The WebSocket
 * operations go through yoga's envelop, so they get the same plugins, limits and key checks.
 */
export function listen(
  app: App,
  port: number,
  host = '0.0.0.0',
  maxRequestBytes = 16_777_216,
): Promise<RunningServer> {
  const tooLarge = (res: ServerResponse) => {
    res.writeHead(413, { 'content-type': 'application/json', connection: 'close' })
    res.end(
      JSON.stringify({
        errors: [
          {
            message: `Request body larger than ${maxRequestBytes} bytes (ENGRAM_MAX_REQUEST_BYTES)`,
            extensions: { code: 'PAYLOAD_TOO_LARGE', limit: maxRequestBytes },
          },
        ],
      }),
    )
  }
  const server = createServer((req, res) => {
    if (req.headers['content-length'] !== undefined) {
      // Node's parser never reads past a declared length, so checking the header is enough.
      if (Number(req.headers['content-length']) > maxRequestBytes) return tooLarge(res)
      return app.yoga(req, res)
    }
    if (req.headers['transfer-encoding'] === undefined) return app.yoga(req, res)
    // A chunked body declares no length: it is counted as it arrives and refused once past the
    // limit, then handed to yoga whole (whatwg-node takes a pre-read `body`).
    const chunks: Buffer[] = []
    let received = 0
    let refused = false
    req.on('data', (chunk: Buffer) => {
      if (refused) return
      received += chunk.length
      if (received > maxRequestBytes) {
        refused = true
        chunks.length = 0
        tooLarge(res)
        req.resume()
        return
      }
      chunks.push(chunk)
    })
    req.on('end', () => {
      if (refused) return
      ;(req as IncomingMessage & { body?: Uint8Array }).body = Buffer.concat(chunks)
      app.yoga(req, res)
    })
  })
  // A client pooling connections (Playwright's request context, undici, a load balancer) may send
  // on a kept-alive socket just as Node's default 5 s idle timeout closes it, and gets ECONNRESET:
  // idle sockets stay open longer than such pools keep them (server.close still ends idle ones).
  server.keepAliveTimeout = 65_000
  server.headersTimeout = 66_000
  const wsServer = new WebSocketServer({
    server,
    path: app.yoga.graphqlEndpoint,
    maxPayload: maxRequestBytes,
  })
  const wsHandle = useServer(
    {
      // onSubscribe below hands over yoga's enveloped execute/subscribe through rootValue.
      execute: (args) => (args.rootValue as Enveloped).execute(args),
      subscribe: (args) => (args.rootValue as Enveloped).subscribe(args),
      // A connection without a valid key is closed at once (4403), before any operation.
      onConnect: async (ctx) => {
        const key = keyFromConnectionParams(ctx.connectionParams)
        return (await resolveViewer(app.services.agents, key, app.services.liveTokens)) !== null
      },
      onSubscribe: async (ctx, _id, params) => {
        const { schema, execute, subscribe, contextFactory, parse, validate } = app.yoga.getEnveloped({
          ...ctx,
          req: ctx.extra.request,
          socket: ctx.extra.socket,
          params,
          connectionParams: ctx.connectionParams,
        })
        // A refused operation (a query sent with a live token, a document past a limit) is answered
        // with an error for that operation alone: throwing here would close the socket (4500) and
        // end the valid subscriptions sharing it.
        try {
          const document = parse(params.query)
          const errors = validate(schema, document)
          if (errors.length) return errors.map((error: unknown) => toClientError(error))
          return {
            schema,
            operationName: params.operationName,
            document,
            variableValues: params.variables,
            contextValue: await contextFactory(),
            rootValue: { execute, subscribe },
          }
        } catch (error) {
          return [toClientError(error)]
        }
      },
    },
    wsServer,
  )
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => {
      const address = server.address() as AddressInfo
      resolve({
        app,
        server,
        port: address.port,
        async close() {
          await app.close()
          await wsHandle.dispose()
          wsServer.close()
          // An open SSE stream would keep close() waiting forever.
          server.closeAllConnections()
          await new Promise<void>((done) => server.close(() => done()))
        },
      })
    })
  })
}

/** Where Redis is, without the credentials a URL may carry. */
function redisHost(url: string): string {
  const parsed = new URL(url)
  return `${parsed.protocol}//${parsed.host}`
}

/** Migrations and the admin key, once, before any worker opens the database (ENGRAM_WORKERS > 1). */
async function prepareDatabase(env: Env) {
  const store = await openStore(env.DATABASE_URL, {
    poolSize: 1,
    log: (msg) => console.info(`[db] ${msg}`),
  })
  await announceAdminKey(await ensureAdminKey(store.db, env.ENGRAM_ADMIN_KEY))
  await store.close()
}

async function announceAdminKey(generatedKey: string | null | undefined) {
  if (generatedKey) {
    console.info(
      `\n  A new admin key was generated. It is shown only this once; store it now:\n\n    ${generatedKey}\n\n  (or set ENGRAM_ADMIN_KEY to use your own)\n`,
    )
  }
}

async function main(env: Env) {
  if (env.ENGRAM_WORKERS > 1 && cluster.isPrimary) {
    await prepareDatabase(env)
    const workers = runWorkers({ count: env.ENGRAM_WORKERS, log: console })
    const shutdown = async (signal: string) => {
      console.info(`[api] ${signal}: stopping the workers`)
      await workers.stop()
      process.exit(0)
    }
    process.once('SIGINT', () => void shutdown('SIGINT'))
    process.once('SIGTERM', () => void shutdown('SIGTERM'))
    return
  }
  // In a cluster: this worker's index (1..N); null when the server is one process.
  const worker = workerIndex()
  // The duties one process does for the database (the optimizer's and maintenance's schedules,
  // orphan files, the embedding catch-up): without Redis' leases, worker 1 alone; a crashed worker 1
  // is started again with the same index. With Redis every worker takes part in the leases.
  const runsSchedules = worker === null || worker === 1 || env.REDIS_URL !== undefined
  const store = await openStore(env.DATABASE_URL, {
    poolSize: env.ENGRAM_DB_POOL_SIZE,
    appendBatchMessages: env.ENGRAM_DB_APPEND_BATCH,
    sqliteLockWaitMs: env.ENGRAM_SQLITE_LOCK_WAIT_MS,
    sqliteSavepoints: env.ENGRAM_SQLITE_SAVEPOINTS,
    sqliteAppendInserts: env.ENGRAM_SQLITE_APPEND_INSERTS,
    sqliteAppendsPerGroup: env.ENGRAM_SQLITE_APPENDS_PER_GROUP,
    sqliteNewRowJobs: env.ENGRAM_SQLITE_NEW_ROW_JOBS,
    log: (msg) => console.info(`[db] ${msg}`),
  })
  const { db, databaseFile } = store
  // The primary registered the key before starting the workers.
  if (worker === null) await announceAdminKey(await ensureAdminKey(db, env.ENGRAM_ADMIN_KEY))
  // The offline default carries WordNet synonyms: paraphrases match with no model and no network.
  const embedder = await createEmbedderFromEnv(env, () =>
    createHashingEmbedder({ lexicon: loadWordNetLexicon() }),
  )
  // No request at start-up: a chat call costs tokens. A model that is down shows in its circuit.
  const llm = createLlmFromEnv(env)
  console.info(
    llm
      ? `[llm] memory formation may use ${llm.model} at ${env.ENGRAM_LLM_URL}`
      : '[llm] no ENGRAM_LLM_URL: memory formation runs offline',
  )
  console.info(
    env.REDIS_URL
      ? `[redis] events and cache invalidations reach every replica through ${redisHost(env.REDIS_URL)} (channels ${env.ENGRAM_REDIS_PREFIX}:events:*); L2 episodic sets ${env.ENGRAM_REDIS_PREFIX}:l2:<agent>:<conversation>, ${env.ENGRAM_L2_MAX_MESSAGES} messages, TTL ${env.ENGRAM_L2_TTL_SECONDS} s; each agent's optimizer runs on one replica (leases ${env.ENGRAM_REDIS_PREFIX}:lease:optimizer:*, ${env.ENGRAM_OPTIMIZER_LEASE_TTL_MS} ms)`
      : '[redis] no REDIS_URL: events stay in this process (one replica)',
  )
  // Workers without Redis carry events and cache invalidations to each other through the primary.
  const clusterEvents = worker !== null && !env.REDIS_URL ? new ClusterEventTarget() : null
  const direct = databaseFile ? directSqlite(db) : null
  const app = createApp({
    db,
    postgres: store.postgres,
    env,
    ...(clusterEvents ? { eventTarget: clusterEvents } : {}),
    ...(worker !== null ? { workerIndex: worker } : {}),
    // On SQLite a commit by another worker moves data_version: only then does a request wait for
    // the other workers' invalidations. Postgres has no such counter: every request waits.
    ...(clusterEvents
      ? {
          beforeOperation: freshAcrossWorkers(
            clusterEvents,
            direct
              ? async () => (await direct.get<{ data_version: number }>('PRAGMA data_version'))?.data_version
              : null,
          ),
        }
      : {}),
    embedder,
    llm,
    databaseFile,
    // Beside the SQLite file; on Postgres (logical exports) under data/ unless configured.
    backupDirectory:
      env.ENGRAM_BACKUP_DIR ??
      (databaseFile
        ? path.join(path.dirname(databaseFile), 'backups')
        : path.join(REPO_ROOT, 'data', 'backups')),
  })
  const orphans = runsSchedules ? await app.services.lifecycle.removeOrphanFiles() : 0
  if (orphans > 0)
    console.info(`[lifecycle] removed ${orphans} vector file(s) of agents that no longer exist`)
  const running = await listen(app, env.API_PORT, env.API_HOST, env.ENGRAM_MAX_REQUEST_BYTES)
  if (runsSchedules) {
    app.services.optimizer.start()
    // Scheduled maintenance (ENGRAM_MAINTENANCE=auto): a timer asks the clock each minute whether a
    // cron slot is due; one replica runs it (the lease and the slot's row).
    app.services.maintenance.start()
  }
  // Background work goes through the durable job queue: the worker picks up what a previous run
  // left (pending jobs, jobs of a worker that died), then every job as it is queued. After a
  // change of embedding provider everything is embedded again (search uses keywords meanwhile);
  // otherwise rows with no vector and no job (written before the queue existed) get a job.
  if (runsSchedules) {
    const catchUp = await app.services.embeddings.catchUp()
    console.info(
      `[embeddings] model ${app.services.embeddings.model}${catchUp.reembedding ? ': re-embedding everything' : ''}${catchUp.queued > 0 ? `, ${catchUp.queued} queued` : ''}`,
    )
  }
  // Every worker runs jobs: each claims its batches under its own lease (the queue is shared).
  app.services.jobs.start()
  // The headline series serverMetrics answers (issue 17), sampled on a timer; Prometheus scrapes
  // /metrics on the main port (token or admin key) or on ENGRAM_METRICS_BIND's own listener.
  app.sampler.start()
  // Search's memory accesses are written on this timer too, not only when the next search comes.
  app.services.search.accesses.start()
  // One metrics listener per replica: a second worker could not bind the same address.
  const metricsListener =
    env.ENGRAM_METRICS_BIND && (worker === null || worker === 1)
      ? await listenMetrics(app.metrics, env.ENGRAM_METRICS_BIND)
      : null
  console.info(
    metricsListener
      ? `[metrics] Prometheus metrics on http://${env.ENGRAM_METRICS_BIND}/metrics (no token; not on the main port)`
      : `[metrics] Prometheus metrics at /metrics with ${env.ENGRAM_METRICS_TOKEN ? 'ENGRAM_METRICS_TOKEN or ' : ''}the admin key`,
  )
  console.info(
    `Engram API${worker === null ? '' : ` (worker ${worker} of ${env.ENGRAM_WORKERS})`} on http://localhost:${running.port}/graphql (WebSocket and SSE subscriptions on the same path), database ${store.location}`,
  )
  const shutdown = async (signal: string) => {
    console.info(`[api] ${signal}: shutting down`)
    await running.close()
    await metricsListener?.close()
    await store.close()
    clusterEvents?.close()
    process.exit(0)
  }
  process.once('SIGINT', () => void shutdown('SIGINT'))
  process.once('SIGTERM', () => void shutdown('SIGTERM'))
}

if (import.meta.url === `file://${process.argv[1]}`) {
  let env: Env
  try {
    env = loadEnv()
  } catch (error) {
    if (error instanceof EnvError) {
      console.error(error.message)
      process.exit(1)
    }
    throw error
  }
  main(env).catch((error) => {
    console.error('[api] failed to start:', error)
    process.exit(1)
  })
}

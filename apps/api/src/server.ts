import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { createHashingEmbedder } from '@engram/core'
import { useServer } from 'graphql-ws/use/ws'
import { WebSocketServer } from 'ws'
import { ensureAdminKey, keyFromConnectionParams, resolveViewer } from './auth.ts'
import { createDatabase } from './db/client.ts'
import { applyMigrations, migrationsDirectory } from './db/migrate.ts'
import { createEmbedderFromEnv } from './embedding/provider.ts'
import { loadWordNetLexicon } from './embedding/wordnet-lexicon.ts'
import { databaseFileFromUrl, type Env, EnvError, loadEnv } from './env.ts'
import { type App, createApp } from './yoga.ts'

const EMBEDDING_RETRY_INTERVAL_MS = 60_000

type Enveloped = ReturnType<App['yoga']['getEnveloped']>

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
  const server = createServer((req, res) => {
    const declared = Number(req.headers['content-length'] ?? 0)
    if (declared > maxRequestBytes) {
      res.writeHead(413, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ errors: [{ message: `Request body larger than ${maxRequestBytes} bytes` }] }))
      return
    }
    app.yoga(req, res)
  })
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
        return (await resolveViewer(app.services.db, key, app.services.liveTokens)) !== null
      },
      onSubscribe: async (ctx, _id, params) => {
        const { schema, execute, subscribe, contextFactory, parse, validate } = app.yoga.getEnveloped({
          ...ctx,
          req: ctx.extra.request,
          socket: ctx.extra.socket,
          params,
          connectionParams: ctx.connectionParams,
        })
        const document = parse(params.query)
        const args = {
          schema,
          operationName: params.operationName,
          document,
          variableValues: params.variables,
          contextValue: await contextFactory(),
          rootValue: { execute, subscribe },
        }
        const errors = validate(args.schema, args.document)
        if (errors.length) return errors
        return args
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

async function main(env: Env) {
  const databaseFile = databaseFileFromUrl(env.DATABASE_URL)
  const { applied } = applyMigrations(databaseFile, migrationsDirectory(), (msg) =>
    console.info(`[db] ${msg}`),
  )
  if (applied.length > 0) console.info(`[db] applied ${applied.length} migration(s) to ${databaseFile}`)
  const db = createDatabase(databaseFile)
  const generatedKey = await ensureAdminKey(db, env.ENGRAM_ADMIN_KEY)
  if (generatedKey) {
    console.info(
      `\n  A new admin key was generated. It is shown only this once; store it now:\n\n    ${generatedKey}\n\n  (or set ENGRAM_ADMIN_KEY to use your own)\n`,
    )
  }
  // The offline default carries WordNet synonyms: paraphrases match with no model and no network.
  const embedder = await createEmbedderFromEnv(env, () =>
    createHashingEmbedder({ lexicon: loadWordNetLexicon() }),
  )
  const app = createApp({
    db,
    env,
    embedder,
    databaseFile,
    backupDirectory: env.ENGRAM_BACKUP_DIR ?? path.join(path.dirname(databaseFile), 'backups'),
  })
  const orphans = await app.services.lifecycle.removeOrphanFiles()
  if (orphans > 0)
    console.info(`[lifecycle] removed ${orphans} vector file(s) of agents that no longer exist`)
  const running = await listen(app, env.API_PORT, env.API_HOST, env.ENGRAM_MAX_REQUEST_BYTES)
  app.services.optimizer.start()
  // After a change of embedding provider, everything is embedded again in the background;
  // search uses keywords for what is not done yet.
  const progress = app.services.embeddings.reembed()
  console.info(`[embeddings] model ${progress.model}`)
  // What failed to embed (a provider outage) is tried again every minute.
  const retryEmbeddings = setInterval(() => {
    void app.services.embeddings
      .coverage(null)
      .then((kinds) => {
        if (kinds.some((k) => k.embedded < k.total)) app.services.embeddings.reembed()
      })
      .catch((error) => console.warn('[embeddings] retry check failed:', error))
  }, EMBEDDING_RETRY_INTERVAL_MS)
  retryEmbeddings.unref()
  console.info(
    `Engram API on http://localhost:${running.port}/graphql (WebSocket and SSE subscriptions on the same path), database ${databaseFile}`,
  )
  const shutdown = async (signal: string) => {
    console.info(`[api] ${signal}: shutting down`)
    clearInterval(retryEmbeddings)
    await running.close()
    await db.$disconnect()
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

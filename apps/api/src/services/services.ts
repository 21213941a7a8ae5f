import type { Storage } from '@engram/engine'
import { createOperations } from '@engram/engine'
import {
  type composeEngine,
  createSqliteEngine,
  type PrismaSessionRepository,
  type SqliteEngineOptions,
  type SqliteJobQueue,
} from '@engram/store-sqlite'
import { LiveTokens } from '../auth.ts'
import { asEventBus, type EngramPubSub } from '../pubsub.ts'
import type { PostgresBackend } from '../store.ts'

/** What the engine needs (createSqliteEngine's options), with yoga's pubsub as its event bus. */
export interface ServicesOptions extends Omit<SqliteEngineOptions, 'events'> {
  pubsub: EngramPubSub
  /** The engine runs on Postgres when given (DATABASE_URL postgres://); on `db`'s SQLite otherwise. */
  postgres?: PostgresBackend | null
}

/**
 * What the door needs of either adapter's bundle: the ports, and the shared Prisma classes'
 * extras both adapters expose (failed jobs and their retry, a conversation's participants).
 */
export type ApiStorage = Storage & { sessions: PrismaSessionRepository; jobs: SqliteJobQueue }
type ApiEngine = ReturnType<typeof composeEngine<ApiStorage>>

export type Services = ReturnType<typeof createServices>

/**
 * The API's composition root: the engine on the SQLite adapter, plus what only the GraphQL door
 * has (yoga's pubsub as the engine's event bus, live tokens for browsers). One set per process.
 */
export function createServices(options: ServicesOptions) {
  const { db, clock, pubsub } = options
  // The engine on the SQLite adapter, wired as the embedded SDK wires it (store-sqlite's
  // createSqliteEngine), or on Postgres through the same composition; only the event bus is the
  // door's own.
  const events = asEventBus(pubsub)
  const engine: ApiEngine = options.postgres
    ? options.postgres.createEngine({ ...options, events })
    : createSqliteEngine({ ...options, events })
  return {
    ...engine,
    engine,
    db,
    pubsub,
    llm: options.llm ?? null,
    sessionRepository: engine.storage.sessions,
    // The catalog's operations, which the embedded SDK calls too: resolvers answer through them
    // where the answer is the catalog's output shape.
    operations: createOperations(engine),
    liveTokens: new LiveTokens(clock, undefined, (agentId) => engine.writes.incarnation(agentId)),
  }
}

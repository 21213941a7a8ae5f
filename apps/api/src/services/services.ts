import { createOperations } from '@engram/engine'
import { createSqliteEngine, type SqliteEngineOptions } from '@engram/store-sqlite'
import { LiveTokens } from '../auth.ts'
import { asEventBus, type EngramPubSub } from '../pubsub.ts'

/** What the engine on SQLite needs (createSqliteEngine), with yoga's pubsub as its event bus. */
export interface ServicesOptions extends Omit<SqliteEngineOptions, 'events'> {
  pubsub: EngramPubSub
}

export type Services = ReturnType<typeof createServices>

/**
 * The API's composition root: the engine on the SQLite adapter, plus what only the GraphQL door
 * has (yoga's pubsub as the engine's event bus, live tokens for browsers). One set per process.
 */
export function createServices(options: ServicesOptions) {
  const { db, clock, pubsub } = options
  // The engine on the SQLite adapter, wired as the embedded SDK wires it (store-sqlite's
  // createSqliteEngine); only the event bus is the door's own.
  const engine = createSqliteEngine({ ...options, events: asEventBus(pubsub) })
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

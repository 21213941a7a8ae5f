import { createHashingEmbedder, type Embedder } from '@engram/core'
import { embedJob, type Logger } from '@engram/engine'
import { composeEngine, type EngineCompositionOptions } from '@engram/store-sqlite'
import type { PostgresDatabase } from './db/client.ts'
import { createPostgresStorage, type PostgresStorageOptions } from './storage.ts'

export interface PostgresEngineOptions extends Omit<EngineCompositionOptions, 'embedder' | 'log'> {
  /** An open, migrated database (createPostgresDatabase + applyPostgresMigrations). */
  db: PostgresDatabase
  embedder?: Embedder
  log?: Logger
  vectorIndex?: PostgresStorageOptions['vectorIndex']
  /** The database's URL and a folder for logical backups (none: backups unavailable). */
  backups?: PostgresStorageOptions['backups']
  /** pgvector or NOTIFY, and where the LISTEN connection goes (see createPostgresStorage). */
  vectors?: PostgresStorageOptions['vectors']
  /** How many messages a replica's batched appends write in one transaction at most. */
  appendBatch?: PostgresStorageOptions['appendBatch']
}

/**
 * The engine on Postgres, wired exactly as on SQLite (store-sqlite's composeEngine): each message's
 * embed job queued in the transaction that stores it, the embedder's model naming the vectors.
 */
export function createPostgresEngine(options: PostgresEngineOptions) {
  const log = options.log ?? console
  const embedder = options.embedder ?? createHashingEmbedder()
  const storage = createPostgresStorage({
    db: options.db,
    clock: options.clock,
    // ofNewRow: the message was created by the very transaction that queues the job (ids from a sequence).
    messageJobs: (scope, messageIds) =>
      messageIds.map((id) => ({ ...embedJob(scope, 'message', id), ofNewRow: true })),
    vectorModel: embedder.model,
    ...(options.vectorIndex ? { vectorIndex: options.vectorIndex } : {}),
    backups: options.backups ?? null,
    ...(options.vectors ? { vectors: options.vectors } : {}),
    ...(options.appendBatch ? { appendBatch: options.appendBatch } : {}),
    log,
  })
  return composeEngine(storage, { ...options, embedder, log })
}

export type PostgresEngine = ReturnType<typeof createPostgresEngine>

/**
 * The embedded runtime: the engine on one SQLite file in this process, answering each operation
 * from the engine's operations layer (the same handlers the GraphQL door calls): no schema, no
 * documents, no HTTP. It starts what the API server starts (migrations, the SQLite engine as
 * store-sqlite composes it for both, orphan files removed, the optimizer's schedule, embeddings
 * caught up, the job worker, the WAL checkpointer) and stops it on close.
 */
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  type Clock,
  createHashingEmbedder,
  createTokenCounter,
  DEFAULT_OPTIMIZER_CONFIG,
  type Embedder,
} from '@engram/core'
import {
  createOperations,
  EMBEDDING_KINDS,
  type QueryOrMutationName,
  type SubscriptionName,
} from '@engram/engine'
import { loadWordNetLexicon } from '@engram/providers'
import {
  applyMigrations,
  createDatabase,
  createSqliteEngine,
  migrationsDirectory,
  startCheckpointer,
} from '@engram/store-sqlite'
import type { EmbeddedRuntime, OpenOptions } from './runtime.ts'

const QUIET = { info() {}, warn() {}, error() {} }

/** Opens (creating and migrating when new) the SQLite file and starts the engine's background work. */
export async function openRuntime(options: OpenOptions): Promise<EmbeddedRuntime> {
  const databaseFile = path.resolve(options.path)
  fs.mkdirSync(path.dirname(databaseFile), { recursive: true })
  applyMigrations(databaseFile, migrations())
  const db = createDatabase(databaseFile)
  const clock: Clock = options.clock ?? { now: () => new Date() }
  // The server's offline default: hashing with WordNet synonyms, so paraphrases match.
  const embedder: Embedder = options.embedder ?? createHashingEmbedder({ lexicon: loadWordNetLexicon() })
  const open = () =>
    createSqliteEngine({
      db,
      clock,
      tokenCounter: createTokenCounter(options.tokenizer ?? 'o200k_base'),
      log: options.log ?? QUIET,
      embedder,
      optimizerIntervalMs: options.optimizerIntervalMs ?? DEFAULT_OPTIMIZER_CONFIG.intervalMs,
      databaseFile,
      backupDirectory: options.backupDirectory ?? path.join(path.dirname(databaseFile), 'backups'),
      ...(options.contextBuilder ? { contextBuilder: options.contextBuilder } : {}),
    })
  let engine: ReturnType<typeof open>
  try {
    engine = open()
  } catch (error) {
    // Bad options (the context builder's rules) are refused here: the file is not left open.
    await db.$disconnect()
    throw error
  }
  const operations = createOperations(engine)
  const checkpointer = startCheckpointer(databaseFile)
  await engine.lifecycle.removeOrphanFiles()
  // The optimizer's schedule and the job worker (embed jobs) run in this process, as in the server.
  engine.optimizer.start()
  await engine.embeddings.catchUp()
  engine.jobs.start()

  const known = new Set<string>()
  return {
    async ensure(principal) {
      // An agent is created on first use, as an embedded client for it is opened.
      if (principal.kind !== 'agent' || known.has(principal.agentId)) return
      if (!(await engine.agents.findAgent(principal.agentId)))
        await engine.agents.createAgent(principal.agentId)
      known.add(principal.agentId)
    },
    call: (name, principal, input) => operations.call(name as QueryOrMutationName, principal, input),
    subscribe: (name, principal, input) => operations.stream(name as SubscriptionName, principal, input),
    async settle(agentId) {
      const agents = agentId ? [agentId] : (await engine.agents.listAgents('admin')).map((a) => a.id)
      for (const agent of agents)
        for (const kind of EMBEDDING_KINDS) await engine.embeddings.fill(agent, kind)
      await engine.embeddings.settled()
    },
    async close() {
      await engine.optimizer.stop()
      // Jobs in flight finish first; queued ones stay in the table for the next open.
      await engine.jobs.stop()
      await engine.embeddings.flush()
      await checkpointer.stop()
      await db.$disconnect()
    },
  }
}

/** The published bundle carries the migrations beside it (scripts/build.ts); the sources use the repository's. */
function migrations(): string {
  const beside = fileURLToPath(new URL('./migrations', import.meta.url))
  return fs.existsSync(beside) ? beside : migrationsDirectory()
}

/**
 * TEMPORARY (issue 12 §1 is moving the services into @engram/engine in parallel): the one file of
 * the SDK that reaches into apps/api. It builds what `apps/api`'s start-up builds (migrations, the
 * SQLite adapter, `createServices` through `createApp`, the optimizer schedule, the job worker) on
 * one file, and executes the catalog's documents against the API's schema in this process: no
 * server, no port, no HTTP, each document parsed once. At the merge the lead replaces the imports
 * below with `createEngine` and the door's schema package; nothing else in `src/embedded` names
 * apps/api (the embedded client talks to `EmbeddedRuntime`, a structural interface).
 */
import { randomUUID } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Clock, createHashingEmbedder, DEFAULT_OPTIMIZER_CONFIG, type Embedder } from '@engram/core'
import { EMBEDDING_KINDS, hashApiKey, keyPrefix } from '@engram/engine'
import { applyMigrations, createDatabase, migrationsDirectory } from '@engram/store-sqlite'
import { type DocumentNode, execute, type GraphQLError, getOperationAST, parse, subscribe } from 'graphql'
import { ensureAdminKey } from '../../../../apps/api/src/admin-key.ts'
import type { Viewer } from '../../../../apps/api/src/auth.ts'
import { maskError } from '../../../../apps/api/src/client-errors.ts'
import type { Context } from '../../../../apps/api/src/context.ts'
import { loadWordNetLexicon } from '../../../../apps/api/src/embedding/wordnet-lexicon.ts'
import { schema } from '../../../../apps/api/src/schema/index.ts'
import { createApp } from '../../../../apps/api/src/yoga.ts'
import type { EmbeddedRuntime, ExecutionAnswer, OpenOptions, Principal } from './runtime.ts'

const QUIET = { info() {}, warn() {}, error() {} }

/** Opens (creating and migrating when new) the SQLite file and starts the engine's background work. */
export async function openRuntime(options: OpenOptions): Promise<EmbeddedRuntime> {
  const databaseFile = path.resolve(options.path)
  fs.mkdirSync(path.dirname(databaseFile), { recursive: true })
  applyMigrations(databaseFile, migrations())
  const db = createDatabase(databaseFile)
  const log = options.log ?? QUIET
  const clock: Clock = options.clock ?? { now: () => new Date() }
  // The server's offline default: hashing with WordNet synonyms, so paraphrases match.
  const embedder: Embedder = options.embedder ?? createHashingEmbedder({ lexicon: loadWordNetLexicon() })
  const app = createApp({
    db,
    clock,
    log,
    embedder,
    databaseFile,
    backupDirectory: options.backupDirectory ?? path.join(path.dirname(databaseFile), 'backups'),
    env: {
      NODE_ENV: 'production',
      OPTIMIZER_INTERVAL_MS: options.optimizerIntervalMs ?? DEFAULT_OPTIMIZER_CONFIG.intervalMs,
      ENGRAM_TOKENIZER: options.tokenizer ?? 'o200k_base',
      // The documents are the catalog's own, parsed once: no request limits apply in process.
      ENGRAM_MAX_QUERY_DEPTH: 100,
      ENGRAM_MAX_QUERY_COST: 1_000_000,
    },
  })
  const { services } = app
  await app.services.lifecycle.removeOrphanFiles()
  // The optimizer's schedule and the job worker (embed jobs) run in this process, as in the server.
  services.optimizer.start()
  await services.embeddings.catchUp()
  services.jobs.start()

  const parsed = new Map<string, { document: DocumentNode; kind: string }>()
  const documentFor = (source: string) => {
    let entry = parsed.get(source)
    if (!entry) {
      const document = parse(source)
      entry = { document, kind: getOperationAST(document)?.operation ?? 'query' }
      parsed.set(source, entry)
    }
    return entry
  }

  // A principal is a real key row (never shown, never usable from outside: its secret is thrown
  // away), because the API checks a subscriber's key row before each event.
  const viewers = new Map<string, Viewer>()
  async function viewerOf(principal: Principal): Promise<Viewer> {
    const name = principal.kind === 'operator' ? '' : principal.agentId
    const known = viewers.get(name)
    if (known) return known
    let viewer: Viewer
    if (principal.kind === 'operator') {
      await ensureAdminKey(db, undefined)
      const row = await db.apiKey.findFirst({ where: { role: 'ADMIN', revokedAt: null } })
      viewer = { kind: 'admin', keyId: String(row?.id) }
    } else {
      const agentId = principal.agentId
      await services.agents.createAgent(agentId)
      const row =
        (await db.apiKey.findFirst({
          where: { agentId, role: 'AGENT', label: EMBEDDED_KEY_LABEL, revokedAt: null },
        })) ??
        (await db.apiKey.create({
          data: {
            id: randomUUID(),
            agentId,
            role: 'AGENT',
            label: EMBEDDED_KEY_LABEL,
            ...secretless(),
          },
        }))
      viewer = { kind: 'agent', keyId: row.id, agentId }
    }
    viewers.set(name, viewer)
    return viewer
  }

  const contextFor = (viewer: Viewer, kind: string): Context => ({
    services,
    viewer,
    writes: new Set<string>(),
    isMutation: kind === 'mutation',
  })
  const masked = (errors: readonly GraphQLError[] | undefined) =>
    errors?.map((error) => {
      const shown = maskError(error, 'Unexpected error.', log) as GraphQLError
      return { message: shown.message, extensions: shown.extensions as { code?: unknown } }
    })

  return {
    async ensure(principal) {
      await viewerOf(principal)
    },
    async execute(source, variables, principal) {
      const { document, kind } = documentFor(source)
      const context = contextFor(await viewerOf(principal), kind)
      const result = await execute({ schema, document, contextValue: context, variableValues: variables })
      // What the API's writesDone plugin does when a mutation ends: caches see its writes.
      for (const scope of context.writes) services.writes.touch(scope)
      return { data: result.data as ExecutionAnswer['data'], errors: masked(result.errors) as never }
    },
    async subscribe(source, variables, principal) {
      const { document, kind } = documentFor(source)
      const context = contextFor(await viewerOf(principal), kind)
      const result = await subscribe({ schema, document, contextValue: context, variableValues: variables })
      if (Symbol.asyncIterator in result) {
        const events = result as AsyncGenerator<{ data?: unknown; errors?: readonly GraphQLError[] }>
        return {
          async next() {
            const step = await events.next()
            if (step.done) return { done: true, value: undefined }
            return {
              done: false,
              value: {
                data: step.value.data as ExecutionAnswer['data'],
                errors: masked(step.value.errors) as never,
              },
            }
          },
          async return() {
            await events.return?.(undefined)
            return { done: true, value: undefined }
          },
        }
      }
      return { data: result.data as ExecutionAnswer['data'], errors: masked(result.errors) as never }
    },
    async settle(agentId) {
      const agents = agentId
        ? [agentId]
        : (await db.agent.findMany({ select: { id: true } })).map((a) => a.id)
      for (const agent of agents)
        for (const kind of EMBEDDING_KINDS) await services.embeddings.fill(agent, kind)
      await services.embeddings.settled()
    },
    async close() {
      await app.close()
      await db.$disconnect()
    },
  }
}

/** The published bundle carries the migrations beside it (scripts/build.ts); the sources use the repository's. */
function migrations(): string {
  const beside = fileURLToPath(new URL('./migrations', import.meta.url))
  return fs.existsSync(beside) ? beside : migrationsDirectory()
}

const EMBEDDED_KEY_LABEL = 'embedded (Engram.open)'

/** A key row whose secret nobody holds: the hash of random bytes that are then forgotten. */
function secretless() {
  const secret = `engram_${randomUUID()}${randomUUID()}`
  return { keyHash: hashApiKey(secret), keyPrefix: keyPrefix(secret) }
}

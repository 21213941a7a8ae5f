// The real server for the load benchmark (load.ts forks it): createApp + listen() on 127.0.0.1 over
// a given SQLite file, with the offline default embedder (WordNet synonyms) as `pnpm start` uses.
// A child process of its own, so the load generator does not share its event loop, and its
// memory is the server's alone. Commands arrive over IPC: optimize, memory, cpu, settle, stop.
// With a worker count above 1 it is the cluster of ENGRAM_WORKERS (cluster.ts): this process is
// the primary, which answers `cpu` with every process's sum and passes the rest to worker 1.
import cluster, { type Worker } from 'node:cluster'
import { createServer } from 'node:net'
import path from 'node:path'
import { createHashingEmbedder } from '@engram/core'
import { loadWordNetLexicon } from '@engram/providers'
import { applyMigrations, createDatabase, directSqlite, migrationsDirectory } from '@engram/store-sqlite'
import { ensureAdminKey } from '../src/admin-key.ts'
import { ClusterEventTarget, freshAcrossWorkers, runWorkers, workerIndex } from '../src/cluster.ts'
import { candidateRowsOf, dialogueReadsOf } from '../src/env.ts'
import { listen } from '../src/server.ts'
import { createApp } from '../src/yoga.ts'

export type LoadServerCommand =
  | { id: number; cmd: 'optimize'; agentId: string; readWhole?: boolean }
  | { id: number; cmd: 'memory' }
  | { id: number; cmd: 'cpu' }
  | { id: number; cmd: 'settle' }
  | { id: number; cmd: 'stop' }

const [databaseFile, adminKey, workersArgument] = process.argv.slice(2)
if (!databaseFile || !adminKey || !process.send) {
  console.error('usage: forked by load.ts with <database file> <admin key> [server processes]')
  process.exit(2)
}
const workerCount = Number(workersArgument ?? 1)
const send = (message: unknown) => process.send?.(message)

if (workerCount > 1 && cluster.isPrimary) await runPrimary(databaseFile, adminKey, workerCount)
else await runServer(databaseFile, adminKey)

/** A free port of 127.0.0.1 for the workers to share (each listens on it through the primary). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })
}

async function runPrimary(file: string, key: string, count: number) {
  applyMigrations(file, migrationsDirectory())
  const db = createDatabase(file)
  await ensureAdminKey(db, key)
  await db.$disconnect()
  process.env.ENGRAM_LOAD_PORT = String(await freePort())
  const workers = runWorkers({ count, log: { info() {}, error: console.error } })
  // Replies of the workers to the commands passed on, by command id.
  const replies = new Map<string, (message: Record<string, unknown>) => void>()
  let ready = 0
  let port = 0
  cluster.on('message', (_worker: Worker, message: Record<string, unknown>) => {
    if (message?.ready) {
      port = message.port as number
      if (++ready === count) send({ ready: true, port })
      return
    }
    if (typeof message?.loadReply === 'string') replies.get(message.loadReply)?.(message)
  })
  let asked = 0
  const ask = (worker: Worker, command: Record<string, unknown>) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const id = `${asked++}`
      replies.set(id, (reply) => {
        replies.delete(id)
        resolve(reply)
      })
      worker.send({ ...command, loadReply: id })
    })
  process.on('message', async (message: LoadServerCommand) => {
    const all = workers.workers()
    if (message.cmd === 'cpu') {
      // Every process of the server: the workers' CPU and the primary's (it hands connections out).
      const usages = await Promise.all(all.map((worker) => ask(worker, { cmd: 'cpu' })))
      const own = process.cpuUsage()
      const usage = { user: own.user, system: own.system }
      const committed = { commits: 0, writes: 0, appends: 0, lockRefusals: 0 }
      for (const reply of usages) {
        const theirs = reply.usage as NodeJS.CpuUsage
        usage.user += theirs.user
        usage.system += theirs.system
        // A worker of a tree from before the counters answers without them.
        const counts = reply.committed as typeof committed | undefined
        if (counts)
          for (const name of ['commits', 'writes', 'appends', 'lockRefusals'] as const)
            committed[name] += counts[name] ?? 0
      }
      send({ id: message.id, usage, committed })
    } else if (message.cmd === 'stop') {
      await workers.stop()
      send({ id: message.id })
      process.exit(0)
    } else {
      const first = all[0] as Worker
      const { loadReply: _id, ...reply } = await ask(first, message)
      send({ ...reply, id: message.id })
    }
  })
}

async function runServer(file: string, key: string) {
  const worker = workerIndex()
  // The primary stops its workers with SIGTERM: exiting normally writes their CPU profiles too.
  if (worker !== null) process.once('SIGTERM', () => process.exit(0))
  if (worker === null) applyMigrations(file, migrationsDirectory())
  // ENGRAM_SQLITE_SAVEPOINTS=each: the group commit of before issue 18's optimistic batches (a comparison's baseline).
  // ENGRAM_SQLITE_APPEND_INSERTS=per-append, ENGRAM_SQLITE_NEW_ROW_JOBS=checked: the append statements of before issue 18.
  const db = createDatabase(file, {
    ...(process.env.ENGRAM_SQLITE_SAVEPOINTS === 'each' ? { groupCommitSavepoints: 'each' as const } : {}),
    ...(process.env.ENGRAM_SQLITE_APPEND_INSERTS === 'per-append'
      ? { appendInserts: 'per-append' as const }
      : {}),
    ...(process.env.ENGRAM_SQLITE_NEW_ROW_JOBS === 'checked' ? { newRowJobs: 'checked' as const } : {}),
    ...(process.env.ENGRAM_SQLITE_APPENDS_PER_GROUP
      ? { appendsPerGroup: Number(process.env.ENGRAM_SQLITE_APPENDS_PER_GROUP) }
      : {}),
  })
  if (worker === null) await ensureAdminKey(db, key)
  const clusterEvents = worker === null ? null : new ClusterEventTarget()
  const direct = directSqlite(db)
  const app = createApp({
    ...(clusterEvents && direct
      ? {
          eventTarget: clusterEvents,
          workerIndex: worker as number,
          beforeOperation: freshAcrossWorkers(
            clusterEvents,
            async () => (await direct.get<{ data_version: number }>('PRAGMA data_version'))?.data_version,
          ),
        }
      : {}),
    db,
    env: {
      NODE_ENV: 'production',
      OPTIMIZER_INTERVAL_MS: 0,
      ENGRAM_TOKENIZER: 'o200k_base',
      ENGRAM_MAX_QUERY_DEPTH: 12,
      ENGRAM_MAX_QUERY_COST: 20_000,
      // One replica: its optimizer lease guards only against itself. A first run over 100K entries
      // on a loaded shared machine can block the event loop past the default 30 s TTL (no renewal
      // runs meanwhile) and would then lose the lease and apply nothing.
      ENGRAM_OPTIMIZER_LEASE_TTL_MS: 600_000,
      ENGRAM_OPTIMIZER_LEASE_RENEW_MS: 60_000,
      // ENGRAM_LEXICAL_INDEX=off measures the store-read lexical path of before issue 18 (same data).
      ENGRAM_LEXICAL_INDEX: process.env.ENGRAM_LEXICAL_INDEX === 'off' ? 'off' : 'on',
      // Writes' switches a comparison (ENGRAM_LOAD_COMPARE) or a probe sets; the defaults otherwise.
      ...(process.env.ENGRAM_DEBOUNCE_GRANULARITY_MS === undefined
        ? {}
        : { ENGRAM_DEBOUNCE_GRANULARITY_MS: Number(process.env.ENGRAM_DEBOUNCE_GRANULARITY_MS) }),
      ...(process.env.ENGRAM_EXTRACTION === 'off' ? { ENGRAM_EXTRACTION: 'off' as const } : {}),
      ...(process.env.ENGRAM_SUMMARIES === 'off' ? { ENGRAM_SUMMARIES: 'off' as const } : {}),
      // ENGRAM_SEARCH_DIALOGUE_READS=all reads dialogue context as before hybrid18 (same hits).
      ENGRAM_SEARCH_DIALOGUE_READS: dialogueReadsOf(process.env.ENGRAM_SEARCH_DIALOGUE_READS),
      // ENGRAM_SEARCH_CANDIDATE_ROWS=all reads every candidate's row before scoring (same hits).
      ENGRAM_SEARCH_CANDIDATE_ROWS: candidateRowsOf(process.env.ENGRAM_SEARCH_CANDIDATE_ROWS),
      // The exact scans' SIMD kernel: ENGRAM_VECTOR_KERNEL=javascript measures the scan without it.
      ENGRAM_VECTOR_KERNEL: process.env.ENGRAM_VECTOR_KERNEL === 'javascript' ? 'javascript' : 'auto',
      ...(process.env.ENGRAM_VECTOR_KERNEL_ABOVE
        ? { ENGRAM_VECTOR_KERNEL_ABOVE: Number(process.env.ENGRAM_VECTOR_KERNEL_ABOVE) }
        : {}),
    },
    embedder: createHashingEmbedder({ lexicon: loadWordNetLexicon() }),
    databaseFile: file,
    backupDirectory: path.join(path.dirname(file), 'backups'),
    log: { info() {}, warn: console.warn, error: console.error },
  })
  const running = await listen(app, Number(process.env.ENGRAM_LOAD_PORT ?? 0), '127.0.0.1')
  // A worker answers the primary with the command's loadReply id (its own ids are load.ts').
  const reply = (message: LoadServerCommand & { loadReply?: string }, answer: Record<string, unknown>) =>
    send(message.loadReply === undefined ? answer : { ...answer, loadReply: message.loadReply })

  process.on('message', async (incoming: LoadServerCommand & { loadReply?: string }) => {
    if (typeof incoming !== 'object' || incoming === null || !('cmd' in incoming)) return
    const message = incoming
    const send = (answer: Record<string, unknown>) => reply(message, answer)
    try {
      if (message.cmd === 'optimize') {
        const started = performance.now()
        const cpu = process.cpuUsage()
        const event = await app.services.optimizer.run(message.agentId, null, {
          readWhole: message.readWhole ?? false,
        })
        const used = process.cpuUsage(cpu)
        send({
          id: message.id,
          ms: performance.now() - started,
          cpuMs: (used.user + used.system) / 1_000,
          snapshot: event.snapshot,
        })
      } else if (message.cmd === 'memory') {
        // Twice: the first pass finalises what the second frees.
        globalThis.gc?.()
        globalThis.gc?.()
        send({ id: message.id, usage: process.memoryUsage() })
      } else if (message.cmd === 'settle') {
        // Background work started by the requests so far (vector index builds on their thread).
        const started = performance.now()
        await app.services.embeddings.settled()
        send({ id: message.id, ms: performance.now() - started })
      } else if (message.cmd === 'cpu') {
        // With the group commits' counts: appends per commit over a run, per process.
        send({ id: message.id, usage: process.cpuUsage(), committed: { ...direct?.committed } })
      } else if (message.cmd === 'stop') {
        await running.close()
        await db.$disconnect()
        send({ id: message.id })
        process.exit(0)
      }
    } catch (error) {
      send({ id: message.id, error: error instanceof Error ? error.stack : String(error) })
    }
  })
  send({ ready: true, port: running.port })
}

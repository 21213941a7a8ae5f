// The real server for the load benchmark (load.ts forks it): createApp + listen() on 127.0.0.1 over
// a given SQLite file, with the offline default embedder (WordNet synonyms) as `pnpm start` uses.
// A child process of its own, so the load generator does not share its event loop, and its
// memory is the server's alone. Commands arrive over IPC: optimize, memory, cpu, settle, stop.
import path from 'node:path'
import { createHashingEmbedder } from '@engram/core'
import { loadWordNetLexicon } from '@engram/providers'
import { applyMigrations, createDatabase, migrationsDirectory } from '@engram/store-sqlite'
import { ensureAdminKey } from '../src/admin-key.ts'
import { listen } from '../src/server.ts'
import { createApp } from '../src/yoga.ts'

export type LoadServerCommand =
  | { id: number; cmd: 'optimize'; agentId: string }
  | { id: number; cmd: 'memory' }
  | { id: number; cmd: 'cpu' }
  | { id: number; cmd: 'settle' }
  | { id: number; cmd: 'stop' }

const [databaseFile, adminKey] = process.argv.slice(2)
if (!databaseFile || !adminKey || !process.send) {
  console.error('usage: forked by load.ts with <database file> <admin key>')
  process.exit(2)
}
const send = (message: unknown) => process.send?.(message)

applyMigrations(databaseFile, migrationsDirectory())
const db = createDatabase(databaseFile)
await ensureAdminKey(db, adminKey)
const app = createApp({
  db,
  env: {
    NODE_ENV: 'production',
    OPTIMIZER_INTERVAL_MS: 0,
    ENGRAM_TOKENIZER: 'o200k_base',
    ENGRAM_MAX_QUERY_DEPTH: 12,
    ENGRAM_MAX_QUERY_COST: 20_000,
    // ENGRAM_LEXICAL_INDEX=off measures the store-read lexical path of before issue 18 (same data).
    ENGRAM_LEXICAL_INDEX: process.env.ENGRAM_LEXICAL_INDEX === 'off' ? 'off' : 'on',
  },
  embedder: createHashingEmbedder({ lexicon: loadWordNetLexicon() }),
  databaseFile,
  backupDirectory: path.join(path.dirname(databaseFile), 'backups'),
  log: { info() {}, warn: console.warn, error: console.error },
})
const running = await listen(app, 0, '127.0.0.1')

process.on('message', async (message: LoadServerCommand) => {
  try {
    if (message.cmd === 'optimize') {
      const started = performance.now()
      const cpu = process.cpuUsage()
      const event = await app.services.optimizer.run(message.agentId)
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
      send({ id: message.id, usage: process.cpuUsage() })
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

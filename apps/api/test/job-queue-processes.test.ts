import { type ChildProcess, fork } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import {
  applyMigrations,
  createDatabase,
  createSqliteStorage,
  type Database,
  migrationsDirectory,
} from '@engram/store-sqlite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { TEST_BACKEND } from './helpers.ts'

const HERE = path.dirname(fileURLToPath(import.meta.url))
const WORKER_SCRIPT = path.join(HERE, 'fixtures', 'job-worker-process.ts')
const TSX = pathToFileURL(createRequire(path.join(HERE, '..', 'package.json')).resolve('tsx')).href
const KIND = 'replica-count'
const JOBS = 40
const BATCH = 4
const LEASE_MS = 60_000

interface Message {
  ready?: string
  holding?: string[]
  ran?: number
  error?: string
}

/** One worker process, and the next message of a kind it sends. */
function startWorker(databaseUrl: string, sideEffects: string, dies = false) {
  const child = fork(WORKER_SCRIPT, [], {
    execArgv: ['--import', TSX],
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: databaseUrl,
      SIDE_EFFECTS: sideEffects,
      DIES: dies ? '1' : '0',
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const next = <K extends keyof Message>(kind: K): Promise<NonNullable<Message[K]>> =>
    new Promise((resolve, reject) => {
      const onMessage = (message: Message) => {
        if (message.error) reject(new Error(message.error))
        else if (message[kind] !== undefined) {
          child.off('message', onMessage)
          resolve(message[kind] as NonNullable<Message[K]>)
        }
      }
      child.on('message', onMessage)
      child.once('exit', (code) => reject(new Error(`worker exited (${code}) before sending ${kind}`)))
    })
  return { child, next }
}

/** The side effects written so far: the workers' ids by job key. */
function runsByKey(file: string): Map<string, string[]> {
  const runs = new Map<string, string[]>()
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : ''
  for (const line of text.split('\n').filter(Boolean)) {
    const [key, worker] = line.split(' ') as [string, string]
    runs.set(key, [...(runs.get(key) ?? []), worker])
  }
  return runs
}

// Worker processes on one SQLite file (ENGRAM_REPLICAS_DATABASE_URL may name another database
// once its adapter is opened by the worker script), as the job workers of several API replicas.
// SQLite's case (one file, its write lock between processes); Postgres's claim is covered by the
// same spec in process (describeJobsAcrossWorkers in conformance-postgres.test.ts).
describe.skipIf(TEST_BACKEND === 'postgres')('the durable job queue consumed by several processes', () => {
  let directory: string
  let db: Database
  const children: ChildProcess[] = []

  beforeAll(() => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-job-processes-'))
  })
  afterAll(async () => {
    for (const child of children)
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
    await db?.$disconnect()
    fs.rmSync(directory, { recursive: true, force: true })
  })

  it('runs each job once across processes, including the batch of one killed mid-job, once its lease expires', async () => {
    const file = path.join(directory, 'engram.db')
    const databaseUrl = process.env.ENGRAM_REPLICAS_DATABASE_URL ?? `file:${file}`
    const sideEffects = path.join(directory, 'side-effects.log')
    applyMigrations(file, migrationsDirectory())
    db = createDatabase(file)
    const storage = createSqliteStorage({ db, clock: { now: () => new Date() } })
    for (const agent of ['agent-a', 'agent-b']) await storage.repositories.agents.upsert(agent, null)
    const keys = Array.from({ length: JOBS }, (_, i) => `job-${i}`)
    await storage.jobs.enqueue(
      keys.map((key, i) => ({ kind: KIND, agentId: i % 2 === 0 ? 'agent-a' : 'agent-b', key })),
    )

    // The first worker takes a batch and is killed holding it (kill -9: nothing is released).
    const dying = startWorker(databaseUrl, sideEffects, true)
    const survivors = [startWorker(databaseUrl, sideEffects), startWorker(databaseUrl, sideEffects)]
    children.push(dying.child, ...survivors.map((s) => s.child))
    await Promise.all([dying, ...survivors].map((worker) => worker.next('ready')))
    const holding = dying.next('holding')
    dying.child.send({ run: true })
    const held = await holding
    expect(held).toHaveLength(BATCH)
    const exited = new Promise((resolve) => dying.child.once('exit', resolve))
    dying.child.kill('SIGKILL')
    await exited

    // The other two drain the queue side by side: everything but the dead worker's batch, once.
    const drain = () =>
      Promise.all(
        survivors.map((worker) => {
          const ran = worker.next('ran')
          worker.child.send({ run: true })
          return ran
        }),
      )
    const firstRound = await drain()
    expect(firstRound.reduce((sum, n) => sum + n, 0)).toBe(JOBS - BATCH)
    let runs = runsByKey(sideEffects)
    expect([...runs.values()].every((workers) => workers.length === 1)).toBe(true)
    expect(runs.size).toBe(JOBS - BATCH)
    expect(held.filter((key) => runs.has(key))).toEqual([])
    expect((await storage.jobs.stats([KIND]))[0]).toMatchObject({ pending: 0, running: BATCH })

    // Their clocks pass the lease: the dead worker's batch is taken over, and run once.
    for (const worker of survivors) worker.child.send({ advanceMs: LEASE_MS + 1 })
    const secondRound = await drain()
    expect(secondRound.reduce((sum, n) => sum + n, 0)).toBe(BATCH)
    runs = runsByKey(sideEffects)
    expect(keys.filter((key) => runs.get(key)?.length !== 1)).toEqual([])
    expect((await storage.jobs.stats([KIND]))[0]).toMatchObject({ pending: 0, running: 0, failed: 0 })
  }, 120_000)
})

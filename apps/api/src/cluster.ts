import cluster, { type Worker } from 'node:cluster'
import type { Scheduler } from '@engram/core'

/**
 * Several server processes of one replica (ENGRAM_WORKERS, issue 18): node:cluster's primary holds
 * the port and hands each new connection to the next worker; every worker is a whole server
 * (createApp + listen) on the same database. What one worker's engine publishes (subscriptions'
 * events, `cache:invalidate`) reaches the others through the primary, so a worker never serves
 * what another one's write made stale, without Redis. With REDIS_URL the Redis bus does that
 * instead, across machines as well.
 */

/** Which worker a process is (1..N), set by the primary; stable across a crashed worker's restart. */
export const WORKER_INDEX_VARIABLE = 'ENGRAM_WORKER_INDEX'

interface EventMessage {
  engramEvent: { topic: string; detail: unknown }
}

/** A worker asks the primary to answer once it has passed on every event received before. */
interface SyncMessage {
  engramSync: number
}

/** The primary's answer to a SyncMessage, sent after the events it had received. */
interface SyncedMessage {
  engramSynced: number
}

function isEventMessage(message: unknown): message is EventMessage {
  return typeof message === 'object' && message !== null && 'engramEvent' in message
}

function isSyncMessage(message: unknown): message is SyncMessage {
  return typeof message === 'object' && message !== null && 'engramSync' in message
}

function isSyncedMessage(message: unknown): message is SyncedMessage {
  return typeof message === 'object' && message !== null && 'engramSynced' in message
}

/** This process's place in the cluster: its index (1..N), or null when it runs alone. */
export function workerIndex(): number | null {
  if (!cluster.isWorker) return null
  const index = Number(process.env[WORKER_INDEX_VARIABLE])
  return Number.isInteger(index) && index >= 1 ? index : null
}

/**
 * The event target behind yoga's pubsub (and the engine's EventBus) in a worker: an event reaches
 * this process's listeners at once, as in a single process, and is sent to the primary, which
 * passes it to every other worker. The channel is structured-clone IPC (`serialization:
 * 'advanced'`), so Dates stay Dates. Like Redis pub/sub it is asynchronous: a read on another
 * worker that races the message may be served what it cached just before (well under a
 * millisecond on one machine, less than the client's next round trip).
 */
export class ClusterEventTarget extends EventTarget {
  private syncs = 0
  private readonly awaitingSync = new Map<number, () => void>()
  private lastSync: Promise<void> | null = null

  private readonly receive = (message: unknown) => {
    if (isSyncedMessage(message)) {
      const resolve = this.awaitingSync.get(message.engramSynced)
      this.awaitingSync.delete(message.engramSynced)
      // The events that came before this answer are dispatched; the listeners act on them in
      // promise continuations (yoga's pubsub iterators, ReplicaCaches): those all run first.
      if (resolve) setImmediate(resolve)
      return
    }
    if (!isEventMessage(message)) return
    super.dispatchEvent(new CustomEvent(message.engramEvent.topic, { detail: message.engramEvent.detail }))
  }

  constructor(private readonly log: Pick<Console, 'warn'> = console) {
    super()
    process.on('message', this.receive)
  }

  override dispatchEvent(event: Event): boolean {
    const delivered = super.dispatchEvent(event)
    if (process.connected && process.send) {
      try {
        const message: EventMessage = {
          engramEvent: { topic: event.type, detail: (event as CustomEvent).detail },
        }
        process.send(message)
      } catch (error) {
        // A detail structured clone cannot copy (a function) stays in this process, as an event
        // did before workers existed; the others miss it, which the log says.
        this.log.warn(`[workers] event ${event.type} not sent to the other workers:`, error)
      }
    }
    return delivered
  }

  /**
   * Resolves once every event another worker sent before now has been applied here. A worker sends
   * a write's invalidation before it answers the write's request, so after this a request sees
   * every write whose answer a client could have had. `started` says whether something changed at
   * all (SQLite's data_version moved): requests in a quiet spell only wait for a sync in flight.
   */
  sync(changed: boolean): Promise<void> {
    if (!changed) return this.lastSync ?? Promise.resolve()
    if (!process.connected || !process.send) return Promise.resolve()
    const id = ++this.syncs
    const synced = new Promise<void>((resolve) => {
      this.awaitingSync.set(id, resolve)
      const message: SyncMessage = { engramSync: id }
      process.send?.(message)
    })
    this.lastSync = synced
    void synced.then(() => {
      if (this.lastSync === synced) this.lastSync = null
    })
    return synced
  }

  close(): void {
    process.off('message', this.receive)
    for (const resolve of this.awaitingSync.values()) resolve()
    this.awaitingSync.clear()
  }
}

/**
 * What a worker's requests wait for before they read (createApp's `beforeOperation`): when another
 * connection has committed since the last look (SQLite's `PRAGMA data_version`, a few microseconds),
 * the other workers' invalidations up to now. A worker whose database nobody else wrote meanwhile
 * does not wait at all; without a counter (`dataVersion` null: Postgres) every request waits for
 * one round trip through the primary (tens of microseconds on one machine).
 */
export function freshAcrossWorkers(
  events: ClusterEventTarget,
  dataVersion: (() => Promise<number | undefined>) | null,
): () => Promise<void> {
  let seen: number | undefined
  return async () => {
    // A database with no such counter (Postgres): every request waits for the round trip.
    if (!dataVersion) return events.sync(true)
    const version = await dataVersion()
    const changed = version !== seen
    seen = version
    await events.sync(changed)
  }
}

export interface WorkersOptions {
  count: number
  log: Pick<Console, 'info' | 'error'>
  /** Before a crashed worker is started again (ms): a worker that dies at once does not spin. */
  restartDelayMs?: number
  /** Where the restart delay runs (a test's manual clock; real timers by default). */
  scheduler?: Scheduler
}

/**
 * Real timers that keep the primary alive: with every worker dead, a pending restart is all that
 * is left to keep the process (the engine's scheduler unrefs its timers; this one must not).
 */
const primaryScheduler: Scheduler = {
  setTimer(ms, wake) {
    const timer = setTimeout(wake, ms)
    return () => clearTimeout(timer)
  },
}

/** How long a crashed worker waits before it is started again, by default. */
export const DEFAULT_WORKER_RESTART_DELAY_MS = 1_000

/**
 * The primary's side: starts `count` workers, relays each worker's events to the others, starts a
 * worker again when it dies after it was listening, and stops them all on SIGINT/SIGTERM. A worker
 * that dies before it listens (a bad environment, a port in use) ends the whole server: starting it
 * again would fail the same way.
 */
export function runWorkers(options: WorkersOptions): { stop(): Promise<void>; workers(): Worker[] } {
  const { count, log } = options
  const restartDelayMs = options.restartDelayMs ?? DEFAULT_WORKER_RESTART_DELAY_MS
  const scheduler = options.scheduler ?? primaryScheduler
  cluster.setupPrimary({ serialization: 'advanced' })
  const workers = new Map<number, Worker>()
  const listening = new Set<number>()
  let stopping = false

  const relay = (from: Worker, message: unknown) => {
    if (isSyncMessage(message)) {
      // Answered after this turn's I/O: an event another worker wrote to its channel before this
      // request was sent is read in the same poll and passed on first (one channel keeps order).
      setImmediate(() => {
        const synced: SyncedMessage = { engramSynced: message.engramSync }
        if (from.isConnected()) from.send(synced as never)
      })
      return
    }
    if (!isEventMessage(message)) return
    for (const worker of workers.values())
      if (worker !== from && worker.isConnected()) worker.send(message as never)
  }

  const start = (index: number) => {
    const worker = cluster.fork({ [WORKER_INDEX_VARIABLE]: String(index) })
    workers.set(index, worker)
    worker.on('message', (message) => relay(worker, message))
    worker.once('listening', () => listening.add(index))
    worker.once('exit', (code, signal) => {
      if (workers.get(index) === worker) workers.delete(index)
      if (stopping) return
      const started = listening.delete(index)
      if (!started) {
        log.error(`[workers] worker ${index} exited (${signal ?? code}) before listening: stopping`)
        void stop().then(() => process.exit(1))
        return
      }
      log.error(`[workers] worker ${index} exited (${signal ?? code}); starting it again`)
      scheduler.setTimer(restartDelayMs, () => {
        if (!stopping) start(index)
      })
    })
  }

  const stop = async () => {
    stopping = true
    await Promise.all(
      [...workers.values()].map(
        (worker) =>
          new Promise<void>((resolve) => {
            if (worker.isDead()) return resolve()
            worker.once('exit', () => resolve())
            // Each worker closes its server and its database itself (server.ts' shutdown).
            worker.process.kill('SIGTERM')
          }),
      ),
    )
  }

  for (let index = 1; index <= count; index++) start(index)
  log.info(`[workers] ${count} server processes (ENGRAM_WORKERS), primary ${process.pid}`)
  return { stop, workers: () => [...workers.values()] }
}

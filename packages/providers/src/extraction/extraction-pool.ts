import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Worker } from 'node:worker_threads'
import {
  type CandidateMemory,
  type ConversationTurn,
  type OfflineExtractorOptions,
  parseWith,
  type SummaryTurn,
} from '@engram/core'
import { z } from 'zod'
import type {
  ExtractionReply,
  ExtractionRequest,
  FormationTask,
  OfflineSummaryRequestOptions,
} from './extraction-thread.ts'

const WORKER_FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'extraction-worker.mjs')

/**
 * A worker that dies this many times in a row before it has loaded the extractor will not do
 * better the next time (a missing file, a broken install): the pool stops respawning and refuses.
 */
const MAX_START_FAILURES = 3

export const ExtractionPoolOptionsSchema = z.object({
  /** Threads running the extractor. One per spare core: on a 2-core machine, 1 leaves a core to requests. */
  size: z.number().int().min(1).max(32).default(1),
  /**
   * Calls waiting for a free thread beyond which a new call is refused (ExtractionBusyError): the
   * extract job fails and is retried after its backoff instead of piling turns up in memory.
   */
  maxQueue: z.number().int().min(0).max(10_000).default(16),
})
export type ExtractionPoolOptions = z.input<typeof ExtractionPoolOptionsSchema> & {
  /** The worker script (the SDK's bundle ships its own); the one beside this module by default. */
  workerFile?: string
}

/** The pool's backlog is full: the call is refused now and its job retried later. */
export class ExtractionBusyError extends Error {
  constructor(readonly maxQueue: number) {
    super(`the extraction backlog is full (${maxQueue} calls waiting for a thread); retry later`)
    this.name = 'ExtractionBusyError'
  }
}

/** The thread running a call died (or the pool was closed): that call fails, the next gets a new thread. */
export class ExtractionWorkerError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ExtractionWorkerError'
  }
}

interface Call {
  request: ExtractionRequest
  resolve(result: CandidateMemory[] | string): void
  reject(error: Error): void
}

interface Slot {
  worker: Worker
  ready: boolean
  call: Call | null
  lastError: Error | null
}

export interface ExtractionPoolStats {
  size: number
  busy: number
  waiting: number
  maxQueue: number
  /** Calls answered (with candidates, a summary or an error). */
  completed: number
  /** The same, per kind of work: the server's extraction and summaries both run here. */
  completedByTask: Record<FormationTask, number>
  /** Threads replaced after dying. */
  restarts: number
}

/**
 * Memory formation's offline CPU work on worker threads (issue 13 §2, §3): core's offline
 * extractor (the engine's OfflineExtractor port: wink-nlp's analysis of every sentence) and the
 * summary written without a model (its OfflineSummarizer port: the extractive summary in the
 * strategy's shape) run off the request thread, so a burst of either does not hold up requests.
 * One pool serves both: each thread loads the model once and takes one call at a time (turns and
 * settings in, candidates or a summary out, copied by structured clone); calls beyond the threads
 * wait in one bounded queue. A thread that dies fails the call it held and is replaced.
 */
export class ExtractionPool {
  private readonly slots: Slot[] = []
  private readonly waiting: Call[] = []
  private readonly size: number
  private readonly maxQueue: number
  private readonly workerFile: string
  private nextId = 1
  private restarts = 0
  private completed = 0
  private readonly completedByTask: Record<FormationTask, number> = { extract: 0, summarize: 0 }
  private startFailures = 0
  private closed: Error | null = null

  constructor(options: ExtractionPoolOptions = {}) {
    const { size, maxQueue } = parseWith(ExtractionPoolOptionsSchema, options, 'extractionPool')
    this.size = size
    this.maxQueue = maxQueue
    this.workerFile = options.workerFile ?? WORKER_FILE
    for (let i = 0; i < size; i++) this.slots.push(this.spawn())
  }

  extract(turns: readonly ConversationTurn[], options: OfflineExtractorOptions): Promise<CandidateMemory[]> {
    return this.call({ id: this.nextId++, task: 'extract', turns: [...turns], options }) as Promise<
      CandidateMemory[]
    >
  }

  /** A summary without a model, in the strategy's shape, written on a thread (the OfflineSummarizer port). */
  summarize(turns: readonly SummaryTurn[], options: OfflineSummaryRequestOptions): Promise<string> {
    return this.call({ id: this.nextId++, task: 'summarize', turns: [...turns], options }) as Promise<string>
  }

  private call(request: ExtractionRequest): Promise<CandidateMemory[] | string> {
    if (this.closed) return Promise.reject(this.closed)
    if (this.waiting.length >= this.maxQueue && !this.slots.some((slot) => slot.ready && !slot.call))
      return Promise.reject(new ExtractionBusyError(this.maxQueue))
    return new Promise((resolve, reject) => {
      this.waiting.push({ request, resolve, reject })
      this.dispatch()
    })
  }

  stats(): ExtractionPoolStats {
    return {
      size: this.size,
      busy: this.slots.filter((slot) => slot.call).length,
      waiting: this.waiting.length,
      maxQueue: this.maxQueue,
      completed: this.completed,
      completedByTask: { ...this.completedByTask },
      restarts: this.restarts,
    }
  }

  /** Stops every thread; calls in flight or waiting fail (their jobs run again at the next start). */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = new ExtractionWorkerError('the extraction pool is closed')
    for (const call of this.waiting.splice(0)) call.reject(this.closed)
    await Promise.all(
      this.slots.map(async (slot) => {
        slot.call?.reject(this.closed as Error)
        slot.call = null
        await slot.worker.terminate()
      }),
    )
  }

  private spawn(): Slot {
    const worker = new Worker(this.workerFile)
    // An idle pool must not keep a stopping process alive.
    worker.unref()
    const slot: Slot = { worker, ready: false, call: null, lastError: null }
    worker.on('message', (reply: ExtractionReply) => {
      if (reply.type === 'ready') {
        slot.ready = true
        this.startFailures = 0
      } else if (slot.call && slot.call.request.id === reply.id) {
        const call = slot.call
        slot.call = null
        this.completed++
        this.completedByTask[call.request.task]++
        if (reply.type === 'done') call.resolve(reply.candidates)
        else if (reply.type === 'summarized') call.resolve(reply.summary)
        else
          call.reject(
            new Error(
              `offline ${call.request.task === 'extract' ? 'extraction' : 'summary'} failed: ${reply.error}`,
            ),
          )
      }
      this.dispatch()
    })
    worker.on('error', (error) => {
      slot.lastError = error
    })
    worker.on('exit', (code) => this.replace(slot, code))
    return slot
  }

  private replace(slot: Slot, code: number): void {
    if (this.closed) return
    const why = `the extraction thread exited (code ${code})${slot.lastError ? `: ${slot.lastError.message}` : ''}`
    slot.call?.reject(new ExtractionWorkerError(`${why} during this call`))
    slot.call = null
    const index = this.slots.indexOf(slot)
    if (!slot.ready && ++this.startFailures >= MAX_START_FAILURES) {
      // It never came up: refuse from now on rather than spawning threads in a loop.
      this.closed = new ExtractionWorkerError(`${why} before it was ready, ${MAX_START_FAILURES} times`)
      for (const call of this.waiting.splice(0)) call.reject(this.closed)
      return
    }
    this.restarts++
    if (index >= 0) this.slots[index] = this.spawn()
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (!slot.ready || slot.call) continue
      const call = this.waiting.shift()
      if (!call) return
      slot.call = call
      slot.worker.postMessage(call.request)
    }
  }
}

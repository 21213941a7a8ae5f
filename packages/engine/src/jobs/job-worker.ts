import { randomUUID } from 'node:crypto'
import os from 'node:os'
import {
  type Clock,
  type Job,
  type JobPolicy,
  type JobQueueStats,
  nextRetryAt,
  parseJobPolicy,
} from '@engram/core'
import type { JobQueue } from '../ports/job-queue.ts'
import type { Logger } from '../ports/logger.ts'
import { NO_TELEMETRY, type Telemetry } from '../ports/telemetry.ts'
import { repeat, schedulerOf } from '../scheduling/scheduler.ts'

/**
 * What a handler reports about a batch: the jobs that failed, with why. Jobs not listed are done.
 * A handler that throws fails the whole batch.
 */
export interface JobBatchResult {
  failed?: ReadonlyMap<number, string>
}

export type JobHandler = (jobs: Job[]) => Promise<JobBatchResult | undefined>

interface Registered {
  handler: JobHandler
  policy: JobPolicy
}

/** How often a started worker looks for due jobs (retries coming due, expired leases) unprompted. */
export const DEFAULT_JOB_POLL_INTERVAL_MS = 1_000

/**
 * How long a started worker lets jobs gather after an enqueue before it claims them. Every batch
 * costs the same few statements (claim, read, write, complete) whether it holds one job or 128, so
 * an agent adding messages one at a time would otherwise pay them per message (bench peers:
 * embedded addMessage 250/s with one job per batch). A search does not wait for it: it runs its
 * agent's pending jobs itself.
 */
export const DEFAULT_JOB_GATHER_MS = 25

/**
 * Lets the event loop serve what is waiting (requests, `/health`) before background work goes on.
 * A promise continuation alone does not: a batch whose storage calls resolve without real I/O
 * would run to the end of a backlog before a request's socket is even read. setImmediate runs
 * after the loop's I/O callbacks, which puts background work below request priority.
 */
export function yieldToRequests(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

/**
 * Runs the jobs of the registered kinds. Each worker has its own id, which is the lease owner of
 * the jobs it takes; any number of workers (in this process or others on the same database) may
 * run side by side. Nothing here waits on a timer to decide what is due: `runDue()` does every due
 * job by the engine's clock, so tests move the clock and call it. `start()` adds the poll and the
 * wake-up after each enqueue for production.
 */
export class JobWorker<Queue extends JobQueue = JobQueue> {
  readonly id = `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
  private readonly kinds = new Map<string, Registered>()
  private running: Promise<number> | null = null
  private again = false
  /** Cancels the poll, the lease heartbeat and a pending gather (each null while not set). */
  private poll: (() => void) | null = null
  private unsubscribe: (() => void) | null = null
  private gathering: (() => void) | null = null
  private readonly inline = new Set<Promise<unknown>>()
  /** Batches being run now: their job ids, lease length and when it was last extended (clock ms). */
  private readonly holding = new Set<{ ids: number[]; leaseMs: number; extendedAt: number }>()
  private heartbeat: (() => void) | null = null
  /** Where each job's outcome is reported by kind (issue 17's metrics); nowhere until wired. */
  private telemetry: Telemetry = NO_TELEMETRY

  constructor(
    readonly queue: Queue,
    private readonly clock: Clock,
    private readonly log: Logger = console,
    private readonly pollIntervalMs = DEFAULT_JOB_POLL_INTERVAL_MS,
    private readonly gatherMs = DEFAULT_JOB_GATHER_MS,
  ) {}

  /** Reports each finished job (done, retried, failed for good) to the metrics. */
  reportTo(telemetry: Telemetry): void {
    this.telemetry = telemetry
  }

  /** Adds a kind of job: its handler and how its jobs are batched, leased and retried. */
  register(kind: string, handler: JobHandler, policy: Partial<JobPolicy> = {}): void {
    if (this.kinds.has(kind)) throw new Error(`job kind "${kind}" is registered twice`)
    this.kinds.set(kind, { handler, policy: parseJobPolicy(policy, `jobs.${kind}`) })
  }

  policy(kind: string): JobPolicy | undefined {
    return this.kinds.get(kind)?.policy
  }

  registeredKinds(): string[] {
    return [...this.kinds.keys()]
  }

  stats(): Promise<JobQueueStats[]> {
    return this.queue.stats(this.registeredKinds())
  }

  /**
   * Runs every job that is due, batch after batch, kind after kind, until none is left (jobs that
   * failed come due again only after their backoff). Pending jobs of a crashed run and jobs whose
   * worker died (lease expired) are due too: this is also the recovery at start. Returns how many
   * jobs ran. Calls made while a run is in progress share it (and it looks once more at the end).
   */
  runDue(): Promise<number> {
    if (this.running) {
      this.again = true
      return this.running
    }
    const run = (async () => {
      let ran = 0
      do {
        this.again = false
        for (const kind of this.kinds.keys()) {
          for (;;) {
            const count = await this.runBatch(kind)
            if (count === 0) break
            ran += count
            // Below request priority: requests that arrived during the batch go first.
            await yieldToRequests()
          }
        }
      } while (this.again)
      return ran
    })()
    this.running = run.finally(() => {
      this.running = null
    })
    return this.running
  }

  /** runDue, then wait for inline runs too: everything queued and due is done when it resolves. */
  async drain(): Promise<number> {
    const ran = await this.runDue()
    await Promise.all([...this.inline])
    return ran
  }

  /**
   * Runs an agent's due jobs of a kind now, in the caller's request (a search embedding what it is
   * about to search), at most `maxJobs` of them. Jobs another worker holds are left to it.
   */
  async runFor(kind: string, agentId: string, maxJobs: number): Promise<number> {
    if (!this.kinds.has(kind) || !(await this.queue.hasDue(kind, agentId))) return 0
    const run = (async () => {
      let ran = 0
      while (ran < maxJobs) {
        const count = await this.runBatch(kind, agentId, maxJobs - ran)
        if (count === 0) break
        ran += count
      }
      return ran
    })()
    this.inline.add(run)
    try {
      return await run
    } finally {
      this.inline.delete(run)
    }
  }

  /**
   * Extends the lease of every batch in hand whose lease is a third used, by the engine's clock
   * (a started worker calls it on a timer; tests move the clock and call it). A batch running
   * longer than its lease (a slow model) thus stays with its worker while that worker lives;
   * only a dead worker's jobs come due again.
   */
  async renewLeases(): Promise<void> {
    const now = this.clock.now().getTime()
    for (const batch of [...this.holding]) {
      if (now - batch.extendedAt < batch.leaseMs / 3) continue
      try {
        await this.queue.extend(batch.ids, this.id, batch.leaseMs)
        batch.extendedAt = now
      } catch (error) {
        this.log.warn('[jobs] could not extend the lease of a running batch:', error)
      }
    }
  }

  /** Polls for due jobs and wakes up when jobs are queued, until stop(). Recovers at once. */
  start(): void {
    if (this.poll) return
    // The poll, heartbeat and gather run on the clock's scheduler: a test moving a manual clock
    // sees a started worker gather and poll without waiting.
    const scheduler = schedulerOf(this.clock)
    this.poll = repeat(scheduler, this.pollIntervalMs, () => this.wake())
    // Often enough for the shortest lease registered (a third of it), at most once a poll.
    const shortestLease = Math.min(...[...this.kinds.values()].map((kind) => kind.policy.leaseMs))
    this.heartbeat = repeat(
      scheduler,
      Math.max(10, Math.min(this.pollIntervalMs, shortestLease / 3)),
      () => void this.renewLeases(),
    )
    this.unsubscribe = this.queue.onEnqueued(() => this.gather())
    this.wake()
  }

  async stop(): Promise<void> {
    this.poll?.()
    this.poll = null
    this.heartbeat?.()
    this.heartbeat = null
    this.gathering?.()
    this.gathering = null
    this.unsubscribe?.()
    this.unsubscribe = null
    // Jobs in flight finish (or fail) now; whatever is still queued waits for the next start.
    await this.running
    await Promise.all([...this.inline])
  }

  /** Wakes up once the jobs queued in the next gatherMs are in, for one batch instead of many. */
  private gather(): void {
    if (this.gatherMs <= 0) {
      this.wake()
      return
    }
    if (this.gathering) return
    this.gathering = schedulerOf(this.clock).setTimer(this.gatherMs, () => {
      this.gathering = null
      this.wake()
    })
  }

  private wake(): void {
    this.runDue().catch((error) => this.log.error('[jobs] run failed:', error))
  }

  /** Claims one batch of a kind and runs it; returns how many jobs it held. */
  private async runBatch(kind: string, agentId?: string, limit?: number): Promise<number> {
    const registered = this.kinds.get(kind)
    if (!registered) return 0
    const { policy, handler } = registered
    const claimed = await this.queue.claim(kind, this.id, {
      limit: Math.min(policy.batchSize, limit ?? policy.batchSize),
      leaseMs: policy.leaseMs,
      ...(agentId !== undefined ? { agentId } : {}),
    })
    if (claimed.length === 0) return 0
    // A job taken back from a dead worker may have been on its last attempt already.
    const exhausted = claimed.filter((job) => job.attempts > policy.maxAttempts)
    for (const job of exhausted) {
      await this.queue.fail(job.id, this.id, job.lastError ?? 'lease expired on the last attempt', null)
      this.telemetry.jobFinished(kind, 'failed')
    }
    const jobs = claimed.filter((job) => job.attempts <= policy.maxAttempts)
    if (jobs.length === 0) return claimed.length
    let failed: ReadonlyMap<number, string>
    const held = {
      ids: jobs.map((job) => job.id),
      leaseMs: policy.leaseMs,
      extendedAt: this.clock.now().getTime(),
    }
    this.holding.add(held)
    try {
      failed = (await handler(jobs))?.failed ?? new Map()
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      failed = new Map(jobs.map((job) => [job.id, message]))
    } finally {
      this.holding.delete(held)
    }
    const done = jobs.filter((job) => !failed.has(job.id)).map((job) => job.id)
    await this.queue.complete(done, this.id)
    for (const _ of done) this.telemetry.jobFinished(kind, 'done')
    const now = this.clock.now()
    for (const job of jobs) {
      const error = failed.get(job.id)
      if (error === undefined) continue
      const retryAt = nextRetryAt(policy, job.attempts, now)
      if (!retryAt)
        this.log.warn(`[jobs] ${kind} job ${job.id} (${job.key}) failed ${job.attempts} times: ${error}`)
      await this.queue.fail(job.id, this.id, error, retryAt)
      this.telemetry.jobFinished(kind, retryAt ? 'retried' : 'failed')
    }
    return claimed.length
  }
}

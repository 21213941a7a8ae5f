import { z } from 'zod'
import { parseWith } from '../errors.ts'

/**
 * The JobQueue port: durable background work (embedding, and later memory formation, summaries,
 * maintenance, index rebuilds) that survives a crash and runs at most once at a time per key.
 * Adapters store the jobs (SQLite through Prisma today); the retry arithmetic lives here so every
 * adapter backs off the same way.
 */

/** What a job is waiting for: due (pending), held by a worker's lease (running), or dead-lettered. */
export const JOB_STATES = ['pending', 'running', 'failed'] as const
export type JobState = (typeof JOB_STATES)[number]

export interface NewJob {
  kind: string
  agentId: string
  /**
   * Jobs of one key never run concurrently and run in the order they were queued; a job is not
   * queued twice while one of its key is still pending (the pending one does the work).
   */
  key: string
  payload?: Record<string, unknown>
  /** Not before this time (default: now). */
  runAfter?: Date
  /**
   * A debounce: when a job of the key is already pending, its runAfter moves to this job's (never
   * earlier) instead of the new job being dropped, so a burst of writes runs the key's job once,
   * after the last of them.
   */
  postpone?: boolean
  /**
   * The key names a row the same transaction has just created (a new message's embed job): no job
   * of it can be pending, so an adapter may insert it without reading the queue first. Only for
   * rows whose ids are never reused (AUTOINCREMENT, a sequence).
   */
  ofNewRow?: boolean
}

export interface Job {
  id: number
  kind: string
  agentId: string
  key: string
  payload: Record<string, unknown>
  state: JobState
  /** Runs started so far, including the one in progress. */
  attempts: number
  runAfter: Date
  leaseOwner: string | null
  leaseUntil: Date | null
  lastError: string | null
  createdAt: Date
}

export interface ClaimOptions {
  /** At most this many jobs (one per key). */
  limit: number
  /** The lease: past this many ms another worker may take the job again (its worker is presumed dead). */
  leaseMs: number
  /** Only this agent's jobs (a search embedding what it is about to search). */
  agentId?: string
}

/** Depth and lag of one kind of job. */
export interface JobQueueStats {
  kind: string
  pending: number
  running: number
  failed: number
  /** Age of the oldest pending job (0 when none): how far behind the workers are. */
  oldestPendingAgeMs: number
  /**
   * How long the longest-waiting due job has been due (0 when none): the backlog's lag without
   * the waits jobs ask for (a debounce, a retry's backoff), which oldestPendingAgeMs includes.
   */
  oldestDueAgeMs: number
}

export interface JobQueue {
  enqueue(jobs: readonly NewJob[]): Promise<number>
  /** Takes due jobs of a kind (and jobs whose lease expired) under a lease held by `workerId`. */
  claim(kind: string, workerId: string, options: ClaimOptions): Promise<Job[]>
  /** Done: the jobs are removed. Ignored for a job whose lease another worker has taken since. */
  complete(ids: readonly number[], workerId: string): Promise<void>
  /** Failed: retried at `retryAt`, or dead-lettered (state failed) when retryAt is null. */
  fail(id: number, workerId: string, error: string, retryAt: Date | null): Promise<void>
  stats(): Promise<JobQueueStats[]>
}

/** How a kind of job is run and retried. */
export const JobPolicySchema = z.object({
  /** Runs before a job is dead-lettered. */
  maxAttempts: z.number().int().min(1).max(100).default(5),
  /** Jobs a worker takes in one go (handed to the handler together). */
  batchSize: z.number().int().min(1).max(10_000).default(64),
  /** How long a worker holds a job before another may presume it dead and take it. */
  leaseMs: z
    .number()
    .int()
    .min(1_000)
    .max(86_400_000)
    .default(5 * 60_000),
  /** Delay before the first retry; doubled for each further one. */
  backoffBaseMs: z.number().int().min(1).max(86_400_000).default(5_000),
  /** Longest delay between two retries. */
  backoffMaxMs: z
    .number()
    .int()
    .min(1)
    .max(86_400_000)
    .default(10 * 60_000),
})
export type JobPolicy = z.infer<typeof JobPolicySchema>
export const DEFAULT_JOB_POLICY: JobPolicy = JobPolicySchema.parse({})

export function parseJobPolicy(input: Partial<JobPolicy> | undefined, field = 'jobPolicy'): JobPolicy {
  return parseWith(JobPolicySchema, input ?? {}, field)
}

/**
 * When a job that failed its `attempts`-th run is tried again, or null when it has had all of
 * them. Exponential (base, 2×base, 4×base, … up to backoffMaxMs) and without jitter: the delay
 * is on the engine's clock, so tests move time by exactly this much.
 */
export function nextRetryAt(policy: JobPolicy, attempts: number, now: Date): Date | null {
  if (attempts >= policy.maxAttempts) return null
  const exponent = Math.max(0, attempts - 1)
  // 2^exponent overflows to Infinity long before it matters; the cap keeps the date finite.
  const delay = Math.min(policy.backoffMaxMs, policy.backoffBaseMs * 2 ** Math.min(exponent, 52))
  return new Date(now.getTime() + delay)
}

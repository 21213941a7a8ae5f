import type { JobQueue as CoreJobQueue, JobQueueStats, JobState } from '@engram/core'

// The queue's contract and retry arithmetic live in core (every adapter backs off the same way);
// the engine adds what a worker needs to wake up without polling.
export type { ClaimOptions, Job, JobPolicy, JobQueueStats, JobState, NewJob } from '@engram/core'

/**
 * Durable background work with at most one runner per (agent, key): `claim` hands a job to one
 * worker's lease until it completes, fails or the lease expires.
 */
export interface JobQueue extends Omit<CoreJobQueue, 'stats'> {
  /**
   * Extends the lease of jobs `workerId` holds (running, its lease) to `leaseMs` from now, so a
   * batch that runs longer than one lease is not taken again by another worker (replica) while
   * its worker is alive. Returns how many it still held; jobs taken over since are left alone.
   */
  extend(ids: readonly number[], workerId: string, leaseMs: number): Promise<number>
  /** Called after jobs are queued in this process, so a worker wakes up instead of waiting for its poll. */
  onEnqueued(listener: () => void): () => void
  /** Whether the agent has a job of the kind that claim would hand out now (cheap: a search asks). */
  hasDue(kind: string, agentId: string): Promise<boolean>
  /** Depth and lag of every kind with jobs, and of the `kinds` named even when they have none. */
  stats(kinds?: readonly string[]): Promise<JobQueueStats[]>
  /**
   * Jobs of a kind counted by state and by one field of their payload (of an agent, or all): how
   * many embed jobs each kind of row has queued or dead-lettered, without reading the jobs.
   */
  /**
   * Removes the agent's jobs of these keys that no worker holds (pending or dead-lettered): the
   * work they stood for was deleted. Returns how many went.
   */
  cancel(agentId: string, keys: readonly string[]): Promise<number>
  countByPayload(
    kind: string,
    field: string,
    agentId: string | null,
  ): Promise<{ value: string; state: JobState; count: number }[]>
}

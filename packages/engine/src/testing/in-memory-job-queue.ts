import type { ClaimOptions, Clock, Job, JobQueueStats, JobState, NewJob } from '@engram/core'
import type { JobQueue } from '../ports/job-queue.ts'

/**
 * The JobQueue port in memory: the reference the SQLite queue is checked against. Same rules: one
 * pending job per (agent, key), only the oldest live job of a key can be claimed, a running job
 * whose lease expired may be claimed again, finished jobs are removed, dead letters stay.
 */
export class InMemoryJobQueue implements JobQueue {
  private readonly jobs = new Map<number, Job>()
  private readonly listeners = new Set<() => void>()
  private nextId = 1

  constructor(private readonly clock: Clock) {}

  onEnqueued(listener: () => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  async enqueue(jobs: readonly NewJob[]): Promise<number> {
    const now = this.clock.now()
    let added = 0
    for (const job of jobs) {
      const pending = [...this.jobs.values()].find(
        (j) => j.agentId === job.agentId && j.key === job.key && j.state === 'pending',
      )
      if (pending) {
        const runAfter = job.runAfter ?? now
        if (job.postpone && pending.runAfter < runAfter) pending.runAfter = runAfter
        continue
      }
      const id = this.nextId++
      this.jobs.set(id, {
        id,
        kind: job.kind,
        agentId: job.agentId,
        key: job.key,
        payload: { ...(job.payload ?? {}) },
        state: 'pending',
        attempts: 0,
        runAfter: job.runAfter ?? now,
        leaseOwner: null,
        leaseUntil: null,
        lastError: null,
        createdAt: now,
      })
      added++
    }
    if (added > 0) for (const listener of this.listeners) listener()
    return added
  }

  async claim(kind: string, workerId: string, options: ClaimOptions): Promise<Job[]> {
    const now = this.clock.now().getTime()
    const live = [...this.jobs.values()].filter((j) => j.state === 'pending' || j.state === 'running')
    const due = live
      .filter(
        (j) =>
          j.kind === kind &&
          (options.agentId === undefined || j.agentId === options.agentId) &&
          ((j.state === 'pending' && j.runAfter.getTime() <= now) ||
            (j.state === 'running' && (j.leaseUntil?.getTime() ?? 0) <= now)) &&
          !live.some((o) => o.agentId === j.agentId && o.key === j.key && o.id < j.id),
      )
      .sort((a, b) => a.runAfter.getTime() - b.runAfter.getTime() || a.id - b.id)
      .slice(0, options.limit)
    for (const job of due) {
      job.state = 'running'
      job.leaseOwner = workerId
      job.leaseUntil = new Date(now + options.leaseMs)
      job.attempts++
    }
    return due.map((job) => ({ ...job, payload: { ...job.payload } }))
  }

  async extend(ids: readonly number[], workerId: string, leaseMs: number): Promise<number> {
    const leaseUntil = new Date(this.clock.now().getTime() + leaseMs)
    let held = 0
    for (const id of ids) {
      const job = this.jobs.get(id)
      if (job?.state !== 'running' || job.leaseOwner !== workerId) continue
      job.leaseUntil = leaseUntil
      held++
    }
    return held
  }

  async complete(ids: readonly number[], workerId: string): Promise<void> {
    for (const id of ids) if (this.jobs.get(id)?.leaseOwner === workerId) this.jobs.delete(id)
  }

  async fail(id: number, workerId: string, error: string, retryAt: Date | null): Promise<void> {
    const job = this.jobs.get(id)
    if (!job || job.leaseOwner !== workerId || job.state !== 'running') return
    job.lastError = error
    job.leaseOwner = null
    job.leaseUntil = null
    if (retryAt) {
      job.state = 'pending'
      job.runAfter = retryAt
    } else job.state = 'failed'
  }

  async hasDue(kind: string, agentId: string): Promise<boolean> {
    const now = this.clock.now().getTime()
    return [...this.jobs.values()].some(
      (j) =>
        j.kind === kind &&
        j.agentId === agentId &&
        ((j.state === 'pending' && j.runAfter.getTime() <= now) ||
          (j.state === 'running' && (j.leaseUntil?.getTime() ?? 0) <= now)),
    )
  }

  async stats(kinds: readonly string[] = []): Promise<JobQueueStats[]> {
    const now = this.clock.now().getTime()
    const byKind = new Map<string, JobQueueStats>(
      kinds.map((kind) => [
        kind,
        { kind, pending: 0, running: 0, failed: 0, oldestPendingAgeMs: 0, oldestDueAgeMs: 0 },
      ]),
    )
    for (const job of this.jobs.values()) {
      const stats = byKind.get(job.kind) ?? {
        kind: job.kind,
        pending: 0,
        running: 0,
        failed: 0,
        oldestPendingAgeMs: 0,
        oldestDueAgeMs: 0,
      }
      stats[job.state]++
      if (job.state === 'pending') {
        stats.oldestPendingAgeMs = Math.max(stats.oldestPendingAgeMs, now - job.createdAt.getTime())
        stats.oldestDueAgeMs = Math.max(stats.oldestDueAgeMs, now - job.runAfter.getTime())
      }
      byKind.set(job.kind, stats)
    }
    return [...byKind.values()].sort((a, b) => a.kind.localeCompare(b.kind))
  }

  async cancel(agentId: string, keys: readonly string[]): Promise<number> {
    let removed = 0
    for (const [id, job] of this.jobs)
      if (job.agentId === agentId && keys.includes(job.key) && job.state !== 'running') {
        this.jobs.delete(id)
        removed++
      }
    return removed
  }

  async countByPayload(
    kind: string,
    field: string,
    agentId: string | null,
  ): Promise<{ value: string; state: JobState; count: number }[]> {
    const counts = new Map<string, { value: string; state: JobState; count: number }>()
    for (const job of this.jobs.values()) {
      if (job.kind !== kind || (agentId && job.agentId !== agentId)) continue
      const value = String((job.payload as Record<string, unknown> | null)?.[field] ?? null)
      const key = `${value}\u0000${job.state}`
      const entry = counts.get(key) ?? { value, state: job.state, count: 0 }
      entry.count++
      counts.set(key, entry)
    }
    return [...counts.values()]
  }
}

import type { Clock, LlmCircuitState, LlmProvider } from '@engram/core'
import type { EventBus } from '../ports/event-bus.ts'
import type { JobQueue } from '../ports/job-queue.ts'
import type { Logger } from '../ports/logger.ts'
import { PROFILE_JOB } from '../profile/profile-service.ts'
import { SUMMARY_JOB } from '../summaries/summary-service.ts'
import { EXTRACT_JOB } from './formation-jobs.ts'
import {
  FORMATION_WORK_KINDS,
  type FormationStats,
  type FormationWorkKind,
  type FormationWorkStats,
  type FormationWorkTracker,
} from './formation-stats.ts'

/** The job kind whose queue holds each kind of formation work. */
export const FORMATION_JOB_KINDS: Record<FormationWorkKind, string> = {
  extraction: EXTRACT_JOB,
  summary: SUMMARY_JOB,
  profile: PROFILE_JOB,
}

/** One unit of formation work as published on the bus (`formation:activity`). */
export interface FormationActivityEvent {
  agentId: string
  kind: FormationWorkKind
  outcome: 'success' | 'failure'
  /** Why it failed (cut to a bounded length); null when it succeeded. */
  reason: string | null
  durationMs: number
  at: Date
  /** The agent's jobs of this kind still waiting (pending) when the unit ended. */
  queueDepth: number
}

/** An agent's jobs of one kind of formation work, by state. */
export interface FormationQueueDepth {
  kind: FormationWorkKind
  jobKind: string
  pending: number
  running: number
  failed: number
}

/** What the activity panel shows for one agent (the `formationActivity` query). */
export interface FormationActivity {
  agentId: string
  /** Which extractor runs for new turns: the LLM when one is configured, else the offline one. */
  extractor: 'offline' | 'llm'
  /** The LLM adapter's circuit breaker; null without a model, or one without a breaker. */
  circuitState: LlmCircuitState | null
  work: FormationWorkStats[]
  queue: FormationQueueDepth[]
}

export interface FormationActivityDeps {
  stats: FormationStats
  clock: Clock
  events: EventBus
  queue: JobQueue
  log: Logger
  llm: LlmProvider | null
}

/**
 * Measures each unit of formation work on the engine's clock, counts it in the statistics and
 * announces it on the event bus, so an activity panel follows the work live.
 */
export class FormationActivityTracker implements FormationWorkTracker {
  constructor(private readonly deps: FormationActivityDeps) {}

  async track<T>(agentId: string, kind: FormationWorkKind, work: () => Promise<T>): Promise<T> {
    const started = this.deps.clock.now().getTime()
    try {
      const value = await work()
      this.finish(agentId, kind, started, null)
      return value
    } catch (error) {
      this.finish(agentId, kind, started, error instanceof Error ? error.message : String(error))
      throw error
    }
  }

  /** The agent's counters, queue and the model's circuit, read now. */
  async activity(agentId: string, extractor: 'offline' | 'llm'): Promise<FormationActivity> {
    return {
      agentId,
      extractor,
      circuitState: this.deps.llm?.circuitState ?? null,
      work: this.deps.stats.of(agentId),
      queue: await Promise.all(FORMATION_WORK_KINDS.map((kind) => this.queueDepth(agentId, kind))),
    }
  }

  private async queueDepth(agentId: string, kind: FormationWorkKind): Promise<FormationQueueDepth> {
    const jobKind = FORMATION_JOB_KINDS[kind]
    const depth: FormationQueueDepth = { kind, jobKind, pending: 0, running: 0, failed: 0 }
    // The queue's agent-scoped count, grouped by a payload field this view does not need: the
    // groups are summed back into one count per state.
    for (const row of await this.deps.queue.countByPayload(jobKind, 'trigger', agentId))
      if (row.state === 'pending' || row.state === 'running' || row.state === 'failed')
        depth[row.state] += row.count
    return depth
  }

  private finish(agentId: string, kind: FormationWorkKind, started: number, reason: string | null): void {
    const at = this.deps.clock.now()
    const durationMs = Math.max(0, at.getTime() - started)
    this.deps.stats.record(
      agentId,
      kind,
      reason === null ? { ok: true } : { ok: false, reason },
      durationMs,
      at,
    )
    const [counted] = this.deps.stats.of(agentId).filter((s) => s.kind === kind)
    // The event does not hold the work up: the queue's count is read after it, and a failure to
    // read it (storage closing) only costs the event.
    void this.queueDepth(agentId, kind).then(
      (depth) =>
        this.deps.events.publish('formation:activity', {
          agentId,
          kind,
          outcome: reason === null ? 'success' : 'failure',
          reason: reason === null ? null : (counted?.lastFailure?.reason ?? reason),
          durationMs,
          at,
          queueDepth: depth.pending,
        }),
      (error) => this.deps.log.warn(`[formation] activity event of ${agentId} not published: ${error}`),
    )
  }
}

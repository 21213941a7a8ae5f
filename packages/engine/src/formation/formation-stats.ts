/**
 * Processing statistics of memory formation (issue 13 §5, spec 003's "total calls, success rate,
 * average duration"): per agent and per kind of work, counters only, no I/O. They live in this
 * process's memory (a restart starts them at zero; replicas each count their own work), which is
 * what an activity panel needs; durable history is the job queue's dead letters.
 */

/** The units of formation work counted: an extractor call, a summary written, a profile version built. */
export const FORMATION_WORK_KINDS = ['extraction', 'summary', 'profile'] as const
export type FormationWorkKind = (typeof FORMATION_WORK_KINDS)[number]

/**
 * Agents whose counters are kept at once. Each costs a few hundred bytes; past the bound the agent
 * idle the longest is forgotten, so a server with many short-lived agents does not grow without end.
 */
export const DEFAULT_FORMATION_STATS_AGENTS = 1_000

/** A failure's reason is cut to this length: an error message may quote a model's whole answer. */
export const MAX_FAILURE_REASON_CHARS = 500

export interface FormationFailure {
  reason: string
  at: Date
}

export interface FormationWorkStats {
  kind: FormationWorkKind
  calls: number
  successes: number
  failures: number
  totalDurationMs: number
  /** totalDurationMs / calls; 0 before the first call. */
  averageDurationMs: number
  lastRunAt: Date | null
  lastFailure: FormationFailure | null
}

/** How one unit of work ended: done, or failed with why. */
export type FormationOutcome = { ok: true } | { ok: false; reason: string }

/** What the formation services need: run a unit of work and have it counted. */
export interface FormationWorkTracker {
  track<T>(agentId: string, kind: FormationWorkKind, work: () => Promise<T>): Promise<T>
}

/** Counts nothing: services built without statistics (their unit tests). */
export const untracked: FormationWorkTracker = { track: (_agentId, _kind, work) => work() }

// The services import the tracker from here, not from formation-activity.ts: that file names
// their job kinds, and a cycle between them would leave a constant undefined at load.

interface Counters {
  calls: number
  successes: number
  failures: number
  totalDurationMs: number
  lastRunAt: Date | null
  lastFailure: FormationFailure | null
}

export class FormationStats {
  /** Insertion order is recency: an agent's entry moves to the end whenever it records work. */
  private readonly agents = new Map<string, Map<FormationWorkKind, Counters>>()

  constructor(private readonly maxAgents = DEFAULT_FORMATION_STATS_AGENTS) {
    if (!Number.isInteger(maxAgents) || maxAgents < 1)
      throw new RangeError(`maxAgents must be a positive integer, got ${maxAgents}`)
  }

  /** One unit of work that ended at `at` after `durationMs` (negative durations count as 0: a clock moved back). */
  record(
    agentId: string,
    kind: FormationWorkKind,
    outcome: FormationOutcome,
    durationMs: number,
    at: Date,
  ): void {
    let byKind = this.agents.get(agentId)
    if (byKind) this.agents.delete(agentId)
    else byKind = new Map()
    this.agents.set(agentId, byKind)
    while (this.agents.size > this.maxAgents) {
      const oldest = this.agents.keys().next().value as string
      this.agents.delete(oldest)
    }
    const counters = byKind.get(kind) ?? {
      calls: 0,
      successes: 0,
      failures: 0,
      totalDurationMs: 0,
      lastRunAt: null,
      lastFailure: null,
    }
    counters.calls++
    counters.totalDurationMs += Number.isFinite(durationMs) ? Math.max(0, durationMs) : 0
    counters.lastRunAt = at
    if (outcome.ok) counters.successes++
    else {
      counters.failures++
      counters.lastFailure = { reason: outcome.reason.slice(0, MAX_FAILURE_REASON_CHARS), at }
    }
    byKind.set(kind, counters)
  }

  /** Every kind's counters for the agent (zeros for work it has not done, or an agent forgotten). */
  of(agentId: string): FormationWorkStats[] {
    const byKind = this.agents.get(agentId)
    return FORMATION_WORK_KINDS.map((kind) => {
      const c = byKind?.get(kind)
      if (!c)
        return {
          kind,
          calls: 0,
          successes: 0,
          failures: 0,
          totalDurationMs: 0,
          averageDurationMs: 0,
          lastRunAt: null,
          lastFailure: null,
        }
      return {
        kind,
        calls: c.calls,
        successes: c.successes,
        failures: c.failures,
        totalDurationMs: c.totalDurationMs,
        averageDurationMs: c.calls > 0 ? c.totalDurationMs / c.calls : 0,
        lastRunAt: c.lastRunAt,
        lastFailure: c.lastFailure ? { ...c.lastFailure } : null,
      }
    })
  }

  /** The agent was deleted or replaced (every agent when none is named): its counters go with it. */
  forget(agentId?: string): void {
    if (agentId === undefined) this.agents.clear()
    else this.agents.delete(agentId)
  }

  /** How many agents have counters now (the bound's test). */
  get agentCount(): number {
    return this.agents.size
  }
}

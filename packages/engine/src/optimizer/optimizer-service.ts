import { randomUUID } from 'node:crypto'
import os from 'node:os'
import {
  type Clock,
  DEFAULT_OPTIMIZER_CONFIG,
  EngramError,
  ERROR_CODES,
  efficiencyReport,
  IncrementalRedundancy,
  type KeyFactMode,
  type OptimizerParameters,
  OptimizerParametersSchema,
  parseWith,
  planKnowledgeDecay,
  type RedundancyFinder,
  runOptimizerStep,
  type TokenCounter,
  validationErrorFromZod,
} from '@engram/core'
import { z } from 'zod'
import type { AgentWrites } from '../agents/agent-writes.ts'
import { InProcessLease } from '../leases/in-process-lease.ts'
import type { MemoryService } from '../memory/memory-service.ts'
import type { ParameterStore } from '../parameters/parameter-store.ts'
import type { EventBus, SnapshotEvent } from '../ports/event-bus.ts'
import type { Lease } from '../ports/lease.ts'
import type { Logger } from '../ports/logger.ts'
import type { OptimizerRepository } from '../ports/optimizer.ts'
import { NO_TELEMETRY, type Telemetry } from '../ports/telemetry.ts'
import { repeat, schedulerOf, sleep } from '../scheduling/scheduler.ts'
import { type LoadedEntries, OptimizerEntries, OptimizerEntriesConfigSchema } from './optimizer-entries.ts'

export interface OptimizerServiceConfig {
  intervalMs: number
  snapshotHistoryLimit: number
  keyFactMode?: KeyFactMode
  /** How long an optimizer lease lasts unless renewed (ms): a dead replica's agents wait this long. */
  leaseTtlMs?: number
  /** How often held leases are renewed (ms); below the TTL, so a late renewal or two is survived. */
  leaseRenewMs?: number
  /**
   * Entries kept between runs over all agents (DEFAULT_OPTIMIZER_CACHED_ENTRIES), so a run reads
   * only the rows new or changed since the last; 0 reads every run's entries whole.
   */
  cachedEntries?: number
}

/**
 * 30 s: a replica killed without releasing hands its agents over within 30 s, a quarter of the
 * default interval (120 s), so at most the one cycle that was due is late; and a holder would have
 * to stall (GC, a blocked loop, a Redis blip) for 20 s beyond a renewal to lose its lease while alive.
 */
export const DEFAULT_OPTIMIZER_LEASE_TTL_MS = 30_000
/** 10 s: a third of the TTL, so two renewals in a row can fail before the lease lapses. */
export const DEFAULT_OPTIMIZER_LEASE_RENEW_MS = 10_000
/** How often a manual run waiting for another replica's run looks at the lease again (real time). */
export const LEASE_WAIT_POLL_MS = 50

export const OptimizerLeaseConfigSchema = z
  .object({
    leaseTtlMs: z.number().int().min(100).max(3_600_000).default(DEFAULT_OPTIMIZER_LEASE_TTL_MS),
    leaseRenewMs: z.number().int().min(10).max(3_600_000).default(DEFAULT_OPTIMIZER_LEASE_RENEW_MS),
  })
  .superRefine((config, ctx) => {
    if (config.leaseRenewMs >= config.leaseTtlMs)
      ctx.addIssue({
        code: 'too_big',
        origin: 'number',
        maximum: config.leaseTtlMs - 1,
        inclusive: true,
        path: ['leaseRenewMs'],
        message: `must be below leaseTtlMs (${config.leaseTtlMs}): a lease must be renewed before it lapses`,
      })
  })

/** The scheduler's claim on an agent: the replica holding it runs the agent's scheduled cycles. */
export const optimizerLeaseKey = (agentId: string) => `optimizer:${agentId}`
/** Held by whichever replica is running the agent's optimizer right now (scheduled or requested). */
export const optimizerRunLeaseKey = (agentId: string) => `optimizer-run:${agentId}`

/** The optimizer of an agent could not be run here: another replica is running it, or the lease was lost. */
export class OptimizerLeaseError extends EngramError {
  constructor(
    readonly agentId: string,
    message: string,
  ) {
    super(ERROR_CODES.CONFLICT, message)
  }
}

export interface OptimizerRunOptions {
  /**
   * Read every entry and compute every text's features, as runs did before they kept entries
   * (issue 18), leaving the kept entries as they are: the load benchmark times both paths in one
   * run. The answer is the same either way.
   */
  readWhole?: boolean
}

/** The snapshot history kept per agent (spec: the most recent 500). */
export const MAX_SNAPSHOT_HISTORY = DEFAULT_OPTIMIZER_CONFIG.snapshotHistoryLimit

/**
 * The adaptive optimizer: runs the pure core step for an agent, applies its actions and learned
 * parameters in one transaction, records and publishes the snapshot.
 */
export class OptimizerService {
  /** This replica, as lease holder (host and pid say which process holds an agent). */
  readonly holder = `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
  // One run per agent at a time in this process: a second request while one runs shares its
  // result. Null: a scheduled attempt that found another replica running the agent.
  private readonly running = new Map<string, Promise<SnapshotEvent | null>>()
  /** Cancel the schedule's cycle and lease renewal timers (null while not started). */
  private timer: (() => void) | null = null
  private renewal: (() => void) | null = null
  /** Per agent (and session), the redundancy join kept since the last run. */
  private readonly redundancy = new Map<string, IncrementalRedundancy>()
  /** The load of entries each join last saw (see LoadedEntries.textUnchangedSince). */
  private readonly joinSaw = new WeakMap<IncrementalRedundancy, number>()
  /** Per agent (and session), the entries and their text's features kept since the last run. */
  private readonly entries: OptimizerEntries
  private cycle: Promise<void> | null = null
  /** Lease keys this replica holds, with when each was last taken or renewed (clock ms). */
  private readonly held = new Map<string, number>()
  private readonly leaseTtlMs: number
  private readonly leaseRenewMs: number
  /** Where each run's tokens saved are reported (issue 17's metrics); nowhere until wired. */
  private telemetry: Telemetry = NO_TELEMETRY

  constructor(
    private readonly store: OptimizerRepository,
    private readonly clock: Clock,
    private readonly tokenCounter: TokenCounter,
    private readonly parameters: ParameterStore,
    private readonly memory: MemoryService,
    private readonly events: EventBus,
    private readonly config: OptimizerServiceConfig,
    private readonly log: Logger = console,
    private readonly writes?: AgentWrites,
    /** Who runs which agent when replicas share a database; alone, every lease is granted. */
    private readonly lease: Lease = new InProcessLease(clock),
  ) {
    const leases = parseWith(
      OptimizerLeaseConfigSchema,
      { leaseTtlMs: config.leaseTtlMs, leaseRenewMs: config.leaseRenewMs },
      'optimizer',
    )
    this.leaseTtlMs = leases.leaseTtlMs
    this.leaseRenewMs = leases.leaseRenewMs
    const { cachedEntries } = parseWith(
      OptimizerEntriesConfigSchema,
      { cachedEntries: config.cachedEntries },
      'optimizer',
    )
    this.entries = new OptimizerEntries(store, cachedEntries)
  }

  /**
   * Runs the agent's optimizer now (the runOptimizer mutation). While another replica runs the
   * same agent, this waits for that run to end (up to one lease TTL, polling the lease), then
   * runs: two runs of an agent never overlap, and the caller always gets a run that started after
   * its request. Past the wait it fails with OptimizerLeaseError (CONFLICT). With the lease store
   * unreachable it runs without a lease (degraded; see takeRunLease).
   */
  async run(
    scope: string,
    sessionId: string | null = null,
    options: OptimizerRunOptions = {},
  ): Promise<SnapshotEvent> {
    for (;;) {
      const inFlight = this.running.get(scope)
      if (!inFlight) break
      const shared = await inFlight
      if (shared) return shared
    }
    return (await this.begin(scope, sessionId, 'wait', options)) as SnapshotEvent
  }

  /** Lease keys this replica holds now: its agents, and the runs going on here. */
  heldLeases(): string[] {
    return [...this.held.keys()]
  }

  /**
   * Renews every held lease whose last renewal is leaseRenewMs old by the engine's clock (the
   * started schedule calls it on a timer; tests move the clock and call it). A lease found lost
   * is dropped: another replica has the agent now.
   */
  async renewLeases(): Promise<void> {
    const now = this.clock.now().getTime()
    await Promise.all(
      [...this.held].map(async ([key, renewedAt]) => {
        if (now - renewedAt < this.leaseRenewMs) return
        try {
          if (await this.lease.renew(key, this.holder, this.leaseTtlMs)) {
            if (this.held.has(key)) this.held.set(key, now)
          } else {
            this.held.delete(key)
            this.log.warn(`[optimizer] lease ${key} was lost: another replica holds it now`)
          }
        } catch (error) {
          // Unreachable lease store: kept, tried again next time; it lapses by itself if this lasts.
          this.log.warn(`[optimizer] could not renew lease ${key}:`, error)
        }
      }),
    )
  }

  /** Starts a run under the agent's run lease, registered before any await so callers share it. */
  private begin(
    scope: string,
    sessionId: string | null,
    mode: 'wait' | 'skip',
    options: OptimizerRunOptions = {},
  ): Promise<SnapshotEvent | null> {
    const run = this.underRunLease(scope, mode, (confirm) =>
      this.execute(scope, sessionId, confirm, options),
    ).finally(() => this.running.delete(scope))
    this.running.set(scope, run)
    return run
  }

  private async underRunLease(
    scope: string,
    mode: 'wait' | 'skip',
    work: (confirm: () => Promise<void>) => Promise<SnapshotEvent>,
  ): Promise<SnapshotEvent | null> {
    const key = optimizerRunLeaseKey(scope)
    const taken = await this.takeRunLease(scope, key, mode)
    if (taken === 'busy') return null
    if (taken === 'unavailable') return work(async () => {})
    this.held.set(key, this.clock.now().getTime())
    try {
      return await work(async () => {
        // Checked (and extended) right before the run is applied: a replica that stalled past
        // its TTL while another took the agent over applies nothing. A scheduled run also checks
        // that the agent is still this replica's: had its claim lapsed meanwhile, the new
        // holder's next cycle could otherwise follow this run at once.
        const keys = mode === 'skip' ? [key, optimizerLeaseKey(scope)] : [key]
        let kept = false
        try {
          kept = (
            await Promise.all(keys.map((each) => this.lease.renew(each, this.holder, this.leaseTtlMs)))
          ).every(Boolean)
        } catch (error) {
          throw new OptimizerLeaseError(
            scope,
            `The optimizer lease of agent ${scope} could not be confirmed (${messageOf(error)}); nothing was applied, try again.`,
          )
        }
        if (!kept)
          throw new OptimizerLeaseError(
            scope,
            `The optimizer lease of agent ${scope} was lost before its run was applied (another replica took it over); nothing was applied.`,
          )
        for (const each of keys) if (this.held.has(each)) this.held.set(each, this.clock.now().getTime())
      })
    } finally {
      this.held.delete(key)
      await this.lease.release(key, this.holder).catch((error) => {
        this.log.warn(`[optimizer] could not release lease ${key} (it lapses after its TTL):`, error)
      })
    }
  }

  /**
   * The run lease: at once, or (a requested run) after another replica's run of the agent ends.
   * A requested run while the lease store is unreachable runs without one ('unavailable'): the API
   * keeps serving in that degraded state, and the schedules, which cannot take leases either, run
   * nothing meanwhile, so only another request at the same moment could overlap it.
   */
  private async takeRunLease(
    scope: string,
    key: string,
    mode: 'wait' | 'skip',
  ): Promise<'taken' | 'busy' | 'unavailable'> {
    const deadline = this.clock.now().getTime() + this.leaseTtlMs
    for (;;) {
      let granted: boolean
      try {
        granted = await this.lease.acquire(key, this.holder, this.leaseTtlMs)
      } catch (error) {
        if (mode === 'skip') throw error
        this.log.warn(
          `[optimizer] leases unavailable (${messageOf(error)}): the requested run of agent ${scope} goes on without one`,
        )
        return 'unavailable'
      }
      if (granted) return 'taken'
      if (mode === 'skip') return 'busy'
      if (this.clock.now().getTime() >= deadline)
        throw new OptimizerLeaseError(
          scope,
          `The optimizer of agent ${scope} is running on another replica and did not finish within ${this.leaseTtlMs} ms; try again.`,
        )
      // On the clock's scheduler, like the deadline: a test moves one clock through the wait.
      await sleep(schedulerOf(this.clock), LEASE_WAIT_POLL_MS)
    }
  }

  /** Takes or keeps the agent for this replica's schedule; false when another replica has it. */
  private async own(agentId: string): Promise<boolean> {
    const key = optimizerLeaseKey(agentId)
    const granted = await this.lease.acquire(key, this.holder, this.leaseTtlMs)
    if (granted) this.held.set(key, this.clock.now().getTime())
    else this.held.delete(key)
    return granted
  }

  /** The schedule's run of an agent it holds: shares a run already going here, skips one going elsewhere. */
  private async scheduledRun(agentId: string): Promise<void> {
    const inFlight = this.running.get(agentId)
    if (inFlight) {
      await inFlight
      return
    }
    await this.begin(agentId, null, 'skip')
  }

  /** Lets leases go (agents with nothing left, or all at stop) so others need not wait for the TTL. */
  private async releaseOwned(keep: (agentId: string) => boolean): Promise<void> {
    const prefix = optimizerLeaseKey('')
    const released = [...this.held.keys()].filter(
      (key) => key.startsWith(prefix) && !keep(key.slice(prefix.length)),
    )
    for (const key of released) this.held.delete(key)
    await Promise.all(
      released.map((key) =>
        this.lease.release(key, this.holder).catch((error) => {
          this.log.warn(`[optimizer] could not release lease ${key} (it lapses after its TTL):`, error)
        }),
      ),
    )
  }

  /** Drops the redundancy joins and entries kept for an agent (or every agent): its entries are gone. */
  forget(agentId?: string): void {
    for (const key of this.redundancy.keys())
      if (agentId === undefined || key.startsWith(`${agentId}\u0000`)) this.redundancy.delete(key)
    this.entries.forget(agentId)
  }

  /** Entries kept for an agent between runs (each with its text). */
  cachedEntries(agentId: string): number {
    return this.entries.keptFor(agentId)
  }

  /** Rows the last run read with their text (all of them without the kept entries). */
  lastRowsRead(): number {
    return this.entries.lastRead
  }

  /** Redundancy joins kept for an agent (each holds the text of its entries). */
  cachedJoins(agentId: string): number {
    return [...this.redundancy.keys()].filter((key) => key.startsWith(`${agentId}\u0000`)).length
  }

  /**
   * The all-pairs redundancy join was most of a run's cost at 100K entries. Kept between runs, it
   * compares only the entries new or changed since the last run with the others, and answers
   * exactly as the full join. Scores, which depend on the time, are computed every run.
   */
  private reusingRedundancy(key: string, loaded: LoadedEntries | null): RedundancyFinder {
    return (entries, threshold) => {
      // An agent with nothing left (deleted, cleared) holds no join.
      if (entries.length === 0) {
        this.redundancy.delete(key)
        return []
      }
      let join = this.redundancy.get(key)
      if (!join || join.threshold !== threshold) {
        join = new IncrementalRedundancy(threshold)
        this.redundancy.set(key, join)
      }
      const found = join.update(entries, loaded?.textUnchangedSince(this.joinSaw.get(join)))
      if (loaded) this.joinSaw.set(join, loaded.generation)
      else this.joinSaw.delete(join)
      return found
    }
  }

  /**
   * One scheduled cycle: every agent that has memory entries and whose lease this replica holds
   * or can take, one after another. Agents another replica holds are skipped: each agent has one
   * scheduler, kept from cycle to cycle by renewing its lease, and taken over by another replica
   * only once that lease lapses (its holder died or stalled).
   */
  async runAll(): Promise<void> {
    const agents = await this.store.agentsWithEntries()
    for (const agentId of agents) {
      let owned: boolean
      try {
        owned = await this.own(agentId)
      } catch (error) {
        // The lease store is unreachable: running anyway could duplicate another replica's
        // runs, so the cycle stops here (once, not once per agent) and the next one tries again.
        this.log.warn(`[optimizer] leases unavailable, cycle skipped: ${messageOf(error)}`)
        return
      }
      if (!owned) continue
      try {
        await this.scheduledRun(agentId)
      } catch (error) {
        // A failing agent is logged and skipped: the schedule and the other agents go on.
        this.log.error(`[optimizer] run for agent ${agentId} failed:`, error)
      }
    }
    const listed = new Set(agents)
    await this.releaseOwned((agentId) => listed.has(agentId))
  }

  start(): void {
    if (this.timer || this.config.intervalMs <= 0) return
    // On the clock's scheduler, whose real timers are unref'd: a scheduled optimizer never keeps
    // a process alive on its own.
    const scheduler = schedulerOf(this.clock)
    this.timer = repeat(scheduler, this.config.intervalMs, () => {
      if (this.cycle) return // the previous cycle is still going: skip rather than pile up
      this.cycle = this.runAll()
        .catch((error) => this.log.error('[optimizer] cycle failed:', error))
        .finally(() => {
          this.cycle = null
        })
    })
    // Renewals run beside the cycles (a long run must not let its leases lapse); whether a lease
    // is due is read on the engine's clock.
    this.renewal = repeat(scheduler, this.leaseRenewMs, () => {
      this.renewLeases().catch((error) => this.log.warn('[optimizer] lease renewal failed:', error))
    })
  }

  /** Stops the schedule, lets runs in flight end, and releases this replica's agents for the others. */
  async stop(): Promise<void> {
    this.timer?.()
    this.timer = null
    this.renewal?.()
    this.renewal = null
    await this.cycle
    await Promise.allSettled([...this.running.values()])
    await this.releaseOwned(() => false)
  }

  async status(scope: string) {
    const [totals, parameters] = await Promise.all([
      this.parameters.totals(scope),
      this.parameters.load(scope),
    ])
    const lastRunAt = await this.store.lastRunAt(scope)
    return {
      ...efficiencyReport(totals, parameters),
      lastRunAt,
      intervalMs: this.config.intervalMs,
    }
  }

  /** Reports the tokens each run saves to the metrics. */
  reportTo(telemetry: Telemetry): void {
    this.telemetry = telemetry
  }

  /** The newest `last` snapshots of one agent (or of all, for null), oldest first. */
  snapshots(scope: string | null, last: number): Promise<SnapshotEvent[]> {
    return this.store.snapshots(scope, last)
  }

  async setParameters(scope: string, changes: Partial<OptimizerParameters>): Promise<OptimizerParameters> {
    const current = await this.parameters.load(scope)
    const merged = Object.fromEntries(
      Object.entries({ ...current, ...changes }).filter(([, value]) => value !== undefined && value !== null),
    )
    const parsed = OptimizerParametersSchema.safeParse(merged)
    if (!parsed.success) throw validationErrorFromZod(parsed.error, 'parameters')
    await this.parameters.save(scope, parsed.data)
    return parsed.data
  }

  private async execute(
    scope: string,
    sessionId: string | null,
    confirmLease: () => Promise<void>,
    options: OptimizerRunOptions,
  ): Promise<SnapshotEvent> {
    const now = this.clock.now()
    const loaded = options.readWhole ? null : await this.entries.load(scope, sessionId)
    const entries = loaded ? loaded.entries : await this.store.entries(scope, sessionId)
    const parameters = await this.parameters.load(scope)
    const step = runOptimizerStep({
      entries,
      parameters,
      now,
      tokenCounter: this.tokenCounter,
      findRedundant: this.reusingRedundancy(`${scope}\u0000${sessionId ?? ''}`, loaded),
      ...(options.readWhole ? {} : { contentFeatures: this.entries.features(scope, sessionId) }),
      keyFactMode: this.config.keyFactMode ?? 'spec',
    })
    const decay = planKnowledgeDecay(await this.store.decayCandidates(scope), now)

    const ids = (kind: 'drop' | 'promote') =>
      step.actions.filter((a) => a.action === kind).map((a) => a.entryId)
    await confirmLease()
    const event = await this.store.applyRun(
      scope,
      {
        drops: ids('drop'),
        promotions: ids('promote'),
        compressions: step.actions.flatMap((a) =>
          a.action === 'compress'
            ? [{ entryId: a.entryId, content: a.content, tokenCount: a.tokenCount }]
            : [],
        ),
        decayed: decay.decayed.map((item) => ({ id: item.id, confidence: item.confidence })),
        decayedAt: now,
        pruned: decay.pruned,
        snapshot: step.snapshot,
        snapshotHistoryLimit: this.config.snapshotHistoryLimit,
      },
      async (repositories) => {
        await this.parameters.save(scope, step.parameters, repositories.parameters)
        await this.parameters.addRun(
          scope,
          step.snapshot.tokensBefore - step.snapshot.tokensAfter,
          repositories.parameters,
        )
      },
    )

    this.telemetry.tokensSaved(step.snapshot.tokensBefore - step.snapshot.tokensAfter)
    if (step.actions.some((action) => action.action === 'drop')) this.memory.invalidate(scope)
    this.writes?.touch(scope)
    this.events.publish('optimizer:snapshot', event)
    return event
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

import {
  type Clock,
  DEFAULT_OPTIMIZER_CONFIG,
  efficiencyReport,
  IncrementalRedundancy,
  type KeyFactMode,
  type OptimizerParameters,
  OptimizerParametersSchema,
  planKnowledgeDecay,
  type RedundancyFinder,
  runOptimizerStep,
  type TokenCounter,
  validationErrorFromZod,
} from '@engram/core'
import type { AgentWrites } from '../agents/agent-writes.ts'
import type { MemoryService } from '../memory/memory-service.ts'
import type { ParameterStore } from '../parameters/parameter-store.ts'
import type { EventBus, SnapshotEvent } from '../ports/event-bus.ts'
import type { Logger } from '../ports/logger.ts'
import type { OptimizerRepository } from '../ports/optimizer.ts'

export interface OptimizerServiceConfig {
  intervalMs: number
  snapshotHistoryLimit: number
  keyFactMode?: KeyFactMode
}

/** The snapshot history kept per agent (spec: the most recent 500). */
export const MAX_SNAPSHOT_HISTORY = DEFAULT_OPTIMIZER_CONFIG.snapshotHistoryLimit

/**
 * The adaptive optimizer: runs the pure core step for an agent, applies its actions and learned
 * parameters in one transaction, records and publishes the snapshot.
 */
export class OptimizerService {
  // One run per scope at a time: a second request while one runs shares its result.
  private readonly running = new Map<string, Promise<SnapshotEvent>>()
  private timer: ReturnType<typeof setInterval> | null = null
  /** Per agent (and session), the redundancy join kept since the last run. */
  private readonly redundancy = new Map<string, IncrementalRedundancy>()
  private cycle: Promise<void> | null = null

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
  ) {}

  run(scope: string, sessionId: string | null = null): Promise<SnapshotEvent> {
    const key = `${scope}\u0000${sessionId ?? ''}`
    const inFlight = this.running.get(scope) ?? this.running.get(key)
    if (inFlight) return inFlight
    const run = this.execute(scope, sessionId).finally(() => this.running.delete(scope))
    this.running.set(scope, run)
    return run
  }

  /** Drops the redundancy joins kept for an agent (or every agent): its entries are gone. */
  forget(agentId?: string): void {
    for (const key of this.redundancy.keys())
      if (agentId === undefined || key.startsWith(`${agentId}\u0000`)) this.redundancy.delete(key)
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
  private reusingRedundancy(key: string): RedundancyFinder {
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
      return join.update(entries)
    }
  }

  /** One scheduled cycle: every agent that has memory entries, one after another. */
  async runAll(): Promise<void> {
    const agents = await this.store.agentsWithEntries()
    for (const agentId of agents) {
      try {
        await this.run(agentId)
      } catch (error) {
        // A failing agent is logged and skipped: the schedule and the other agents go on.
        this.log.error(`[optimizer] run for agent ${agentId} failed:`, error)
      }
    }
  }

  start(): void {
    if (this.timer || this.config.intervalMs <= 0) return
    this.timer = setInterval(() => {
      if (this.cycle) return // the previous cycle is still going: skip rather than pile up
      this.cycle = this.runAll()
        .catch((error) => this.log.error('[optimizer] cycle failed:', error))
        .finally(() => {
          this.cycle = null
        })
    }, this.config.intervalMs)
    // A scheduled optimizer never keeps a process alive on its own.
    if (typeof this.timer === 'object' && 'unref' in this.timer) this.timer.unref()
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    this.timer = null
    await this.cycle
    await Promise.allSettled([...this.running.values()])
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

  private async execute(scope: string, sessionId: string | null): Promise<SnapshotEvent> {
    const now = this.clock.now()
    const entries = await this.store.entries(scope, sessionId)
    const parameters = await this.parameters.load(scope)
    const step = runOptimizerStep({
      entries,
      parameters,
      now,
      tokenCounter: this.tokenCounter,
      findRedundant: this.reusingRedundancy(`${scope}\u0000${sessionId ?? ''}`),
      keyFactMode: this.config.keyFactMode ?? 'spec',
    })
    const decay = planKnowledgeDecay(await this.store.decayCandidates(scope), now)

    const ids = (kind: 'drop' | 'promote') =>
      step.actions.filter((a) => a.action === kind).map((a) => a.entryId)
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

    if (step.actions.some((action) => action.action === 'drop')) this.memory.invalidate(scope)
    this.writes?.touch(scope)
    this.events.publish('optimizer:snapshot', event)
    return event
  }
}

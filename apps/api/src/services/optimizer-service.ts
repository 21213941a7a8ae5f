import {
  type Clock,
  DEFAULT_OPTIMIZER_CONFIG,
  efficiencyReport,
  type OptimizationSnapshot,
  type OptimizerParameters,
  OptimizerParametersSchema,
  planKnowledgeDecay,
  runOptimizerStep,
  type TokenCounter,
  validationErrorFromZod,
} from '@engram/core'
import type { Database } from '../db/client.ts'
import type { OptimizationSnapshot as OptimizationSnapshotRow } from '../generated/prisma/client.ts'
import type { EngramPubSub, SnapshotEvent } from '../pubsub.ts'
import type { AgentWrites } from './agent-writes.ts'
import { toEntry } from './mappers.ts'
import type { MemoryService } from './memory-service.ts'
import type { ParameterStore } from './parameter-store.ts'

export interface OptimizerServiceConfig {
  intervalMs: number
  snapshotHistoryLimit: number
}

export type Logger = Pick<Console, 'info' | 'warn' | 'error'>

/**
 * The adaptive optimizer in the server: runs the pure core step for an agent, applies its actions
 * and learned parameters in one transaction, records and publishes the snapshot.
 */
export class OptimizerService {
  // One run per scope at a time: a second request while one runs shares its result.
  private readonly running = new Map<string, Promise<SnapshotEvent>>()
  private timer: NodeJS.Timeout | null = null
  private cycle: Promise<void> | null = null

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly tokenCounter: TokenCounter,
    private readonly parameters: ParameterStore,
    private readonly memory: MemoryService,
    private readonly pubsub: EngramPubSub,
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

  /** One scheduled cycle: every agent that has memory entries, one after another. */
  async runAll(): Promise<void> {
    const agents = await this.db.memoryEntry.findMany({ distinct: ['agentId'], select: { agentId: true } })
    for (const { agentId } of agents) {
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
    this.timer.unref()
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
    const lastRow = await this.db.optimizationSnapshot.findFirst({
      where: { agentId: scope },
      orderBy: [{ timestamp: 'desc' }, { id: 'desc' }],
    })
    return {
      ...efficiencyReport(totals, parameters),
      lastRunAt: lastRow?.timestamp ?? null,
      intervalMs: this.config.intervalMs,
    }
  }

  /** The newest `last` snapshots of one agent (or of all, for null), oldest first. */
  async snapshots(scope: string | null, last: number): Promise<SnapshotEvent[]> {
    const rows = await this.db.optimizationSnapshot.findMany({
      where: scope ? { agentId: scope } : {},
      orderBy: [{ timestamp: 'desc' }, { id: 'desc' }],
      take: last,
    })
    return rows.reverse().map(toSnapshotEvent)
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
    const rows = await this.db.memoryEntry.findMany({
      where: { agentId: scope, ...(sessionId ? { sessionId } : {}) },
      orderBy: [{ timestamp: 'asc' }, { id: 'asc' }],
    })
    const parameters = await this.parameters.load(scope)
    const step = runOptimizerStep({
      entries: rows.map(toEntry),
      parameters,
      now,
      tokenCounter: this.tokenCounter,
    })
    const knowledge = await this.db.knowledge.findMany({
      where: { agentId: scope },
      select: { id: true, confidence: true, lastUsedAt: true, lastDecayAt: true, createdAt: true },
    })
    const decay = planKnowledgeDecay(
      knowledge.map((item) => ({ ...item, id: String(item.id) })),
      now,
    )

    const stored = await this.db.$transaction(async (tx) => {
      for (const action of step.actions) {
        const where = { id: Number(action.entryId), agentId: scope }
        if (action.action === 'compress') {
          await tx.memoryEntry.updateMany({
            where,
            data: { content: action.content, tokenCount: action.tokenCount, isCompressed: true },
          })
        } else if (action.action === 'drop') {
          await tx.memoryEntry.deleteMany({ where })
        } else {
          await tx.memoryEntry.updateMany({ where, data: { type: action.type, relevance: action.relevance } })
        }
      }
      for (const item of decay.decayed) {
        await tx.knowledge.updateMany({
          where: { id: Number(item.id), agentId: scope },
          data: { confidence: item.confidence, lastDecayAt: now },
        })
      }
      if (decay.pruned.length > 0) {
        await tx.knowledge.deleteMany({ where: { agentId: scope, id: { in: decay.pruned.map(Number) } } })
      }
      await this.parameters.save(scope, step.parameters, tx)
      await this.parameters.addRun(scope, step.snapshot.tokensBefore - step.snapshot.tokensAfter, tx)
      const row = await tx.optimizationSnapshot.create({ data: { agentId: scope, ...step.snapshot } })
      const keep = await tx.optimizationSnapshot.findMany({
        where: { agentId: scope },
        orderBy: [{ timestamp: 'desc' }, { id: 'desc' }],
        skip: this.config.snapshotHistoryLimit,
        select: { id: true },
      })
      if (keep.length > 0) {
        await tx.optimizationSnapshot.deleteMany({ where: { id: { in: keep.map((r) => r.id) } } })
      }
      return row
    })

    if (step.actions.some((action) => action.action === 'drop')) this.memory.invalidate(scope)
    const event = toSnapshotEvent(stored)
    this.writes?.touch(scope)
    this.pubsub.publish('optimizer:snapshot', event)
    return event
  }
}

function toSnapshotEvent(row: OptimizationSnapshotRow): SnapshotEvent {
  const { id, agentId, ...snapshot } = row
  return { id: String(id), agentId, snapshot: snapshot satisfies OptimizationSnapshot }
}

/** The snapshot history kept per agent (spec: the most recent 500). */
export const MAX_SNAPSHOT_HISTORY = DEFAULT_OPTIMIZER_CONFIG.snapshotHistoryLimit

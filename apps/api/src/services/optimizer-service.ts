import {
  type Clock,
  DEFAULT_OPTIMIZER_CONFIG,
  efficiencyReport,
  IncrementalRedundancy,
  type KeyFactMode,
  type MemoryEntry,
  type OptimizationSnapshot,
  type OptimizerExplanation,
  type OptimizerParameters,
  OptimizerParametersSchema,
  planKnowledgeDecay,
  type RedundancyFinder,
  runOptimizerStep,
  type TokenCounter,
  validationErrorFromZod,
} from '@engram/core'
import type { AgentWrites, MemoryService, ParameterStore } from '@engram/engine'
import type { OptimizationSnapshot as OptimizationSnapshotRow } from '@engram/store-sqlite'
import { type Database, directSqlite, parametersIn, sqliteDate, toEntry } from '@engram/store-sqlite'
import type { EngramPubSub, SnapshotEvent } from '../pubsub.ts'

interface RawEntryRow {
  id: number
  type: string
  role: string
  content: string
  tokenCount: number
  relevance: number
  isCompressed: number
  timestamp: string
  sessionId: string | null
}

export interface OptimizerServiceConfig {
  intervalMs: number
  snapshotHistoryLimit: number
  keyFactMode?: KeyFactMode
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
  /** Per agent (and session), the redundancy join kept since the last run. */
  private readonly redundancy = new Map<string, IncrementalRedundancy>()
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

  /**
   * The agent's entries, oldest first, with what the optimizer reads. At 100K entries Prisma's row
   * mapping costs more than the query: a prepared statement on the direct connection when there
   * is one, selecting only those columns.
   */
  private async loadEntries(scope: string, sessionId: string | null): Promise<MemoryEntry[]> {
    const direct = directSqlite(this.db)
    if (!direct) {
      const rows = await this.db.memoryEntry.findMany({
        where: { agentId: scope, ...(sessionId ? { sessionId } : {}) },
        orderBy: [{ timestamp: 'asc' }, { id: 'asc' }],
      })
      return rows.map(toEntry)
    }
    const columns = `"id", "type", "role", "content", "tokenCount", "relevance", "isCompressed", "timestamp", "sessionId"`
    const rows = sessionId
      ? await direct.all<RawEntryRow>(
          `SELECT ${columns} FROM "MemoryEntry" WHERE "agentId" = ? AND "sessionId" = ? ORDER BY "timestamp", "id"`,
          scope,
          sessionId,
        )
      : await direct.all<RawEntryRow>(
          `SELECT ${columns} FROM "MemoryEntry" WHERE "agentId" = ? ORDER BY "timestamp", "id"`,
          scope,
        )
    return rows.map((row) => ({
      id: String(row.id),
      type: row.type as MemoryEntry['type'],
      role: row.role as MemoryEntry['role'],
      content: row.content,
      tokenCount: row.tokenCount,
      relevance: row.relevance,
      isCompressed: row.isCompressed === 1,
      timestamp: new Date(row.timestamp),
      sessionId: row.sessionId,
    }))
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
    const entries = await this.loadEntries(scope, sessionId)
    const parameters = await this.parameters.load(scope)
    const step = runOptimizerStep({
      entries,
      parameters,
      now,
      tokenCounter: this.tokenCounter,
      findRedundant: this.reusingRedundancy(`${scope}\u0000${sessionId ?? ''}`),
      keyFactMode: this.config.keyFactMode ?? 'spec',
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
      // Drops and promotions as one statement per chunk of ids; compressions carry their own text.
      const ids = (kind: 'drop' | 'promote') =>
        step.actions.filter((a) => a.action === kind).map((a) => Number(a.entryId))
      for (const chunk of chunks(ids('drop'))) {
        await tx.memoryEntry.deleteMany({ where: { agentId: scope, id: { in: chunk } } })
      }
      for (const chunk of chunks(ids('promote'))) {
        await tx.memoryEntry.updateMany({
          where: { agentId: scope, id: { in: chunk } },
          data: { type: 'long_term', relevance: 1 },
        })
      }
      // Compressions carry their own text: one UPDATE ... FROM (VALUES ...) per chunk of them.
      const compressions = step.actions.flatMap((a) => (a.action === 'compress' ? [a] : []))
      const updatedAt = sqliteDate(new Date()) // as Prisma's @updatedAt: the wall clock
      for (const chunk of chunks(compressions, COMPRESS_CHUNK)) {
        await tx.$executeRawUnsafe(
          `UPDATE "MemoryEntry" SET "content" = v.column2, "tokenCount" = v.column3, "isCompressed" = 1, "updatedAt" = ?
             FROM (VALUES ${chunk.map(() => '(?, ?, ?)').join(', ')}) AS v
            WHERE "MemoryEntry"."id" = v.column1 AND "MemoryEntry"."agentId" = ?`,
          updatedAt,
          ...chunk.flatMap((a) => [Number(a.entryId), a.content, a.tokenCount]),
          scope,
        )
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
      await this.parameters.save(scope, step.parameters, parametersIn(tx))
      await this.parameters.addRun(
        scope,
        step.snapshot.tokensBefore - step.snapshot.tokensAfter,
        parametersIn(tx),
      )
      const row = await tx.optimizationSnapshot.create({
        data: {
          agentId: scope,
          ...step.snapshot,
          explanation: step.snapshot.explanation ? JSON.stringify(step.snapshot.explanation) : null,
        },
      })
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

const CHUNK = 500

/** Compressions per statement: three bound values each, well under SQLite's limit. */
const COMPRESS_CHUNK = 200

function chunks<T>(items: T[], size = CHUNK): T[][] {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

function toSnapshotEvent(row: OptimizationSnapshotRow): SnapshotEvent {
  const { id, agentId, explanation, ...rest } = row
  const snapshot: OptimizationSnapshot = { ...rest, explanation: parseExplanation(explanation) }
  return { id: String(id), agentId, snapshot }
}

/** The stored explanation; a row written before explanations (or unreadable) has none. */
function parseExplanation(json: string | null): OptimizerExplanation | null {
  if (!json) return null
  try {
    return JSON.parse(json) as OptimizerExplanation
  } catch {
    return null
  }
}

/** The snapshot history kept per agent (spec: the most recent 500). */
export const MAX_SNAPSHOT_HISTORY = DEFAULT_OPTIMIZER_CONFIG.snapshotHistoryLimit

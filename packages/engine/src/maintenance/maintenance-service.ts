import { randomUUID } from 'node:crypto'
import os from 'node:os'
import {
  type AgentMaintenanceSettings,
  AgentMaintenanceSettingsSchema,
  type Clock,
  ConflictError,
  dueMaintenanceSlot,
  effectiveRetentionDays,
  type MaintenanceRules,
  nextMaintenanceRun,
  parseWith,
  retentionCutoff,
} from '@engram/core'
import type { Lease } from '../ports/lease.ts'
import type { Logger } from '../ports/logger.ts'
import type {
  MaintenanceRemoved,
  MaintenanceRepository,
  MaintenanceRun,
  MaintenanceStep,
  MaintenanceTrigger,
  StoreCompaction,
} from '../ports/maintenance.ts'
import type { MemoryItemRepository } from '../ports/memory-items.ts'
import type { Telemetry } from '../ports/telemetry.ts'
import { repeat, schedulerOf } from '../scheduling/scheduler.ts'

/** The lease every replica asks for before a run: one run at a time across them. */
export const MAINTENANCE_LEASE_KEY = 'maintenance'
/** Long enough for a run over a large store; the slot's unique row guards it past that anyway. */
export const MAINTENANCE_LEASE_TTL_MS = 30 * 60_000
/** How often a started scheduler looks at the clock (a real timer; tests call tick()). */
export const MAINTENANCE_TICK_MS = 60_000

export interface MaintenanceServiceDeps {
  repository: MaintenanceRepository
  compaction: StoreCompaction
  /** Every agent's id (the adapter's agentIds): the agents a run goes through. */
  agentIds: () => Promise<string[]>
  settingsStore: Pick<MemoryItemRepository, 'settings' | 'saveSettings'>
  /** The deletion path of a conversation (deleteSession's), so every derived store follows. */
  deleteConversation: (agentId: string, conversationId: string) => Promise<boolean>
  /** Summary retention (issue 9's summaryRetentionDays): its cutoff per agent, and the removal. */
  summaries: {
    retentionCutoff(agentId: string): Promise<Date>
    removeExpired(agentId: string): Promise<number>
  } | null
  clock: Clock
  rules: MaintenanceRules
  lease: Lease
  log: Logger
  telemetry: Telemetry
}

export interface MaintenanceStatusView {
  rules: MaintenanceRules
  /** The next scheduled run's slot, null when scheduled runs are off. */
  nextScheduledRun: Date | null
  /** Whether the next scheduled run will be a dry run (no scheduled run recorded yet: an upgrade). */
  nextScheduledRunDry: boolean
  lastRuns: MaintenanceRun[]
}

/**
 * Spec 002's maintenance: retention of episodic memory, summary retention, and compaction, run on
 * the cron schedule (once across replicas: the lease and the slot's unique row) or on demand, dry
 * or for real, every run recorded with what it removed and reclaimed.
 */
export class MaintenanceService {
  /** This process, as lease holder and as the run's recorded holder. */
  readonly holder = `${os.hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`
  /** Slots before this are not this process's to run when none was ever recorded. */
  private readonly since: Date
  /** Cancels the tick timer (null while not started). */
  private timer: (() => void) | null = null
  private ticking: Promise<unknown> = Promise.resolve()

  constructor(private readonly deps: MaintenanceServiceDeps) {
    this.since = deps.clock.now()
  }

  get rules(): MaintenanceRules {
    return this.deps.rules
  }

  async status(lastRuns = 5): Promise<MaintenanceStatusView> {
    const { rules, repository, clock } = this.deps
    const last = await repository.lastScheduledSlot()
    const from = new Date(Math.max(clock.now().getTime(), last?.getTime() ?? 0))
    return {
      rules,
      nextScheduledRun: rules.enabled ? nextMaintenanceRun(rules.cleanupInterval, from) : null,
      nextScheduledRunDry: last === null,
      lastRuns: (await repository.list(0, lastRuns)).runs,
    }
  }

  runs(offset: number, limit: number) {
    return this.deps.repository.list(offset, limit)
  }

  /** An operator's run now (all agents, or one): refused while another run holds the lease. */
  async runNow(options: { dryRun: boolean; agentId?: string | null }): Promise<MaintenanceRun> {
    const run = await this.begin('MANUAL', options.dryRun, null, options.agentId ?? null)
    if (!run) throw new ConflictError('a maintenance run is already under way; try again when it ends')
    return run
  }

  /**
   * Runs the scheduled slot that is due, if any and if this process gets it; null otherwise. The
   * first scheduled run of a database (none recorded yet: just upgraded) is a dry run, so an
   * operator sees what retention would remove before anything is.
   */
  tick(): Promise<MaintenanceRun | null> {
    const next = this.ticking.then(() => this.tickOnce())
    this.ticking = next.catch(() => {})
    return next
  }

  /** Starts the timer that calls tick (on the clock's scheduler; the clock decides what is due). */
  start(intervalMs = MAINTENANCE_TICK_MS): void {
    if (this.timer || !this.deps.rules.enabled) return
    this.timer = repeat(schedulerOf(this.deps.clock), intervalMs, () => {
      this.tick().catch((error) => this.deps.log.error('[maintenance] scheduled run failed:', error))
    })
  }

  async stop(): Promise<void> {
    this.timer?.()
    this.timer = null
    await this.ticking
  }

  async agentSettings(
    agentId: string,
  ): Promise<{ retentionDays: number | null; effectiveRetentionDays: number }> {
    const own = await this.ownSettings(agentId)
    return {
      retentionDays: own.retentionDays ?? null,
      effectiveRetentionDays: effectiveRetentionDays(this.rules, own),
    }
  }

  /** Sets (a number) or clears (null) the agent's own retention; validated (1 to 36,500 days). */
  async updateAgentSettings(agentId: string, changes: AgentMaintenanceSettings) {
    const parsed = parseWith(AgentMaintenanceSettingsSchema, changes, 'maintenance')
    const stored = await this.deps.settingsStore.settings(agentId)
    const own = { ...(stored.maintenance ?? {}) } as Record<string, unknown>
    if (parsed.retentionDays === null) delete own.retentionDays
    else if (parsed.retentionDays !== undefined) own.retentionDays = parsed.retentionDays
    const { maintenance: _previous, ...rest } = stored
    await this.deps.settingsStore.saveSettings(
      agentId,
      Object.keys(own).length > 0 ? { ...rest, maintenance: own } : rest,
    )
    return this.agentSettings(agentId)
  }

  private async tickOnce(): Promise<MaintenanceRun | null> {
    const { rules, repository, clock } = this.deps
    if (!rules.enabled) return null
    const last = await repository.lastScheduledSlot()
    const slot = dueMaintenanceSlot(rules.cleanupInterval, last ?? this.since, clock.now())
    if (!slot) return null
    return this.begin('SCHEDULED', last === null, slot, null)
  }

  /** Takes the lease, records the run (null when the lease or the slot is another's), runs it. */
  private async begin(
    trigger: MaintenanceTrigger,
    dryRun: boolean,
    slot: Date | null,
    agentId: string | null,
  ): Promise<MaintenanceRun | null> {
    const { lease, repository, clock } = this.deps
    if (!(await lease.acquire(MAINTENANCE_LEASE_KEY, this.holder, MAINTENANCE_LEASE_TTL_MS))) return null
    try {
      const run = await repository.start({
        id: `mnt_${randomUUID()}`,
        trigger,
        dryRun,
        slot,
        agentId,
        holder: this.holder,
        startedAt: clock.now(),
      })
      if (!run) return null
      return await this.execute(run)
    } finally {
      await lease.release(MAINTENANCE_LEASE_KEY, this.holder).catch(() => false)
    }
  }

  private async execute(run: MaintenanceRun): Promise<MaintenanceRun> {
    const { repository, clock, telemetry, log } = this.deps
    const steps: MaintenanceStep[] = []
    const removed: MaintenanceRemoved = { conversations: 0, messages: 0, summaries: 0 }
    let bytesReclaimed: number | null = null
    try {
      const agents = run.agentId ? [run.agentId] : await this.deps.agentIds()
      await this.step(steps, 'retention', async () => {
        for (const agentId of agents) await this.retain(agentId, run.dryRun, removed)
        const verb = run.dryRun ? 'would remove' : 'removed'
        return `${agents.length} agent(s): ${verb} ${removed.conversations} conversation(s) with ${removed.messages} message(s)`
      })
      await this.step(steps, 'summary retention', async () => {
        for (const agentId of agents) removed.summaries += await this.retainSummaries(agentId, run.dryRun)
        return `${run.dryRun ? 'would remove' : 'removed'} ${removed.summaries} summar${removed.summaries === 1 ? 'y' : 'ies'}`
      })
      if (this.rules.compactionEnabled) {
        const report = await this.deps.compaction.compact({
          dryRun: run.dryRun,
          vectorRebuildDeletedShare: this.rules.vectorRebuildDeletedShare,
        })
        steps.push(...report.steps)
        if (report.bytesBefore !== null && report.bytesAfter !== null && !run.dryRun)
          bytesReclaimed = Math.max(0, report.bytesBefore - report.bytesAfter)
      } else steps.push({ name: 'compaction', detail: 'off (ENGRAM_COMPACTION)', durationMs: 0 })
      telemetry.jobFinished('maintenance', 'done')
      return await repository.finish(run.id, {
        status: 'SUCCEEDED',
        finishedAt: clock.now(),
        removed,
        bytesReclaimed,
        steps,
        error: null,
      })
    } catch (error) {
      log.error('[maintenance] run failed:', error)
      telemetry.jobFinished('maintenance', 'failed')
      return repository.finish(run.id, {
        status: 'FAILED',
        finishedAt: clock.now(),
        removed,
        bytesReclaimed,
        steps,
        error: (error as Error)?.message ?? String(error),
      })
    }
  }

  /** The agent's conversations past its retention, removed (or counted, dry). */
  private async retain(agentId: string, dryRun: boolean, removed: MaintenanceRemoved): Promise<void> {
    const own = await this.ownSettings(agentId)
    const cutoff = retentionCutoff(this.deps.clock.now(), effectiveRetentionDays(this.rules, own))
    const expired = await this.deps.repository.expiredConversations(
      agentId,
      cutoff,
      this.rules.conversationsPerAgent,
    )
    for (const conversation of expired) {
      if (!dryRun && !(await this.deps.deleteConversation(agentId, conversation.conversationId))) continue
      removed.conversations += 1
      removed.messages += conversation.messages
    }
  }

  private async retainSummaries(agentId: string, dryRun: boolean): Promise<number> {
    const summaries = this.deps.summaries
    if (!summaries) return 0
    if (dryRun)
      return this.deps.repository.countSummariesBefore(agentId, await summaries.retentionCutoff(agentId))
    return summaries.removeExpired(agentId)
  }

  private async ownSettings(agentId: string): Promise<AgentMaintenanceSettings> {
    const stored = await this.deps.settingsStore.settings(agentId)
    const parsed = AgentMaintenanceSettingsSchema.safeParse(stored.maintenance ?? {})
    return parsed.success ? parsed.data : {}
  }

  private async step(steps: MaintenanceStep[], name: string, work: () => Promise<string>): Promise<void> {
    const started = performance.now()
    const detail = await work()
    steps.push({ name, detail, durationMs: Math.round(performance.now() - started) })
  }
}

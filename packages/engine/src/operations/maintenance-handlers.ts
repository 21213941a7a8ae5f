import type { Engine } from '../engine.ts'
import type { MaintenanceRun } from '../ports/maintenance.ts'
import type { OperationHandlers } from './handlers.ts'

// Maintenance's handlers (issue 17 §4). Every operation is admin-only (the catalog says so and
// the operations layer refuses an agent key before these run).

export type MaintenanceHandlerName =
  | 'maintenanceStatus'
  | 'maintenanceRuns'
  | 'runMaintenance'
  | 'maintenanceSettings'
  | 'updateMaintenanceSettings'

const iso = (date: Date | null) => (date ? date.toISOString() : null)

/** A run as the doors show it: times as ISO strings, counts only. */
export function maintenanceRunOut(run: MaintenanceRun) {
  return {
    id: run.id,
    trigger: run.trigger,
    dryRun: run.dryRun,
    status: run.status,
    slot: iso(run.slot),
    agentId: run.agentId,
    holder: run.holder,
    startedAt: run.startedAt.toISOString(),
    finishedAt: iso(run.finishedAt),
    removed: { ...run.removed },
    bytesReclaimed: run.bytesReclaimed,
    steps: run.steps.map((step) => ({ ...step })),
    error: run.error,
  }
}

export function maintenanceHandlers(engine: Engine): Pick<OperationHandlers, MaintenanceHandlerName> {
  const { maintenance, agents } = engine
  return {
    async maintenanceStatus() {
      const status = await maintenance.status()
      const { enabled, retentionDays, cleanupInterval, compactionEnabled, vectorRebuildDeletedShare } =
        status.rules
      return {
        rules: { enabled, retentionDays, cleanupInterval, compactionEnabled, vectorRebuildDeletedShare },
        nextScheduledRun: iso(status.nextScheduledRun),
        nextScheduledRunDry: status.nextScheduledRunDry,
        lastRuns: status.lastRuns.map(maintenanceRunOut),
      }
    },
    async maintenanceRuns(_call, input) {
      const page = await maintenance.runs(input.offset ?? 0, input.first ?? 20)
      return { totalCount: page.totalCount, runs: page.runs.map(maintenanceRunOut) }
    },
    async runMaintenance(_call, input) {
      // A named agent must exist (NOT_FOUND otherwise): a typo never reads as "nothing to remove".
      if (input.agentId) await agents.requireAgent(input.agentId)
      return maintenanceRunOut(
        await maintenance.runNow({ dryRun: input.dryRun ?? false, agentId: input.agentId ?? null }),
      )
    },
    async maintenanceSettings(_call, input) {
      await agents.requireAgent(input.agentId)
      return { agentId: input.agentId, ...(await maintenance.agentSettings(input.agentId)) }
    },
    async updateMaintenanceSettings(_call, input) {
      await agents.requireAgent(input.agentId)
      const settings = await maintenance.updateAgentSettings(
        input.agentId,
        input.retentionDays === undefined ? {} : { retentionDays: input.retentionDays },
      )
      return { agentId: input.agentId, ...settings }
    },
  }
}

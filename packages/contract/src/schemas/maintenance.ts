import { z } from 'zod'
import { CONTRACT_LIMITS as L } from '../limits.ts'
import { AgentIdSchema, DateTimeSchema } from './fields.ts'

// Maintenance (issue 17 §4, spec 002's maintenance block): retention, compaction and their runs.
// Admin operations: the server-wide rules come from the environment; an agent's retention is its
// own setting.

export const MaintenanceTriggerSchema = z.enum(['SCHEDULED', 'MANUAL'])
export const MaintenanceStatusSchema = z.enum(['RUNNING', 'SUCCEEDED', 'FAILED'])

const retentionDays = z.number().int().min(L.minRetentionDays).max(L.maxRetentionDays)

export const MaintenanceRunsInputSchema = z.object({
  first: z.number().int().min(1).max(L.maxMaintenanceRunsPage).optional(),
  offset: z.number().int().min(0).max(1_000_000).optional(),
})
export const RunMaintenanceInputSchema = z.object({
  /** Counts what would be removed and reclaimed, removing nothing. */
  dryRun: z.boolean().optional(),
  /** Limits the run to one agent (retention and summaries); compaction is the whole store's. */
  agentId: AgentIdSchema.optional(),
})
export const MaintenanceSettingsInputSchema = z.object({ agentId: AgentIdSchema })
export const UpdateMaintenanceSettingsInputSchema = z.object({
  agentId: AgentIdSchema,
  /** The agent’s own retention in days; null returns it to the server’s; omitted, unchanged. */
  retentionDays: retentionDays.nullable().optional(),
})

export const MaintenanceRulesSchema = z.object({
  enabled: z.boolean(),
  retentionDays: z.number().int(),
  cleanupInterval: z.string(),
  compactionEnabled: z.boolean(),
  vectorRebuildDeletedShare: z.number(),
})
export const MaintenanceRemovedSchema = z.object({
  conversations: z.number().int(),
  messages: z.number().int(),
  summaries: z.number().int(),
})
export const MaintenanceStepSchema = z.object({
  name: z.string(),
  detail: z.string(),
  durationMs: z.number().int(),
})
export const MaintenanceRunSchema = z.object({
  id: z.string(),
  trigger: MaintenanceTriggerSchema,
  dryRun: z.boolean(),
  status: MaintenanceStatusSchema,
  /** The cron occurrence of a scheduled run. */
  slot: DateTimeSchema.nullable(),
  /** The agent a manual run was limited to (null for every agent, or once that agent is deleted). */
  agentId: z.string().nullable(),
  holder: z.string(),
  startedAt: DateTimeSchema,
  finishedAt: DateTimeSchema.nullable(),
  removed: MaintenanceRemovedSchema,
  bytesReclaimed: z.number().nullable(),
  steps: z.array(MaintenanceStepSchema),
  error: z.string().nullable(),
})
export const MaintenanceOverviewSchema = z.object({
  rules: MaintenanceRulesSchema,
  /** The next scheduled run, null when scheduled runs are off (ENGRAM_MAINTENANCE=off). */
  nextScheduledRun: DateTimeSchema.nullable(),
  /** The first scheduled run after an upgrade is a dry run. */
  nextScheduledRunDry: z.boolean(),
  lastRuns: z.array(MaintenanceRunSchema),
})
export const MaintenanceRunPageSchema = z.object({
  totalCount: z.number().int(),
  runs: z.array(MaintenanceRunSchema),
})
export const AgentMaintenanceSettingsSchema = z.object({
  agentId: z.string(),
  /** The agent's own retention, null when it follows the server's. */
  retentionDays: z.number().int().nullable(),
  effectiveRetentionDays: z.number().int(),
})

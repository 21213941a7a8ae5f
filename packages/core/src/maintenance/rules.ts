import { CronExpressionParser } from 'cron-parser'
import { z } from 'zod'
import { parseWith } from '../errors.ts'

const DAY_MS = 86_400_000

/** Whether a cron expression parses (five fields, or six with seconds), on UTC. */
export function isCronExpression(expression: string): boolean {
  try {
    CronExpressionParser.parse(expression, { tz: 'UTC', currentDate: new Date(0) })
    return true
  } catch {
    return false
  }
}

/** The bounds of a retention period, shared by the server-wide rule and the per-agent override. */
export const RETENTION_DAYS_MIN = 1
export const RETENTION_DAYS_MAX = 36_500
export const RetentionDaysSchema = z.number().int().min(RETENTION_DAYS_MIN).max(RETENTION_DAYS_MAX)

/**
 * Spec 002's maintenance block (issue 17 §4), each number the spec's value by default. Server-wide:
 * the API reads it from the environment once at start-up; `retentionDays` is overridden per agent.
 */
export const MaintenanceRulesSchema = z.object({
  /** Scheduled runs happen at all (ENGRAM_MAINTENANCE auto | off); on-demand runs always can. */
  enabled: z.boolean().default(true),
  /** Episodic memory stored longer ago than this is removed (unless promoted or pinned). */
  retentionDays: RetentionDaysSchema.default(90),
  /** When scheduled runs happen: a cron expression on UTC (spec 002: 3 AM daily). */
  cleanupInterval: z
    .string()
    .max(200)
    .default('0 3 * * *')
    .refine(isCronExpression, { message: 'must be a cron expression such as "0 3 * * *"' }),
  /** Whether a run compacts the store after removing (vacuum, full-text merge, WAL truncation). */
  compactionEnabled: z.boolean().default(true),
  /** An agent's vector index is rebuilt once this share of its entries are deleted ones. */
  vectorRebuildDeletedShare: z.number().min(0.01).max(1).default(0.2),
  /** Conversations examined per agent and run at most, so one run stays bounded. */
  conversationsPerAgent: z.number().int().min(1).max(1_000_000).default(10_000),
})
export type MaintenanceRules = z.infer<typeof MaintenanceRulesSchema>
export const DEFAULT_MAINTENANCE_RULES: MaintenanceRules = MaintenanceRulesSchema.parse({})

export function parseMaintenanceRules(input: unknown): MaintenanceRules {
  return parseWith(MaintenanceRulesSchema, input, 'maintenance')
}

/** What an agent may override (stored with its settings); only what differs is kept. */
export const AgentMaintenanceSettingsSchema = z.object({
  retentionDays: RetentionDaysSchema.nullable().optional(),
})
export type AgentMaintenanceSettings = z.infer<typeof AgentMaintenanceSettingsSchema>

/** The agent's retention: its own override when it has one, else the server's. */
export function effectiveRetentionDays(rules: MaintenanceRules, agent: AgentMaintenanceSettings): number {
  return agent.retentionDays ?? rules.retentionDays
}

/** Records stored before this instant are past retention (stored exactly `days` ago is kept). */
export function retentionCutoff(now: Date, days: number): Date {
  return new Date(now.getTime() - days * DAY_MS)
}

/** The first occurrence of `expression` strictly after `after` (UTC). */
export function nextMaintenanceRun(expression: string, after: Date): Date {
  return CronExpressionParser.parse(expression, { currentDate: after, tz: 'UTC' }).next().toDate()
}

/**
 * The newest occurrence at or before `now` that is later than `since` (the last slot already
 * handled), or null when none is due. Missed slots collapse into the newest one: a process that
 * was down for three nights runs once, for the latest night.
 */
export function dueMaintenanceSlot(expression: string, since: Date, now: Date): Date | null {
  let slot: Date | null = null
  let next = nextMaintenanceRun(expression, since)
  // Bounded: a per-minute expression over a long outage would otherwise walk every minute.
  for (let steps = 0; next.getTime() <= now.getTime() && steps < 100_000; steps++) {
    slot = next
    next = nextMaintenanceRun(expression, next)
  }
  if (slot && next.getTime() <= now.getTime()) {
    // Still behind after the bound: the newest slot is the previous occurrence from now.
    const previous = CronExpressionParser.parse(expression, { currentDate: now, tz: 'UTC' }).prev().toDate()
    slot = previous
  }
  return slot
}

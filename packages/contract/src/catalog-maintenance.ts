import { operation } from './operation.ts'
import * as s from './schemas.ts'

/**
 * Maintenance's operations (issue 17 §4): every one needs an admin key. Part of the catalog
 * (spread into it in catalog.ts).
 */
export const maintenanceOperations = {
  maintenanceStatus: operation({
    kind: 'query',
    description:
      'Maintenance at a glance (admin): the rules in force (retention days, the cron schedule, compaction), when the next scheduled run is and whether it will be a dry run, and the last runs.',
    input: s.NoInputSchema,
    output: s.MaintenanceOverviewSchema,
    admin: true,
    graphql: { field: 'maintenanceStatus' },
  }),
  maintenanceRuns: operation({
    kind: 'query',
    description:
      'Recorded maintenance runs, newest first (admin): trigger, dry or not, status, what each removed per kind and the bytes it reclaimed, and its steps.',
    input: s.MaintenanceRunsInputSchema,
    output: s.MaintenanceRunPageSchema,
    admin: true,
    graphql: { field: 'maintenanceRuns' },
  }),
  runMaintenance: operation({
    kind: 'mutation',
    description:
      'Runs maintenance now (admin): removes episodic memory past retention (neither promoted nor pinned), expired summaries, and compacts the store. dryRun counts what would be removed and removes nothing; agentId limits retention to one agent. Refused (CONFLICT) while another run is under way.',
    input: s.RunMaintenanceInputSchema,
    output: s.MaintenanceRunSchema,
    admin: true,
    destructive: true,
    graphql: { field: 'runMaintenance' },
  }),
  maintenanceSettings: operation({
    kind: 'query',
    description: 'An agent’s retention (admin): its own override, if any, and the retention in force for it.',
    input: s.MaintenanceSettingsInputSchema,
    output: s.AgentMaintenanceSettingsSchema,
    admin: true,
    graphql: { field: 'maintenanceSettings' },
  }),
  updateMaintenanceSettings: operation({
    kind: 'mutation',
    description:
      'Sets an agent’s own retention in days (admin), or null to follow the server’s (ENGRAM_RETENTION_DAYS). The server-wide rules stay in the environment.',
    input: s.UpdateMaintenanceSettingsInputSchema,
    output: s.AgentMaintenanceSettingsSchema,
    admin: true,
    graphql: { field: 'updateMaintenanceSettings' },
  }),
}

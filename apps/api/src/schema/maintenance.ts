// Maintenance (issue 17 §4, spec 002's maintenance block): the rules in force, the next scheduled
// run, the recorded runs, a run now (dry or for real) and an agent's own retention. Admin keys
// only (the catalog's entries are admin: true; the operations layer refuses an agent key).
import type { OutputOf } from '@engram/contract'
import { ConflictError } from '@engram/core'
import { builder } from '../builder.ts'
import { operate } from '../operations.ts'

type Run = OutputOf<'runMaintenance'>
type Overview = OutputOf<'maintenanceStatus'>
type AgentSettings = OutputOf<'maintenanceSettings'>

const MaintenanceTriggerEnum = builder.enumType('MaintenanceTrigger', {
  description: 'SCHEDULED: on ENGRAM_CLEANUP_INTERVAL. MANUAL: runMaintenance.',
  values: ['SCHEDULED', 'MANUAL'] as const,
})

const MaintenanceRunStatusEnum = builder.enumType('MaintenanceRunStatus', {
  values: ['RUNNING', 'SUCCEEDED', 'FAILED'] as const,
})

const MaintenanceRulesRef = builder.objectRef<Overview['rules']>('MaintenanceRules').implement({
  description:
    'The server-wide rules (the environment: ENGRAM_MAINTENANCE, ENGRAM_RETENTION_DAYS, ENGRAM_CLEANUP_INTERVAL, ENGRAM_COMPACTION).',
  fields: (t) => ({
    enabled: t.exposeBoolean('enabled', {
      description: 'Scheduled runs happen (runMaintenance always can).',
    }),
    retentionDays: t.exposeInt('retentionDays', {
      description:
        'Episodic memory stored longer ago than this is removed, unless promoted or pinned (an agent may have its own).',
    }),
    cleanupInterval: t.exposeString('cleanupInterval', {
      description: 'The schedule, a cron expression on UTC.',
    }),
    compactionEnabled: t.exposeBoolean('compactionEnabled'),
    vectorRebuildDeletedShare: t.exposeFloat('vectorRebuildDeletedShare', {
      description: 'A vector index is rebuilt once this share of its entries are deleted ones.',
    }),
  }),
})

const MaintenanceRemovedRef = builder.objectRef<Run['removed']>('MaintenanceRemoved').implement({
  description: 'What a run removed, or a dry run would remove, per kind (counts only).',
  fields: (t) => ({
    conversations: t.exposeInt('conversations'),
    messages: t.exposeInt('messages', { description: 'Messages, each with its short-term memory entry.' }),
    summaries: t.exposeInt('summaries', { description: 'Automatic summaries past summaryRetentionDays.' }),
  }),
})

const MaintenanceStepRef = builder.objectRef<Run['steps'][number]>('MaintenanceStep').implement({
  fields: (t) => ({
    name: t.exposeString('name'),
    detail: t.exposeString('detail'),
    durationMs: t.exposeInt('durationMs'),
  }),
})

const MaintenanceRunRef = builder.objectRef<Run>('MaintenanceRun').implement({
  description: 'One recorded maintenance run.',
  fields: (t) => ({
    id: t.exposeID('id'),
    trigger: t.field({ type: MaintenanceTriggerEnum, resolve: (r) => r.trigger }),
    dryRun: t.exposeBoolean('dryRun', { description: 'Counted what it would remove; removed nothing.' }),
    status: t.field({ type: MaintenanceRunStatusEnum, resolve: (r) => r.status }),
    slot: t.expose('slot', {
      type: 'DateTime',
      nullable: true,
      description: 'The cron occurrence a scheduled run was for.',
    }),
    agentId: t.exposeString('agentId', {
      nullable: true,
      description: 'The agent a manual run was limited to; null for every agent (or once it was deleted).',
    }),
    holder: t.exposeString('holder', { description: 'The process that ran it (host:pid:nonce).' }),
    startedAt: t.expose('startedAt', { type: 'DateTime' }),
    finishedAt: t.expose('finishedAt', { type: 'DateTime', nullable: true }),
    removed: t.field({ type: MaintenanceRemovedRef, resolve: (r) => r.removed }),
    bytesReclaimed: t.exposeFloat('bytesReclaimed', {
      nullable: true,
      description:
        'How much the store shrank (file + WAL on SQLite; the database size on Postgres); null for a dry run.',
    }),
    steps: t.field({ type: [MaintenanceStepRef], resolve: (r) => r.steps }),
    error: t.exposeString('error', { nullable: true }),
  }),
})

const MaintenanceOverviewRef = builder.objectRef<Overview>('MaintenanceOverview').implement({
  fields: (t) => ({
    rules: t.field({ type: MaintenanceRulesRef, resolve: (o) => o.rules }),
    nextScheduledRun: t.expose('nextScheduledRun', {
      type: 'DateTime',
      nullable: true,
      description: 'Null when scheduled runs are off.',
    }),
    nextScheduledRunDry: t.exposeBoolean('nextScheduledRunDry', {
      description: 'The first scheduled run after an upgrade (none recorded yet) is a dry run.',
    }),
    lastRuns: t.field({ type: [MaintenanceRunRef], resolve: (o) => o.lastRuns }),
  }),
})

const MaintenanceRunPageRef = builder.objectRef<OutputOf<'maintenanceRuns'>>('MaintenanceRunPage').implement({
  fields: (t) => ({
    totalCount: t.exposeInt('totalCount'),
    runs: t.field({ type: [MaintenanceRunRef], resolve: (p) => p.runs }),
  }),
})

const AgentMaintenanceSettingsRef = builder.objectRef<AgentSettings>('AgentMaintenanceSettings').implement({
  fields: (t) => ({
    agentId: t.exposeString('agentId'),
    retentionDays: t.exposeInt('retentionDays', {
      nullable: true,
      description: 'The agent’s own retention; null when it follows the server’s.',
    }),
    effectiveRetentionDays: t.exposeInt('effectiveRetentionDays'),
  }),
})

builder.queryFields((t) => ({
  maintenanceStatus: t.field({
    type: MaintenanceOverviewRef,
    errors: {},
    description:
      'Maintenance at a glance (admin): the rules, the next scheduled run (and whether it is a dry run), the last runs.',
    resolve: (_root, _args, ctx) => operate(ctx, 'maintenanceStatus'),
  }),
  maintenanceRuns: t.field({
    type: MaintenanceRunPageRef,
    errors: {},
    description: 'Recorded maintenance runs, newest first (admin).',
    args: { first: t.arg.int(), offset: t.arg.int() },
    resolve: (_root, args, ctx) => operate(ctx, 'maintenanceRuns', args),
  }),
  maintenanceSettings: t.field({
    type: AgentMaintenanceSettingsRef,
    errors: {},
    description: 'An agent’s retention: its own, and the one in force (admin).',
    args: { agentId: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => operate(ctx, 'maintenanceSettings', args),
  }),
}))

builder.mutationFields((t) => ({
  runMaintenance: t.field({
    type: MaintenanceRunRef,
    errors: { types: [ConflictError] },
    description:
      'Runs maintenance now (admin): retention, summary retention and compaction. dryRun counts without removing; agentId limits retention to one agent. CONFLICT while another run is under way.',
    args: { dryRun: t.arg.boolean(), agentId: t.arg.id() },
    resolve: (_root, args, ctx) => operate(ctx, 'runMaintenance', args),
  }),
  updateMaintenanceSettings: t.field({
    type: AgentMaintenanceSettingsRef,
    errors: {},
    description: 'Sets an agent’s own retention in days, or null to follow the server’s (admin).',
    args: { agentId: t.arg.id({ required: true }), retentionDays: t.arg.int() },
    resolve: (_root, args, ctx) => operate(ctx, 'updateMaintenanceSettings', args, ['retentionDays']),
  }),
}))

import type { OutputOf } from '@engram/contract'
import { type Command, InvalidArgumentError } from 'commander'
import type { RunCall } from './graph.ts'

type MaintenanceRun = OutputOf<'runMaintenance'>

function count(value: string): number {
  const parsed = Number(value)
  if (!Number.isInteger(parsed) || parsed < 1) throw new InvalidArgumentError('must be a whole number from 1')
  return parsed
}

/** "2026-03-01 03:00  scheduled · dry run  succeeded  2 conversations, 5 messages, 0 summaries  1.2 MB": one line a run. */
export function maintenanceLine(r: MaintenanceRun): string {
  const what = `${r.trigger.toLowerCase()}${r.dryRun ? ' · dry run' : ''}${r.agentId ? ` · ${r.agentId}` : ''}`
  const removed = `${r.removed.conversations} conversations, ${r.removed.messages} messages, ${r.removed.summaries} summaries`
  const reclaimed = r.bytesReclaimed === null ? '' : `  ${r.bytesReclaimed} bytes reclaimed`
  const failed = r.error ? `  (${r.error})` : ''
  return `${r.startedAt.replace('T', ' ').slice(0, 16)}  ${what}  ${r.status.toLowerCase()}  ${removed}${reclaimed}${failed}`
}

/** `engram maintenance ...` (admin): run now (or dry), the recorded runs, the rules and schedule. */
export function addMaintenanceCommands(program: Command, run: RunCall): Command {
  const maintenance = program
    .command('maintenance')
    .description('retention and compaction (admin): run now or dry, the runs, the schedule')
  maintenance
    .command('run')
    .description('runs maintenance now: removes episodic memory past retention and compacts the store')
    .option('--dry-run', 'count what would be removed; remove nothing')
    .option('--agent <id>', 'retention for this agent only')
    .action(async (o: { dryRun?: boolean; agent?: string }) => {
      await run(
        (engram) =>
          engram.runMaintenance({ dryRun: o.dryRun ?? false, ...(o.agent ? { agentId: o.agent } : {}) }),
        maintenanceLine,
      )
    })
  maintenance
    .command('runs')
    .description('recorded runs, newest first')
    .option('--limit <n>', 'at most this many (1-100)', count)
    .action(async (o: { limit?: number }) => {
      await run(
        (engram) => engram.maintenanceRuns({ first: o.limit ?? 20 }),
        (page) => page.runs.map(maintenanceLine).join('\n') || 'no runs yet',
      )
    })
  maintenance
    .command('status')
    .description('the rules and the next scheduled run')
    .action(async () => {
      await run(
        (engram) => engram.maintenanceStatus(),
        (s) =>
          [
            `next run     ${s.nextScheduledRun ?? 'off'}${s.nextScheduledRunDry ? ' (dry run)' : ''}`,
            `schedule     ${s.rules.cleanupInterval} (UTC)`,
            `retention    ${s.rules.retentionDays} days`,
            `compaction   ${s.rules.compactionEnabled ? 'on' : 'off'}`,
          ].join('\n'),
      )
    })
  return maintenance
}

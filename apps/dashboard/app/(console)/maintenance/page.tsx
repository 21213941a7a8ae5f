import { gql, listAgents } from '../../../lib/api'
import { formatBytes } from '../../../lib/format'
import { type AgentRetention, RetentionForm, RunButtons } from './maintenance-console'

export const dynamic = 'force-dynamic'

interface Run {
  id: string
  trigger: 'SCHEDULED' | 'MANUAL'
  dryRun: boolean
  status: 'RUNNING' | 'SUCCEEDED' | 'FAILED'
  agentId: string | null
  startedAt: string
  finishedAt: string | null
  bytesReclaimed: number | null
  error: string | null
  removed: { conversations: number; messages: number; summaries: number }
}

interface Overview {
  nextScheduledRun: string | null
  nextScheduledRunDry: boolean
  rules: {
    enabled: boolean
    retentionDays: number
    cleanupInterval: string
    compactionEnabled: boolean
    vectorRebuildDeletedShare: number
  }
}

const RUN_FIELDS =
  'id trigger dryRun status agentId startedAt finishedAt bytesReclaimed error removed { conversations messages summaries }'

/** Spec 002's maintenance (issue 17 §4): the schedule, the rules, the runs, and run now. */
export default async function MaintenancePage() {
  const [{ maintenanceStatus: status, maintenanceRuns: page }, agents] = await Promise.all([
    gql<{ maintenanceStatus: Overview; maintenanceRuns: { totalCount: number; runs: Run[] } }>(
      `{ maintenanceStatus { ... on MaintenanceOverview { nextScheduledRun nextScheduledRunDry
           rules { enabled retentionDays cleanupInterval compactionEnabled vectorRebuildDeletedShare } } }
         maintenanceRuns(first: 50) { ... on MaintenanceRunPage { totalCount runs { ${RUN_FIELDS} } } } }`,
    ),
    listAgents(),
  ])
  // Each agent's retention (its own, or the server's): a handful of agents, one request each.
  const retention: AgentRetention[] = await Promise.all(
    agents.map(async (agent) => {
      const { maintenanceSettings } = await gql<{ maintenanceSettings: AgentRetention }>(
        `query($a: ID!) { maintenanceSettings(agentId: $a) { ... on AgentMaintenanceSettings { agentId retentionDays effectiveRetentionDays } } }`,
        { a: agent.id },
      )
      return maintenanceSettings
    }),
  )
  const { rules } = status
  return (
    <section aria-labelledby="maintenance-heading">
      <header className="page-header">
        <h1 id="maintenance-heading">Maintenance</h1>
      </header>
      <section className="card" aria-label="Schedule">
        <h2>Schedule</h2>
        <dl className="facts">
          <dt>Next scheduled run</dt>
          <dd data-testid="next-run">
            {status.nextScheduledRun
              ? `${new Date(status.nextScheduledRun).toISOString().replace('T', ' ').slice(0, 16)} UTC${status.nextScheduledRunDry ? ' (dry run: the first after an upgrade)' : ''}`
              : 'off (ENGRAM_MAINTENANCE=off)'}
          </dd>
          <dt>Schedule</dt>
          <dd>
            <code>{rules.cleanupInterval}</code> (UTC)
          </dd>
          <dt>Retention</dt>
          <dd data-testid="retention-days">
            {rules.retentionDays} days from when Engram stored it, unless promoted or pinned
          </dd>
          <dt>Compaction</dt>
          <dd>
            {rules.compactionEnabled ? 'on' : 'off'}; vector indexes rebuilt past{' '}
            {Math.round(rules.vectorRebuildDeletedShare * 100)}% deleted entries
          </dd>
        </dl>
      </section>
      <RunButtons />
      <RetentionForm agents={retention} />
      <h2>Runs ({page.totalCount})</h2>
      {page.runs.length === 0 ? (
        <p className="empty">No runs yet.</p>
      ) : (
        <table aria-label="Maintenance runs">
          <thead>
            <tr>
              <th>Started (UTC)</th>
              <th>Trigger</th>
              <th>Status</th>
              <th>Conversations</th>
              <th>Messages</th>
              <th>Summaries</th>
              <th>Reclaimed</th>
            </tr>
          </thead>
          <tbody>
            {page.runs.map((run) => (
              <tr key={run.id} data-run-id={run.id}>
                <td>{run.startedAt.replace('T', ' ').slice(0, 19)}</td>
                <td>
                  {run.trigger.toLowerCase()}
                  {run.dryRun ? ' · dry run' : ''}
                  {run.agentId ? ` · ${run.agentId}` : ''}
                </td>
                <td title={run.error ?? undefined}>{run.status.toLowerCase()}</td>
                <td>{run.removed.conversations}</td>
                <td>{run.removed.messages}</td>
                <td>{run.removed.summaries}</td>
                <td>{run.bytesReclaimed === null ? '—' : formatBytes(run.bytesReclaimed)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}

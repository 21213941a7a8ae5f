import { AgentSelect } from '../../components/agent-select'
import { gql, listAgents } from '../../lib/api'
import { SNAPSHOT_FIELDS, type Snapshot } from '../../lib/snapshots'
import { LiveOverview, type Report } from './live-overview'

export const dynamic = 'force-dynamic'

interface Status {
  totalOptimizations: number
  totalTokensSaved: number
  currentParameters: NonNullable<Report['parameters']>
}

export default async function OverviewPage({ searchParams }: { searchParams: Promise<{ agent?: string }> }) {
  const { agent } = await searchParams
  const agents = await listAgents()
  const agentId = agent && agents.some((a) => a.id === agent) ? agent : null
  const { optimizerSnapshots } = await gql<{
    optimizerSnapshots: { snapshots?: Snapshot[]; message?: string }
  }>(
    `query($a: ID) { optimizerSnapshots(agentId: $a, last: 200) { ... on OptimizationSnapshotList { snapshots { ${SNAPSHOT_FIELDS} } } ... on Error { message } } }`,
    { a: agentId },
  )
  // The efficiency report is per agent; "all agents" adds them up.
  const statuses = await Promise.all(
    (agentId ? [agentId] : agents.map((a) => a.id)).map(async (id) => {
      const { optimizerStatus } = await gql<{ optimizerStatus: Status }>(
        `query($a: ID) { optimizerStatus(agentId: $a) { ... on OptimizerStatus { totalOptimizations totalTokensSaved currentParameters { compressionTrigger fullMessageWindow minRelevance targetUsageRatio } } } }`,
        { a: id },
      )
      return optimizerStatus
    }),
  )
  const report: Report = {
    totalOptimizations: statuses.reduce((sum, s) => sum + s.totalOptimizations, 0),
    totalTokensSaved: statuses.reduce((sum, s) => sum + s.totalTokensSaved, 0),
    parameters: agentId ? (statuses[0]?.currentParameters ?? null) : null,
  }
  return (
    <section aria-labelledby="overview-heading">
      <header className="page-header">
        <h1 id="overview-heading">Overview</h1>
        <AgentSelect agents={agents} value={agentId} />
      </header>
      {agents.length === 0 ? (
        <p className="empty">
          No agents yet. Create one with a key on the API keys page, then let it add messages.
        </p>
      ) : (
        <LiveOverview
          key={agentId ?? 'all'}
          agentId={agentId}
          initialSnapshots={optimizerSnapshots.snapshots ?? []}
          initialReport={report}
        />
      )}
    </section>
  )
}

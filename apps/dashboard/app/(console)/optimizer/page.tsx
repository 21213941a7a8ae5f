import { AgentSelect } from '../../../components/agent-select'
import { gql, listAgents } from '../../../lib/api'
import { EXPLANATION_FIELDS, SNAPSHOT_FIELDS, type Snapshot } from '../../../lib/snapshots'
import { OptimizerConsole, type Parameters } from './optimizer-console'

export const dynamic = 'force-dynamic'

export default async function OptimizerPage({ searchParams }: { searchParams: Promise<{ agent?: string }> }) {
  const { agent } = await searchParams
  const agents = await listAgents()
  const agentId = agent && agents.some((a) => a.id === agent) ? agent : (agents[0]?.id ?? null)
  if (!agentId) return <p className="empty">No agents yet: create one on the API keys page.</p>
  // Two requests: together they would pass the API's query cost limit.
  const [status, history] = await Promise.all([
    gql<{ optimizerStatus: { currentParameters: Parameters } }>(
      `query($a: ID) { optimizerStatus(agentId: $a) { ... on OptimizerStatus { currentParameters { compressionTrigger fullMessageWindow minRelevance targetUsageRatio } } } }`,
      { a: agentId },
    ),
    gql<{ optimizerSnapshots: { snapshots: Snapshot[] } }>(
      `query($a: ID) { optimizerSnapshots(agentId: $a, last: 100) { ... on OptimizationSnapshotList { snapshots { ${SNAPSHOT_FIELDS} ${EXPLANATION_FIELDS} } } } }`,
      { a: agentId },
    ),
  ])
  const data = { ...status, ...history }
  return (
    <section aria-labelledby="optimizer-heading">
      <header className="page-header">
        <h1 id="optimizer-heading">Optimizer</h1>
        <AgentSelect agents={agents} value={agentId} allowAll={false} />
      </header>
      <OptimizerConsole
        key={agentId}
        agentId={agentId}
        parameters={data.optimizerStatus.currentParameters}
        initialSnapshots={data.optimizerSnapshots.snapshots}
        renderedAt={new Date().toISOString()}
      />
    </section>
  )
}

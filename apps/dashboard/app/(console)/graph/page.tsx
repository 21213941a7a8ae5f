import { AgentSelect } from '../../../components/agent-select'
import { listAgents } from '../../../lib/api'
import { searchEntities } from './actions'
import { GraphExplorer } from './graph-explorer'

export const dynamic = 'force-dynamic'

type Search = { agent?: string }

export default async function GraphPage({ searchParams }: { searchParams: Promise<Search> }) {
  const params = await searchParams
  const agents = await listAgents()
  const agentId =
    params.agent && agents.some((a) => a.id === params.agent) ? params.agent : (agents[0]?.id ?? null)
  const header = (
    <header className="page-header">
      <h1 id="graph-heading">Graph</h1>
      {agentId && <AgentSelect agents={agents} value={agentId} allowAll={false} />}
    </header>
  )
  if (!agentId)
    return (
      <section aria-labelledby="graph-heading">
        {header}
        <p className="empty">
          No agents yet: create one with a key on the API keys page; its knowledge graph forms from its
          memories.
        </p>
      </section>
    )
  // The agent's entities to start from; a failing API shows the route's error state.
  const first = await searchEntities(agentId, '', null)
  if (!first.ok) throw new Error(first.message)
  return (
    <section aria-labelledby="graph-heading">
      {header}
      {first.value.totalCount === 0 ? (
        <p className="empty" data-testid="graph-empty">
          This agent’s knowledge graph is empty: entities and relationships form from its memories (or an
          operator adds them with createGraphEntity and createGraphRelationship).
        </p>
      ) : (
        <GraphExplorer key={agentId} agentId={agentId} entities={first.value.matches.map((m) => m.entity)} />
      )}
    </section>
  )
}

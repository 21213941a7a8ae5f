import Link from 'next/link'
import { AgentSelect } from '../../../components/agent-select'
import { gql, listAgents } from '../../../lib/api'
import { formatCount, relativeTime } from '../../../lib/format'

export const dynamic = 'force-dynamic'

interface SessionRow {
  agentId: string
  conversationId: string
  messageCount: number
  updatedAt: string
}

export default async function SessionsPage({ searchParams }: { searchParams: Promise<{ agent?: string }> }) {
  const { agent } = await searchParams
  const agents = await listAgents()
  const agentId = agent && agents.some((a) => a.id === agent) ? agent : null
  const { sessions } = await gql<{ sessions: { totalCount: number; edges: { node: SessionRow }[] } }>(
    `query($a: ID) { sessions(agentId: $a, first: 200) { ... on QuerySessionsConnection { totalCount edges { node { agentId conversationId messageCount updatedAt } } } } }`,
    { a: agentId },
  )
  const now = new Date()
  return (
    <section aria-labelledby="sessions-heading">
      <header className="page-header">
        <h1 id="sessions-heading">Sessions</h1>
        <AgentSelect agents={agents} value={agentId} />
      </header>
      {sessions.edges.length === 0 ? (
        <p className="empty">No conversations yet. They appear when an agent calls addMessage.</p>
      ) : (
        <table className="data" aria-label="Conversations">
          <thead>
            <tr>
              <th scope="col">Agent</th>
              <th scope="col">Conversation</th>
              <th scope="col">Messages</th>
              <th scope="col">Last activity</th>
            </tr>
          </thead>
          <tbody>
            {sessions.edges.map(({ node }) => (
              <tr key={`${node.agentId}/${node.conversationId}`}>
                <td>{node.agentId}</td>
                <td>
                  <Link
                    href={`/sessions/${encodeURIComponent(node.agentId)}/${encodeURIComponent(node.conversationId)}`}
                  >
                    {node.conversationId}
                  </Link>
                </td>
                <td>{formatCount(node.messageCount)}</td>
                <td>{relativeTime(node.updatedAt, now)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {sessions.totalCount > sessions.edges.length && (
        <p className="muted">
          Showing the {sessions.edges.length} most recent of {sessions.totalCount}.
        </p>
      )}
    </section>
  )
}

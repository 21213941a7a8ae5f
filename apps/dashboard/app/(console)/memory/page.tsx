import { AgentSelect } from '../../../components/agent-select'
import { RelevanceHistogram } from '../../../components/relevance-histogram'
import { gql, listAgents } from '../../../lib/api'
import { formatCount } from '../../../lib/format'
import { type Suggestion, Suggestions } from './suggestions'

export const dynamic = 'force-dynamic'

interface Entry {
  id: string
  type: 'SHORT_TERM' | 'LONG_TERM'
  role: string
  content: string
  tokenCount: number
  relevance: number
  isCompressed: boolean
}

export default async function MemoryPage({
  searchParams,
}: {
  searchParams: Promise<{ agent?: string; tier?: string }>
}) {
  const { agent, tier } = await searchParams
  const agents = await listAgents()
  const agentId = agent && agents.some((a) => a.id === agent) ? agent : (agents[0]?.id ?? null)
  if (!agentId) return <p className="empty">No agents yet: create one on the API keys page.</p>
  const type = tier === 'LONG_TERM' || tier === 'SHORT_TERM' ? tier : null
  const data = await gql<{
    memoryEntries: { edges: { node: Entry }[] }
    analyzeMemory: {
      scores: { entryId: string; relevance: number }[]
      actions: Omit<Suggestion, 'preview'>[]
    }
  }>(
    `query($a: ID, $f: MemoryEntryFilter) {
      memoryEntries(agentId: $a, filter: $f, first: 200) { ... on QueryMemoryEntriesConnection { edges { node { id type role content tokenCount relevance isCompressed } } } }
      analyzeMemory(agentId: $a) { ... on MemoryAnalysis { scores { entryId relevance } actions { entryId action relevance reason } } }
    }`,
    { a: agentId, f: type ? { type } : null },
  )
  const entries = data.memoryEntries.edges.map((e) => e.node)
  const scores = data.analyzeMemory.scores
  const buckets = Array.from({ length: 10 }, (_, i) => ({
    range: `${(i / 10).toFixed(1)}–${((i + 1) / 10).toFixed(1)}`,
    count: scores.filter((s) => Math.min(9, Math.floor(s.relevance * 10)) === i).length,
  }))
  const byId = new Map(entries.map((e) => [e.id, e]))
  const suggestions: Suggestion[] = data.analyzeMemory.actions.map((a) => ({
    ...a,
    preview: (byId.get(a.entryId)?.content ?? '').slice(0, 80),
  }))
  const tiers = [
    ['', 'All tiers'],
    ['SHORT_TERM', 'Short-term'],
    ['LONG_TERM', 'Long-term'],
  ] as const
  return (
    <section aria-labelledby="memory-heading">
      <header className="page-header">
        <h1 id="memory-heading">Memory</h1>
        <AgentSelect agents={agents} value={agentId} allowAll={false} />
      </header>
      <RelevanceHistogram buckets={buckets} />
      <h2>Suggestions from the analyzer</h2>
      <Suggestions agentId={agentId} suggestions={suggestions} />
      <h2>Entries</h2>
      <nav className="tabs" aria-label="Tier">
        {tiers.map(([value, label]) => (
          <a
            key={value}
            href={`/memory?agent=${encodeURIComponent(agentId)}${value ? `&tier=${value}` : ''}`}
            aria-current={(type ?? '') === value ? 'page' : undefined}
          >
            {label}
          </a>
        ))}
      </nav>
      {entries.length === 0 ? (
        <p className="empty">
          No entries in this tier. Messages become short-term entries; the optimizer promotes the important
          ones.
        </p>
      ) : (
        <table className="data" aria-label="Memory entries">
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Tier</th>
              <th scope="col">Role</th>
              <th scope="col">Content</th>
              <th scope="col">Tokens</th>
              <th scope="col">Relevance</th>
            </tr>
          </thead>
          <tbody>
            {entries.map((e) => (
              <tr key={e.id}>
                <td>{e.id}</td>
                <td>{e.type === 'LONG_TERM' ? 'long-term' : 'short-term'}</td>
                <td>{e.role.toLowerCase()}</td>
                <td className="value-cell">
                  {e.isCompressed && <span className="tag warn">compressed</span>} {e.content.slice(0, 160)}
                </td>
                <td>{formatCount(e.tokenCount)}</td>
                <td>
                  <span className="bar" role="img" aria-label={`relevance ${e.relevance.toFixed(2)}`}>
                    <span className="bar-fill" style={{ width: `${Math.round(e.relevance * 100)}%` }} />
                  </span>{' '}
                  {e.relevance.toFixed(2)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}

import Link from 'next/link'
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

/** Rows per page of the entries table. */
const PAGE_SIZE = 25
/** Entries read per agent: the table pages through these, newest first. */
const MAX_ENTRIES_PER_AGENT = 200

interface AgentEntry extends Entry {
  agentId: string
  timestamp: string
}

export default async function MemoryPage({
  searchParams,
}: {
  searchParams: Promise<{ agent?: string; tier?: string; page?: string }>
}) {
  const { agent, tier, page: rawPage } = await searchParams
  const agents = await listAgents()
  if (agents.length === 0) return <p className="empty">No agents yet: create one on the API keys page.</p>
  // Like the other pages, all agents unless one is chosen.
  const agentId = agent && agents.some((a) => a.id === agent) ? agent : null
  const type = tier === 'LONG_TERM' || tier === 'SHORT_TERM' ? tier : null
  const shown = agentId ? [agentId] : agents.map((a) => a.id)
  const perAgent = await Promise.all(
    shown.map((id) =>
      gql<{
        memoryEntries: { edges: { node: Entry & { timestamp: string } }[] }
        analyzeMemory: {
          scores: { entryId: string; relevance: number }[]
          actions: Omit<Suggestion, 'preview'>[]
        }
      }>(
        `query($a: ID, $f: MemoryEntryFilter, $n: Int) {
          memoryEntries(agentId: $a, filter: $f, first: $n) { ... on QueryMemoryEntriesConnection { edges { node { id type role content tokenCount relevance isCompressed timestamp } } } }
          analyzeMemory(agentId: $a) { ... on MemoryAnalysis { scores { entryId relevance } actions { entryId action relevance reason } } }
        }`,
        { a: id, f: type ? { type } : null, n: MAX_ENTRIES_PER_AGENT },
      ).then((data) => ({ agentId: id, data })),
    ),
  )
  const entries: AgentEntry[] = perAgent
    .flatMap(({ agentId: id, data }) => data.memoryEntries.edges.map((e) => ({ ...e.node, agentId: id })))
    .sort((a, b) => b.timestamp.localeCompare(a.timestamp) || Number(b.id) - Number(a.id))
  const scores = perAgent.flatMap(({ data }) => data.analyzeMemory.scores)
  const buckets = Array.from({ length: 10 }, (_, i) => ({
    range: `${(i / 10).toFixed(1)}–${((i + 1) / 10).toFixed(1)}`,
    count: scores.filter((s) => Math.min(9, Math.floor(s.relevance * 10)) === i).length,
  }))
  const byId = new Map(entries.map((e) => [e.id, e]))
  const suggestions: Suggestion[] = agentId
    ? (perAgent[0]?.data.analyzeMemory.actions ?? []).map((a) => ({
        ...a,
        preview: (byId.get(a.entryId)?.content ?? '').slice(0, 80),
      }))
    : []
  const pages = Math.max(1, Math.ceil(entries.length / PAGE_SIZE))
  const page = Math.min(pages, Math.max(1, Number.parseInt(rawPage ?? '1', 10) || 1))
  const rows = entries.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE)
  const link = (changes: { tier?: string | null; page?: number }) => {
    const next = new URLSearchParams()
    if (agentId) next.set('agent', agentId)
    const nextTier = changes.tier === undefined ? type : changes.tier
    if (nextTier) next.set('tier', nextTier)
    if (changes.page && changes.page > 1) next.set('page', String(changes.page))
    const query = next.toString()
    return `/memory${query ? `?${query}` : ''}`
  }
  const tiers = [
    ['', 'All tiers'],
    ['SHORT_TERM', 'Short-term'],
    ['LONG_TERM', 'Long-term'],
  ] as const
  return (
    <section aria-labelledby="memory-heading">
      <header className="page-header">
        <h1 id="memory-heading">Memory</h1>
        <AgentSelect agents={agents} value={agentId} />
      </header>
      <RelevanceHistogram buckets={buckets} />
      <h2>Suggestions from the analyzer</h2>
      {agentId ? (
        <Suggestions agentId={agentId} suggestions={suggestions} />
      ) : (
        <p className="muted">Choose one agent to see and apply the analyzer&apos;s suggestions.</p>
      )}
      <h2>Entries</h2>
      <nav className="tabs" aria-label="Tier">
        {tiers.map(([value, label]) => (
          <a
            key={value}
            href={link({ tier: value || null, page: 1 })}
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
        <>
          <p className="muted" data-testid="entry-count">
            {entries.length} {entries.length === 1 ? 'entry' : 'entries'} · page {page} of {pages}
          </p>
          <table className="data" aria-label="Memory entries">
            <thead>
              <tr>
                <th scope="col">#</th>
                {!agentId && <th scope="col">Agent</th>}
                <th scope="col">Tier</th>
                <th scope="col">Role</th>
                <th scope="col">Content</th>
                <th scope="col">Tokens</th>
                <th scope="col">Relevance</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((e) => (
                <tr key={`${e.agentId}:${e.id}`}>
                  <td>{e.id}</td>
                  {!agentId && <td>{e.agentId}</td>}
                  <td>{e.type === 'LONG_TERM' ? 'long-term' : 'short-term'}</td>
                  <td>{e.role.toLowerCase()}</td>
                  {/* One line cut with an ellipsis; the full text on hover. */}
                  <td className="value-cell clip-cell" title={e.content}>
                    <span className="clip" data-testid="entry-content">
                      {e.isCompressed && <span className="tag warn">compressed</span>} {e.content}
                    </span>
                  </td>
                  <td title={`${e.tokenCount} ${e.tokenCount === 1 ? 'token' : 'tokens'}`}>
                    {formatCount(e.tokenCount)}
                  </td>
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
          <nav className="pager" aria-label="Pages">
            {page > 1 ? <Link href={link({ page: page - 1 })}>← Previous</Link> : <span />}
            <span>
              Page {page} of {pages}
            </span>
            {page < pages ? <Link href={link({ page: page + 1 })}>Next →</Link> : <span />}
          </nav>
        </>
      )}
    </section>
  )
}

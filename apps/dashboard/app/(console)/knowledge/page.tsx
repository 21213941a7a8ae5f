import Link from 'next/link'
import { AgentSelect } from '../../../components/agent-select'
import { LabelledSelect } from '../../../components/form-fields'
import { gql, listAgents } from '../../../lib/api'
import { CATEGORY_LABELS, CreateKnowledgeForm, type KnowledgeRow, KnowledgeTable } from './knowledge-table'

export const dynamic = 'force-dynamic'
const PAGE_SIZE = 25
const SORTS = {
  CONFIDENCE: 'Confidence',
  LAST_USED: 'Last used',
  USES: 'Uses',
  UPDATED: 'Last changed',
} as const

type Search = { agent?: string; category?: string; q?: string; sort?: string; page?: string }

export default async function KnowledgePage({ searchParams }: { searchParams: Promise<Search> }) {
  const params = await searchParams
  const agents = await listAgents()
  const agentId = params.agent && agents.some((a) => a.id === params.agent) ? params.agent : null
  const category = params.category && params.category in CATEGORY_LABELS ? params.category : null
  const sort = params.sort && params.sort in SORTS ? params.sort : 'CONFIDENCE'
  const page = Math.max(1, Number.parseInt(params.page ?? '1', 10) || 1)
  const after =
    page > 1 ? Buffer.from(`OffsetConnection:${(page - 1) * PAGE_SIZE - 1}`).toString('base64') : null
  const { knowledge } = await gql<{
    knowledge: { totalCount: number; edges: { node: KnowledgeRow }[]; message?: string }
  }>(
    `query($a: ID, $f: KnowledgeFilter, $o: KnowledgeOrder, $first: Int, $after: String) {
      knowledge(agentId: $a, filter: $f, orderBy: $o, first: $first, after: $after) {
        ... on QueryKnowledgeConnection { totalCount edges { node { id agentId category key value confidence useCount storeCount lastUsedAt nextDecayAt prunedAtNextDecay } } }
        ... on Error { message }
      }
    }`,
    { a: agentId, f: { category, search: params.q || null }, o: sort, first: PAGE_SIZE, after },
  )
  const pages = Math.max(1, Math.ceil(knowledge.totalCount / PAGE_SIZE))
  const link = (changes: Partial<Search>) => {
    const next = new URLSearchParams(
      Object.entries({ ...params, ...changes }).filter(([, v]) => v) as [string, string][],
    )
    return `/knowledge?${next.toString()}`
  }
  return (
    <section aria-labelledby="knowledge-heading">
      <header className="page-header">
        <h1 id="knowledge-heading">Knowledge</h1>
        <AgentSelect agents={agents} value={agentId} />
      </header>
      {agents.length > 0 && <CreateKnowledgeForm agents={agents.map((a) => a.id)} defaultAgent={agentId} />}
      <form className="filters" aria-label="Filter knowledge">
        {agentId && <input type="hidden" name="agent" value={agentId} />}
        <label>
          Category
          <select name="category" defaultValue={category ?? ''}>
            <option value="">All categories</option>
            {Object.entries(CATEGORY_LABELS).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Search
          <input name="q" type="search" defaultValue={params.q ?? ''} placeholder="key or value" />
        </label>
        <LabelledSelect label="Sort by" name="sort" labels={SORTS} defaultValue={sort} />
        <button type="submit">Apply</button>
      </form>
      <p className="muted" data-testid="knowledge-count">
        {knowledge.totalCount} facts
      </p>
      <KnowledgeTable rows={knowledge.edges.map((e) => e.node)} now={new Date().toISOString()} />
      <nav className="pager" aria-label="Pages">
        {page > 1 ? <Link href={link({ page: String(page - 1) })}>← Previous</Link> : <span />}
        <span>
          Page {page} of {pages}
        </span>
        {page < pages ? <Link href={link({ page: String(page + 1) })}>Next →</Link> : <span />}
      </nav>
    </section>
  )
}

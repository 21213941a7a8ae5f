import Link from 'next/link'
import { AgentSelect } from '../../../components/agent-select'
import { LabelledSelect } from '../../../components/form-fields'
import { MemoryCategoryChart } from '../../../components/memory-category-chart'
import { type ErrorPayload, gql, listAgents } from '../../../lib/api'
import { formatBytes, formatPercent, parseUtcDateTime } from '../../../lib/format'
import {
  EMBEDDING_PROGRESS_FIELDS,
  type EmbeddingProgress,
  MEMORY_CATEGORY_LABELS,
  MEMORY_ORDERS,
  MEMORY_ROW_FIELDS,
  type MemoryRow,
  parseTags,
} from '../../../lib/memories'
import { EmbeddingPanel } from './embedding-panel'
import { CreateMemoryForm, MemoryTable } from './memory-table'
import { SearchPanel } from './search-panel'
import { TransferPanel } from './transfer-panel'

export const dynamic = 'force-dynamic'
const PAGE_SIZE = 20

type Search = {
  agent?: string
  category?: string
  tag?: string
  min?: string
  q?: string
  superseded?: string
  asOf?: string
  sort?: string
  page?: string
  /** One memory by id, whatever page it would be on (the graph explorer's source links land here). */
  id?: string
}

interface Stats {
  total: number
  current: number
  superseded: number
  pinned: number
  storageBytes: number
  vectorBytes: number
  embeddingModel: string
  embedded: number
  embeddingCoverage: number
  byCategory: { category: string; count: number }[]
  coverage: { kind: string; total: number; embedded: number; queued: number; failed: number }[]
}

type Connection = { totalCount: number; edges: { node: MemoryRow }[] }

export default async function MemoriesPage({ searchParams }: { searchParams: Promise<Search> }) {
  const params = await searchParams
  const agents = await listAgents()
  const agentId =
    params.agent && agents.some((a) => a.id === params.agent) ? params.agent : (agents[0]?.id ?? null)
  if (!agentId)
    return (
      <section aria-labelledby="memories-heading">
        <h1 id="memories-heading">Memories</h1>
        <p className="empty">
          No agents yet: create one with a key on the API keys page, then store memories with createMemory or
          rememberThis.
        </p>
      </section>
    )

  // List filters, sort and page.
  const category = params.category && params.category in MEMORY_CATEGORY_LABELS ? params.category : null
  const tags = parseTags(params.tag ?? '')
  const sort = params.sort && params.sort in MEMORY_ORDERS ? params.sort : 'NEWEST'
  const includeSuperseded = params.superseded === '1'
  const page = Math.max(1, Number.parseInt(params.page ?? '1', 10) || 1)
  const after =
    page > 1 ? Buffer.from(`OffsetConnection:${(page - 1) * PAGE_SIZE - 1}`).toString('base64') : null
  const filterErrors: string[] = []
  const minImportance = params.min?.trim() ? Number(params.min) : null
  if (minImportance !== null && !Number.isFinite(minImportance))
    filterErrors.push('Min importance must be a number between 0 and 1.')
  const asOf = parseUtcDateTime(params.asOf)
  if (asOf === undefined) filterErrors.push('As of must be a date and time.')

  const onlyId = params.id?.trim() || null

  const [overview, list, one] = await Promise.all([
    gql<{ memoryStats: Stats & ErrorPayload; embeddingStatus: EmbeddingProgress }>(
      `query($a: ID) {
        memoryStats(agentId: $a) { __typename ... on MemoryStats { total current superseded pinned storageBytes vectorBytes embeddingModel embedded embeddingCoverage byCategory { category count } coverage { kind total embedded queued failed } } ... on Error { message } }
        embeddingStatus { ${EMBEDDING_PROGRESS_FIELDS} }
      }`,
      { a: agentId },
    ),
    filterErrors.length || onlyId
      ? null
      : gql<{ memories: Connection & ErrorPayload }>(
          `query($a: ID, $f: MemoryFilterInput, $o: MemoryOrder, $first: Int, $after: String) {
            memories(agentId: $a, filter: $f, orderBy: $o, first: $first, after: $after) {
              __typename
              ... on QueryMemoriesConnection { totalCount edges { node { ${MEMORY_ROW_FIELDS} } } }
              ... on Error { message }
            }
          }`,
          {
            a: agentId,
            f: {
              categories: category ? [category] : null,
              tags: tags.length ? tags : null,
              minImportance,
              search: params.q?.trim() || null,
              includeSuperseded,
              asOf: asOf?.toISOString() ?? null,
            },
            o: sort,
            first: PAGE_SIZE,
            after,
          },
        ),
    onlyId
      ? gql<{ memory: MemoryRow & ErrorPayload }>(
          `query($a: ID, $id: ID!) {
            memory(agentId: $a, id: $id) { __typename ... on MemoryItem { ${MEMORY_ROW_FIELDS} } ... on Error { message } }
          }`,
          { a: agentId, id: onlyId },
        )
      : null,
  ])
  const stats = overview.memoryStats
  if (stats.__typename !== 'MemoryStats') throw new Error(stats.message ?? 'memoryStats failed')
  const memories = list?.memories
  if (memories && memories.__typename !== 'QueryMemoriesConnection')
    filterErrors.push(memories.message ?? 'The filters were refused.')
  // One memory asked by id: it alone (superseded or not), or why it is not there.
  const found = one?.memory.__typename === 'MemoryItem' ? one.memory : null
  if (one && !found) filterErrors.push(`Memory #${onlyId} was not found for this agent (deleted since?).`)
  const rows = found
    ? [found]
    : memories?.__typename === 'QueryMemoriesConnection'
      ? memories.edges.map((e) => e.node)
      : []
  const totalCount = found ? 1 : memories?.__typename === 'QueryMemoriesConnection' ? memories.totalCount : 0
  const pages = Math.max(1, Math.ceil(totalCount / PAGE_SIZE))
  const chartData = stats.byCategory
    .filter((c) => c.count > 0)
    .map((c) => ({ category: MEMORY_CATEGORY_LABELS[c.category] ?? c.category, count: c.count }))

  const link = (changes: Partial<Search>) => {
    const next = new URLSearchParams()
    for (const [key, value] of Object.entries({ ...params, agent: agentId, ...changes }))
      if (value) next.set(key, value)
    return `/memories?${next.toString()}`
  }

  return (
    <section aria-labelledby="memories-heading">
      <header className="page-header">
        <h1 id="memories-heading">Memories</h1>
        <AgentSelect agents={agents} value={agentId} allowAll={false} />
      </header>

      <div className="stats-layout">
        <section className="cards" aria-label="Memory statistics">
          <div className="card stat">
            <span className="muted">Current</span>
            <strong data-testid="stat-current">{stats.current}</strong>
          </div>
          <div className="card stat">
            <span className="muted">Superseded or expired</span>
            <strong data-testid="stat-superseded">{stats.superseded}</strong>
          </div>
          <div className="card stat">
            <span className="muted">Pinned</span>
            <strong data-testid="stat-pinned">{stats.pinned}</strong>
          </div>
          <div className="card stat">
            <span className="muted">Storage</span>
            <strong data-testid="stat-storage">{formatBytes(stats.storageBytes)}</strong>
            <span className="muted">{formatBytes(stats.vectorBytes)} of it vectors</span>
          </div>
          <div className="card stat">
            <span className="muted">Embedding coverage</span>
            <strong data-testid="stat-coverage">{formatPercent(stats.embeddingCoverage)}</strong>
            <span className="muted">
              {stats.embedded} of {stats.total} memories
            </span>
          </div>
        </section>
        {chartData.length > 0 ? (
          <MemoryCategoryChart data={chartData} />
        ) : (
          <p className="empty">No current memories to chart yet: add one below or import an export.</p>
        )}
      </div>

      <SearchPanel key={`search-${agentId}`} agentId={agentId} />

      <CreateMemoryForm key={agentId} agentId={agentId} />

      <h2>All memories</h2>
      <form className="filters" aria-label="Filter memories">
        <input type="hidden" name="agent" value={agentId} />
        <label>
          Category
          <select name="category" defaultValue={category ?? ''}>
            <option value="">All categories</option>
            {Object.entries(MEMORY_CATEGORY_LABELS).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Tag
          <input name="tag" defaultValue={params.tag ?? ''} placeholder="ui, editor" />
        </label>
        <label>
          Min importance
          <input
            name="min"
            inputMode="decimal"
            defaultValue={params.min ?? ''}
            placeholder="0.0–1.0"
            size={8}
          />
        </label>
        <label>
          Text
          <input name="q" type="search" defaultValue={params.q ?? ''} placeholder="part of the content" />
        </label>
        <label className="inline-field">
          <input type="checkbox" name="superseded" value="1" defaultChecked={includeSuperseded} />
          Include superseded
        </label>
        <label>
          As of (UTC)
          <input name="asOf" type="datetime-local" defaultValue={params.asOf ?? ''} />
        </label>
        <LabelledSelect label="Sort by" name="sort" labels={MEMORY_ORDERS} defaultValue={sort} />
        <button type="submit">Apply</button>
      </form>
      {filterErrors.map((error) => (
        <p key={error} className="field-error" role="alert">
          {error}
        </p>
      ))}
      {onlyId && (
        <p className="notice" role="status" data-testid="memory-by-id">
          Showing memory #{onlyId} only.{' '}
          <Link href={link({ id: undefined, page: undefined })}>Show all memories</Link>
        </p>
      )}
      <p className="muted" data-testid="memory-count">
        {totalCount} {totalCount === 1 ? 'memory' : 'memories'}
        {includeSuperseded ? ' (superseded included)' : ''} · page {page} of {pages}
      </p>
      {rows.length > 0 ? (
        <MemoryTable rows={rows} now={new Date().toISOString()} />
      ) : stats.total === 0 ? (
        <p className="empty">
          No memories yet. Add one above, import an export below, or let the agent call createMemory or
          rememberThis.
        </p>
      ) : filterErrors.length === 0 ? (
        <p className="empty">
          No memories match these filters. Clear them, or tick “Include superseded” to see replaced ones.
        </p>
      ) : null}
      <nav className="pager" aria-label="Pages">
        {page > 1 ? <Link href={link({ page: String(page - 1) })}>← Previous</Link> : <span />}
        <span>
          Page {page} of {pages}
        </span>
        {page < pages ? <Link href={link({ page: String(page + 1) })}>Next →</Link> : <span />}
      </nav>

      <EmbeddingPanel
        key={`embedding-${agentId}`}
        agentId={agentId}
        coverage={stats.coverage}
        initialProgress={overview.embeddingStatus}
      />
      <TransferPanel key={`transfer-${agentId}`} agentId={agentId} />
    </section>
  )
}

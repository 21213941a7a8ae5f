import Link from 'next/link'
import { AgentSelect } from '../../../components/agent-select'
import { listAgents } from '../../../lib/api'
import { formatCount } from '../../../lib/format'
import { domainHref, RUN_STATUS_LABELS, type RunFilter } from '../../../lib/runs'
import { readRunDomains, readRuns } from './actions'
import { RunsTable } from './runs-table'

export const dynamic = 'force-dynamic'

type Search = { agent?: string; domain?: string; status?: string; session?: string; scope?: string }

/** A filter field from the URL: trimmed, empty as "not filtered". */
const given = (value: string | undefined) => value?.trim() || null

export default async function RunsPage({ searchParams }: { searchParams: Promise<Search> }) {
  const params = await searchParams
  const agents = await listAgents()
  const agentId =
    params.agent && agents.some((a) => a.id === params.agent) ? params.agent : (agents[0]?.id ?? null)
  const header = (
    <header className="page-header">
      <h1 id="runs-heading">Runs</h1>
      {agentId && <AgentSelect agents={agents} value={agentId} allowAll={false} />}
    </header>
  )
  if (!agentId)
    return (
      <section aria-labelledby="runs-heading">
        {header}
        <p className="empty">No agents yet: create one with a key on the API keys page.</p>
      </section>
    )
  const filter: RunFilter = {
    domain: given(params.domain),
    status: params.status && params.status in RUN_STATUS_LABELS ? params.status : null,
    sessionId: given(params.session),
    scope: given(params.scope),
  }
  const [runs, domains] = await Promise.all([readRuns(agentId, filter), readRunDomains(agentId, null)])
  // A filter the API refuses (a malformed session id, say) is shown beside the form; the rest is the
  // route's error state.
  const refused = !runs.ok && runs.issues?.length ? runs : null
  if (!runs.ok && !refused) throw new Error(runs.message)
  if (!domains.ok) throw new Error(domains.message)
  return (
    <section aria-labelledby="runs-heading">
      {header}
      <p className="muted">
        The run registry of an acting agent (a browser, coding or tool-using agent): each run’s goal, where it
        is, its turns and how it ended, with the resumes and forks that continue it.
      </p>
      <form className="filters" aria-label="Filter runs">
        <input type="hidden" name="agent" value={agentId} />
        <label>
          Domain
          <input name="domain" defaultValue={filter.domain ?? ''} placeholder="host or URL" />
        </label>
        <label>
          Status
          <select name="status" defaultValue={filter.status ?? ''}>
            <option value="">Any status</option>
            {Object.entries(RUN_STATUS_LABELS).map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Run session
          <input name="session" defaultValue={filter.sessionId ?? ''} placeholder="session id" />
        </label>
        <label>
          Scope
          <input name="scope" defaultValue={filter.scope ?? ''} placeholder="any scope" />
        </label>
        <button type="submit">Apply</button>{' '}
        <Link href={`/runs?agent=${encodeURIComponent(agentId)}`}>Clear</Link>
      </form>
      {runs.ok ? (
        <>
          <p className="muted" data-testid="runs-count">
            {runs.value.totalCount} {runs.value.totalCount === 1 ? 'run' : 'runs'}
          </p>
          <RunsTable
            // A new filter or agent starts a fresh list and subscription.
            key={JSON.stringify([agentId, filter])}
            agentId={agentId}
            filter={filter}
            initial={runs.value}
            renderedAt={new Date().toISOString()}
          />
        </>
      ) : (
        <div className="field-error" role="alert" data-testid="runs-refused">
          {refused?.message}
          <ul>
            {refused?.issues?.map((issue) => (
              <li key={`${issue.field}:${issue.message}`}>
                {issue.field}: {issue.message}
                {issue.limit ? ` (limit ${issue.limit})` : ''}
              </li>
            ))}
          </ul>
        </div>
      )}

      <h2 id="domains-heading">Domains</h2>
      {domains.value.length === 0 ? (
        <p className="empty" data-testid="domains-empty">
          No trajectory memory yet: it forms as runs end (session history, trajectories, app knowledge and
          selectors per domain).
        </p>
      ) : (
        <table className="data" aria-labelledby="domains-heading">
          <thead>
            <tr>
              <th scope="col">Domain</th>
              <th scope="col">Scope</th>
              <th scope="col">Runs</th>
              <th scope="col">Sessions</th>
              <th scope="col">Trajectories</th>
              <th scope="col">Facts</th>
              <th scope="col">Selectors</th>
            </tr>
          </thead>
          <tbody>
            {domains.value.map((d) => (
              <tr key={`${d.scope}/${d.domain}`} data-testid={`domain-${d.domain}`}>
                <th scope="row">
                  <Link href={domainHref(agentId, d.domain, d.scope)}>{d.domain}</Link>
                </th>
                <td>
                  <code>{d.scope}</code>
                </td>
                <td className="num">{formatCount(d.runs)}</td>
                <td className="num">{formatCount(d.runSessions)}</td>
                <td className="num">{formatCount(d.trajectories)}</td>
                <td className="num">{formatCount(d.facts)}</td>
                <td className="num">{formatCount(d.selectors)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}

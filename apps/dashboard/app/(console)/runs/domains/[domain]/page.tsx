import Link from 'next/link'
import { notFound } from 'next/navigation'
import { AgentSelect } from '../../../../../components/agent-select'
import { listAgents } from '../../../../../lib/api'
import { formatPercent } from '../../../../../lib/format'
import {
  APP_FACT_TYPE_LABELS,
  DEFAULT_SCOPE,
  formatDuration,
  groupFactsByType,
  newestFirst,
  rankSelectorsByElement,
  runHref,
} from '../../../../../lib/runs'
import {
  clearRunMemoryScope,
  deleteMemoryRecord,
  deleteRunDomain,
  readDomainMemory,
  readRunDomains,
} from '../../actions'
import { ConfirmDelete } from '../../confirm-delete'
import { TrajectorySteps } from '../../run-parts'
import { ConfidenceChart } from './confidence-chart'

export const dynamic = 'force-dynamic'

export default async function DomainPage({
  params,
  searchParams,
}: {
  params: Promise<{ domain: string }>
  searchParams: Promise<{ agent?: string; scope?: string }>
}) {
  const domain = decodeURIComponent((await params).domain)
  const query = await searchParams
  const agents = await listAgents()
  const agentId = query.agent && agents.some((a) => a.id === query.agent) ? query.agent : null
  if (!agentId) notFound()
  const scope = query.scope?.trim() || DEFAULT_SCOPE
  const [memory, domains] = await Promise.all([
    readDomainMemory(agentId, domain, scope),
    readRunDomains(agentId, null),
  ])
  if (!memory.ok) throw new Error(memory.message)
  if (!domains.ok) throw new Error(domains.message)
  const { sessions, trajectories, facts, selectors, hints } = memory.value
  // The scopes holding memory for this domain, offered in the scope field (any other can be typed).
  const scopes = [
    ...new Set([DEFAULT_SCOPE, ...domains.value.filter((d) => d.domain === domain).map((d) => d.scope)]),
  ]
  const back = `/runs?agent=${encodeURIComponent(agentId)}`
  const remove = (kind: Parameters<typeof deleteMemoryRecord>[1], id: string) =>
    deleteMemoryRecord.bind(null, agentId, kind, id)

  return (
    <section aria-labelledby="domain-heading">
      <header className="page-header">
        <h1 id="domain-heading">{domain}</h1>
        <AgentSelect agents={agents} value={agentId} allowAll={false} />
      </header>
      <p>
        <Link href={`${back}&domain=${encodeURIComponent(domain)}`}>← Runs on {domain}</Link>
      </p>
      <form className="filters" aria-label="Memory scope">
        <input type="hidden" name="agent" value={agentId} />
        <label>
          Scope
          <input name="scope" list="domain-scopes" defaultValue={scope} />
        </label>
        <datalist id="domain-scopes">
          {scopes.map((s) => (
            <option key={s} value={s} />
          ))}
        </datalist>
        <button type="submit">Show</button>
      </form>

      <h2 id="sessions-heading">Session history</h2>
      {sessions.length === 0 ? (
        <p className="empty">No ended runs in this scope yet (the last few are kept, newest first).</p>
      ) : (
        <table className="data" aria-labelledby="sessions-heading" data-testid="session-history">
          <thead>
            <tr>
              <th scope="col">Ended</th>
              <th scope="col">Goal</th>
              <th scope="col">Result</th>
              <th scope="col">Outcome</th>
              <th scope="col">Final URL</th>
              <th scope="col">Turns</th>
              <th scope="col">Duration</th>
              <th scope="col">Run</th>
            </tr>
          </thead>
          <tbody>
            {newestFirst(sessions).map((s) => (
              <tr key={s.id} data-testid="session-row">
                <td className="nowrap">{s.endedAt.slice(0, 19).replace('T', ' ')}</td>
                <td>{s.goal}</td>
                <td>
                  <span className={s.success ? 'tag ok-tag' : 'tag bad'}>
                    {s.success ? 'success' : 'failure'}
                  </span>
                </td>
                <td className="clip-cell">
                  <span className="clip short-clip" title={s.outcome}>
                    {s.outcome || '—'}
                  </span>
                </td>
                <td className="clip-cell">
                  <span className="clip short-clip" title={s.finalUrl ?? undefined}>
                    {s.finalUrl ?? '—'}
                  </span>
                </td>
                <td className="num">{s.turnsUsed}</td>
                <td className="num">{formatDuration(s.durationMs)}</td>
                <td>{s.runId ? <Link href={runHref(agentId, s.runId)}>{s.runId}</Link> : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <h2 id="trajectories-heading">Trajectories</h2>
      {trajectories.trajectories.length === 0 ? (
        <p className="empty">No trajectories: a run that completes with steps leaves one.</p>
      ) : (
        <ul className="plain-list" aria-labelledby="trajectories-heading">
          {trajectories.trajectories.map((t) => (
            <li key={t.id} className="card" data-testid="trajectory-card" data-trajectory-id={t.id}>
              <details>
                <summary>
                  <strong>{t.goal}</strong>{' '}
                  <span className="muted">
                    {t.stepCount} steps, {t.verifiedCount} verified, {t.turns} turns,{' '}
                    {formatDuration(t.durationMs)}, recorded {t.recordedAt.slice(0, 10)}
                  </span>
                </summary>
                {t.outcome && <p>{t.outcome}</p>}
                <TrajectorySteps steps={t.steps} label={`Steps of ${t.goal}`} />
              </details>
              <p className="actions">
                {t.runId && <Link href={runHref(agentId, t.runId)}>Run {t.runId}</Link>}{' '}
                <ConfirmDelete
                  label={`Delete trajectory ${t.goal}`}
                  what="this trajectory"
                  action={remove('trajectory', t.id)}
                />
              </p>
            </li>
          ))}
        </ul>
      )}
      {trajectories.totalCount > trajectories.trajectories.length && (
        <p className="muted">
          Showing {trajectories.trajectories.length} of {trajectories.totalCount}.
        </p>
      )}

      <h2 id="facts-heading">App knowledge</h2>
      {facts.facts.length === 0 ? (
        <p className="empty">
          No app facts: runs report them when they end (timing, selector, pattern, quirk).
        </p>
      ) : (
        <>
          <ConfidenceChart facts={facts.facts} />
          {groupFactsByType(facts.facts).map((group) => (
            <table
              key={group.type}
              className="data"
              aria-label={`${APP_FACT_TYPE_LABELS[group.type] ?? group.type} facts`}
              data-testid={`facts-${group.type}`}
            >
              <caption>{APP_FACT_TYPE_LABELS[group.type] ?? group.type}</caption>
              <thead>
                <tr>
                  <th scope="col">Key</th>
                  <th scope="col">Value</th>
                  <th scope="col">Confidence</th>
                  <th scope="col" title="Runs that reported it">
                    Sources
                  </th>
                  <th scope="col">Last seen</th>
                  <th scope="col">
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {group.facts.map((f) => (
                  <tr key={f.id} data-testid={`fact-${f.key}`}>
                    <th scope="row">{f.key}</th>
                    <td>{f.value}</td>
                    <td className="num">
                      <span className="bar" aria-hidden="true">
                        <span className="bar-fill" style={{ width: `${Math.round(f.confidence * 100)}%` }} />
                      </span>{' '}
                      <span data-testid="fact-confidence">{f.confidence.toFixed(2)}</span>
                    </td>
                    <td className="num">{f.sources}</td>
                    <td>{f.lastSeenAt.slice(0, 10)}</td>
                    <td>
                      <ConfirmDelete
                        label={`Delete fact ${f.key}`}
                        what="this fact"
                        action={remove('fact', f.id)}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          ))}
        </>
      )}

      <h2 id="selectors-heading">Known selectors</h2>
      {selectors.selectors.length === 0 ? (
        <p className="empty">No selectors: runs report the ones that worked (or failed) when they end.</p>
      ) : (
        <table className="data" aria-labelledby="selectors-heading" data-testid="selectors">
          <thead>
            <tr>
              <th scope="col">Element</th>
              <th scope="col">Rank</th>
              <th scope="col">Selector</th>
              <th scope="col">Successes</th>
              <th scope="col">Failures</th>
              <th scope="col">Success rate</th>
              <th scope="col">
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {rankSelectorsByElement(selectors.selectors).flatMap((group) =>
              group.selectors.map((s, rank) => (
                <tr
                  key={s.id}
                  className={s.knownGood ? undefined : 'greyed'}
                  data-testid="selector-row"
                  data-selector={s.selector}
                  data-known-good={s.knownGood}
                  title={s.knownGood ? undefined : 'Not known-good: not offered to runs'}
                >
                  {rank === 0 ? (
                    <th scope="rowgroup" rowSpan={group.selectors.length}>
                      {group.element}
                    </th>
                  ) : null}
                  <td className="num">{rank + 1}</td>
                  <td>
                    <code>{s.selector}</code>
                    {s.volatile && (
                      <span className="tag warn" title="A snapshot reference: changes between page loads">
                        volatile
                      </span>
                    )}
                    {!s.knownGood && <span className="tag muted-tag">not known-good</span>}
                  </td>
                  <td className="num" data-testid="selector-successes">
                    {s.successCount}
                  </td>
                  <td className="num" data-testid="selector-failures">
                    {s.failureCount}
                  </td>
                  <td className="num">
                    {s.successCount + s.failureCount > 0
                      ? formatPercent(s.successCount / (s.successCount + s.failureCount))
                      : '—'}
                  </td>
                  <td>
                    <ConfirmDelete
                      label={`Delete selector ${s.selector}`}
                      what="this selector entry"
                      action={remove('selector', s.id)}
                    />
                  </td>
                </tr>
              )),
            )}
          </tbody>
        </table>
      )}

      <h2 id="hints-heading">Hints</h2>
      <p className="muted">Cross-domain optimisation hints of the scope, offered to runs on every domain.</p>
      {hints.length === 0 ? (
        <p className="empty">No hints in this scope.</p>
      ) : (
        <ul className="plain-list" aria-labelledby="hints-heading">
          {hints.map((h) => (
            <li key={h.id} data-testid="hint">
              {h.text}{' '}
              <ConfirmDelete label={`Delete hint ${h.text}`} what="this hint" action={remove('hint', h.id)} />
            </li>
          ))}
        </ul>
      )}

      <div className="card">
        <h2>Delete this domain’s memory</h2>
        <p className="muted">
          Deletes the session history, trajectories, app facts and selectors of {domain} in scope {scope}. The
          runs stay in the registry.
        </p>
        <ConfirmDelete
          label={`Delete the memory of ${domain}`}
          what={`the memory of ${domain} in scope ${scope}`}
          action={deleteRunDomain.bind(null, agentId, domain, scope)}
          then={back}
        />
      </div>
      <div className="card">
        <h2>Clear scope {scope}</h2>
        <p className="muted">
          Deletes the memory of every domain in scope {scope} and its hints, as an evaluation starting clean
          would. The runs stay in the registry.
        </p>
        <ConfirmDelete
          label={`Clear scope ${scope}`}
          what={`every domain’s memory and the hints of scope ${scope}`}
          action={clearRunMemoryScope.bind(null, agentId, scope)}
          then={back}
        />
      </div>
    </section>
  )
}

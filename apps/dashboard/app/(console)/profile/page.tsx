import { AgentSelect } from '../../../components/agent-select'
import { LabelledSelect } from '../../../components/form-fields'
import { TimeAgo } from '../../../components/time-ago'
import { type ErrorPayload, gql, listAgents } from '../../../lib/api'
import { formatTokens } from '../../../lib/format'
import {
  NO_USER,
  PROFILE_TRIGGER_LABELS,
  PROFILE_VERSION_FIELDS,
  type ProfileVersion,
  userLabel,
} from '../../../lib/formation'
import { type Override, Overrides } from './overrides'
import { ProfileText } from './profile-text'
import { RegenerateButton } from './regenerate-button'

export const dynamic = 'force-dynamic'

/** Versions listed (and offered for the diff); the API pages by 100 at most. */
const MAX_VERSIONS = 100
/** Memories read to find the agent's users (the API's page size at most). */
const MAX_MEMORIES_FOR_USERS = 200

type Search = { agent?: string; user?: string; from?: string; to?: string }

interface Diff {
  from: number
  to: number
  added: string[]
  removed: string[]
  unchanged: number
}

function versionNumber(raw: string | undefined): number | null {
  const value = Number(raw)
  return raw && Number.isInteger(value) && value > 0 ? value : null
}

export default async function ProfilePage({ searchParams }: { searchParams: Promise<Search> }) {
  const params = await searchParams
  const agents = await listAgents()
  const agentId =
    params.agent && agents.some((a) => a.id === params.agent) ? params.agent : (agents[0]?.id ?? null)
  if (!agentId) return <p className="empty">No agents yet: create one on the API keys page.</p>

  // The users are those the agent's memories name; the profile of memories naming none is always there.
  const { memories } = await gql<{
    memories: ErrorPayload & { edges?: { node: { userId: string | null } }[] }
  }>(
    `query($a: ID, $n: Int) { memories(agentId: $a, first: $n) { __typename ... on QueryMemoriesConnection { edges { node { userId } } } ... on Error { message } } }`,
    { a: agentId, n: MAX_MEMORIES_FOR_USERS },
  )
  const named = [...new Set((memories.edges ?? []).flatMap((e) => (e.node.userId ? [e.node.userId] : [])))]
  // No user chosen: the first user named, else the memories naming none.
  const userId: string | null =
    params.user && params.user !== NO_USER ? params.user : params.user ? null : (named[0] ?? null)
  const users = [...new Set([...named, ...(userId ? [userId] : [])])].sort()
  const scope = { a: agentId, u: userId }

  // Separate requests: together they would pass the API's query cost limit.
  const [profile, page, pinned] = await Promise.all([
    gql<{ userProfile: ErrorPayload & { current?: ProfileVersion | null } }>(
      `query($a: ID, $u: String) { userProfile(agentId: $a, userId: $u) { __typename ... on UserProfile { current { ${PROFILE_VERSION_FIELDS} } } ... on Error { message } } }`,
      scope,
    ),
    gql<{ profileVersions: ErrorPayload & { totalCount?: number; versions?: ProfileVersion[] } }>(
      `query($a: ID, $u: String, $n: Int) { profileVersions(agentId: $a, userId: $u, limit: $n) { __typename ... on ProfileVersionPage { totalCount versions { ${PROFILE_VERSION_FIELDS} } } ... on Error { message } } }`,
      { ...scope, n: MAX_VERSIONS },
    ),
    gql<{ memories: ErrorPayload & { edges?: { node: Override & { userId: string | null } }[] } }>(
      `query($a: ID, $f: MemoryFilterInput, $n: Int) { memories(agentId: $a, filter: $f, first: $n) { __typename ... on QueryMemoriesConnection { edges { node { id content category createdAt userId } } } ... on Error { message } } }`,
      { a: agentId, f: { pinned: true, userId }, n: MAX_MEMORIES_FOR_USERS },
    ),
  ])
  if (profile.userProfile.__typename !== 'UserProfile') throw new Error(profile.userProfile.message)
  if (page.profileVersions.__typename !== 'ProfileVersionPage') throw new Error(page.profileVersions.message)
  const current = profile.userProfile.current ?? null
  const versions = page.profileVersions.versions ?? []
  // Without a user the filter reads every user's pins: the no-user profile's are those naming none.
  const overrides = (pinned.memories.edges ?? []).map((e) => e.node).filter((m) => m.userId === userId)

  // The diff: the two chosen versions, else the two newest.
  const to = versionNumber(params.to) ?? versions[0]?.version ?? null
  const from = versionNumber(params.from) ?? versions.find((v) => v.version < (to ?? 0))?.version ?? null
  let diff: Diff | null = null
  let diffError: string | null = null
  if (from != null && to != null) {
    const { profileDiff } = await gql<{ profileDiff: ErrorPayload & Partial<Diff> }>(
      `query($a: ID, $u: String, $f: Int!, $t: Int!) { profileDiff(agentId: $a, userId: $u, from: $f, to: $t) { __typename ... on ProfileDiff { from to added removed unchanged } ... on Error { message } } }`,
      { ...scope, f: from, t: to },
    )
    if (profileDiff.__typename === 'ProfileDiff') diff = profileDiff as Diff
    else diffError = profileDiff.message ?? 'the diff failed'
  }
  const renderedAt = new Date().toISOString()
  // Number-like keys list in ascending order: the oldest version first.
  const versionLabels = Object.fromEntries(versions.map((v) => [String(v.version), `Version ${v.version}`]))
  const userParam = userId ?? NO_USER

  return (
    <section aria-labelledby="profile-heading">
      <header className="page-header">
        <h1 id="profile-heading">Profile</h1>
        <AgentSelect agents={agents} value={agentId} allowAll={false} />
      </header>
      <form className="filters" aria-label="Choose the user">
        <input type="hidden" name="agent" value={agentId} />
        <label>
          User
          <select name="user" defaultValue={userParam}>
            {users.map((u) => (
              <option key={u} value={u}>
                {u}
              </option>
            ))}
            <option value={NO_USER}>{userLabel(null)}</option>
          </select>
        </label>
        <button type="submit">Show</button>
      </form>

      <section className="card" aria-labelledby="current-heading">
        <h2 id="current-heading">Current profile of {userLabel(userId)}</h2>
        {current ? (
          <>
            <p className="muted" data-testid="current-version">
              Version <strong>{current.version}</strong> ·{' '}
              <TimeAgo date={current.createdAt} renderedAt={renderedAt} /> ·{' '}
              {PROFILE_TRIGGER_LABELS[current.trigger] ?? current.trigger} · written by{' '}
              {current.writer === 'LLM' ? 'the language model' : 'the extractive writer'} ·{' '}
              {formatTokens(current.tokenCount)}
            </p>
            <ProfileText content={current.content} />
          </>
        ) : (
          <p className="empty" data-testid="no-profile">
            No profile yet: it is built once enough memories about the user have formed, or now with
            “Regenerate now”.
          </p>
        )}
        <RegenerateButton agentId={agentId} userId={userId} />
      </section>

      <h2>Versions</h2>
      {versions.length === 0 ? (
        <p className="muted">No versions yet.</p>
      ) : (
        <table className="data" aria-label="Profile versions">
          <thead>
            <tr>
              <th scope="col">Version</th>
              <th scope="col">When</th>
              <th scope="col">Why</th>
              <th scope="col">Written by</th>
              <th scope="col">Tokens</th>
              <th scope="col">Overrides</th>
              <th scope="col">Text</th>
            </tr>
          </thead>
          <tbody>
            {versions.map((v) => (
              <tr key={v.id} data-testid="version-row">
                <td>{v.version}</td>
                <td>
                  <TimeAgo date={v.createdAt} renderedAt={renderedAt} />
                </td>
                <td>{PROFILE_TRIGGER_LABELS[v.trigger] ?? v.trigger}</td>
                <td>{v.writer === 'LLM' ? 'model' : 'extractive'}</td>
                <td className="num">{v.tokenCount}</td>
                <td className="num">{v.overrideIds.length}</td>
                <td>
                  <details>
                    <summary>Show</summary>
                    <ProfileText content={v.content} />
                  </details>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {(page.profileVersions.totalCount ?? 0) > versions.length && (
        <p className="muted">
          The newest {versions.length} of {page.profileVersions.totalCount} versions.
        </p>
      )}

      <h2>Compare versions</h2>
      {versions.length < 2 ? (
        <p className="muted">Two versions are needed to compare.</p>
      ) : (
        <>
          <form className="filters" aria-label="Compare versions">
            <input type="hidden" name="agent" value={agentId} />
            <input type="hidden" name="user" value={userParam} />
            <LabelledSelect label="From" name="from" labels={versionLabels} defaultValue={String(from)} />
            <LabelledSelect label="To" name="to" labels={versionLabels} defaultValue={String(to)} />
            <button type="submit">Compare</button>
          </form>
          {diffError && (
            <p className="field-error" role="alert">
              {diffError}
            </p>
          )}
          {diff && <ProfileDiffView diff={diff} />}
        </>
      )}

      <Overrides
        key={`${agentId}:${userParam}`}
        agentId={agentId}
        userId={userId}
        overrides={overrides}
        inProfile={current?.overrideIds ?? []}
      />
    </section>
  )
}

/** A profile line without its list dash: the diff's own + and − mark it. */
function listItem(line: string): string {
  return line.replace(/^- /, '')
}

function ProfileDiffView({ diff }: { diff: Diff }) {
  return (
    <div className="card" data-testid="profile-diff">
      <p className="muted">
        Version {diff.from} → version {diff.to}: {diff.added.length} added, {diff.removed.length} removed,{' '}
        {diff.unchanged} unchanged.
      </p>
      {diff.added.length + diff.removed.length === 0 ? (
        <p className="muted">The two versions say the same.</p>
      ) : (
        <ul className="diff" aria-label="Changed lines">
          {diff.removed.map((line, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a diff's lines never reorder
            <li key={`-${i}`} className="diff-removed" data-testid="diff-removed">
              <span aria-hidden="true">− </span>
              <span className="sr-only">removed: </span>
              {listItem(line)}
            </li>
          ))}
          {diff.added.map((line, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a diff's lines never reorder
            <li key={`+${i}`} className="diff-added" data-testid="diff-added">
              <span aria-hidden="true">+ </span>
              <span className="sr-only">added: </span>
              {listItem(line)}
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}

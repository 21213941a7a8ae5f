'use client'

import { useActionState } from 'react'
import { FieldError, FormError, LabelledSelect } from '../../../../components/form-fields'
import { MEMORY_CATEGORY_LABELS } from '../../../../lib/memories'
import { syncSummary } from '../../../../lib/pools'
import {
  type ContributeState,
  contributeToPool,
  type QueryPoolState,
  queryPool,
  type SyncState,
  syncPoolToAgent,
} from '../actions'

/** Hits a query shows (the API's default; its maximum is the pool query limit). */
const QUERY_LIMIT = 10

/** The pool's hybrid search, as a member's query runs it; each hit names who contributed it. */
export function QueryPanel({ poolId }: { poolId: string }) {
  const [state, action, pending] = useActionState<QueryPoolState, FormData>(queryPool, {})
  return (
    <section className="card" aria-labelledby="query-heading">
      <h2 id="query-heading">Query the pool</h2>
      <form action={action} className="filters" aria-label="Query the pool" key={state.query ?? ''}>
        <input type="hidden" name="poolId" value={poolId} />
        <input type="hidden" name="limit" value={QUERY_LIMIT} />
        <label>
          Pool query
          <input
            name="query"
            type="search"
            required
            defaultValue={state.query ?? ''}
            placeholder="what to look for"
          />
        </label>
        <button type="submit" disabled={pending}>
          {pending ? 'Searching…' : 'Search pool'}
        </button>
        <FieldError state={state} field="query" />
        <FormError state={state} />
      </form>
      {state.hits &&
        (state.hits.length === 0 ? (
          <p className="empty" data-testid="pool-no-hits">
            Nothing in this pool matched “{state.query}”.
          </p>
        ) : (
          <table className="data" aria-label="Pool query results">
            <thead>
              <tr>
                <th scope="col">Rank</th>
                <th scope="col">Memory</th>
                <th scope="col">Contributor</th>
                <th scope="col">Score</th>
              </tr>
            </thead>
            <tbody>
              {state.hits.map((hit, index) => (
                <tr key={hit.memory.id} data-testid={`pool-hit-${hit.memory.id}`}>
                  <td className="num">{index + 1}</td>
                  <td className="value-cell">{hit.memory.content}</td>
                  <td>{hit.contributorAgentId ?? '—'}</td>
                  <td className="num">{hit.score.toFixed(2)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ))}
    </section>
  )
}

/** Copies the pool's memories into a member's own memories (a second sync stores nothing new). */
export function SyncPanel({ poolId, memberIds }: { poolId: string; memberIds: string[] }) {
  const [state, action, pending] = useActionState<SyncState, FormData>(syncPoolToAgent, {})
  return (
    <section className="card" aria-labelledby="sync-heading">
      <h2 id="sync-heading">Sync to an agent</h2>
      {memberIds.length === 0 ? (
        <p className="muted">Only a member can be synced: add one first.</p>
      ) : (
        <form action={action} className="inline-form" aria-label="Sync the pool to an agent">
          <input type="hidden" name="poolId" value={poolId} />
          <label className="inline-field">
            Member
            <select name="agentId" aria-label="Agent to sync" defaultValue={memberIds[0]}>
              {memberIds.map((id) => (
                <option key={id} value={id}>
                  {id}
                </option>
              ))}
            </select>
          </label>
          <button type="submit" disabled={pending}>
            {pending ? 'Syncing…' : 'Sync'}
          </button>
          <FormError state={state} />
        </form>
      )}
      {state.sync && (
        <p role="status" data-testid="sync-result">
          {syncSummary(state.sync)}
        </p>
      )}
      <p className="muted">
        Each memory goes through the agent’s own verification, as if it had remembered it, and records that it
        came from this pool.
      </p>
    </section>
  )
}

const OUTCOME_TEXT: Record<string, string> = {
  STORED: 'Stored.',
  DUPLICATE: 'Already in the pool: nothing stored.',
  SUPERSEDED: 'Stored; it replaces an older memory of the pool.',
}

/** Adds a memory in a contributor's name, through the same verification as an agent's own. */
export function ContributeForm({ poolId, contributorIds }: { poolId: string; contributorIds: string[] }) {
  const [state, action, pending] = useActionState<ContributeState, FormData>(contributeToPool, {})
  const values = state.values ?? {}
  if (contributorIds.length === 0)
    return (
      <section className="card" aria-labelledby="contribute-heading">
        <h2 id="contribute-heading">Contribute</h2>
        <p className="muted">No contributor: give a member the Contributor role to add memories.</p>
      </section>
    )
  return (
    <section className="card" aria-labelledby="contribute-heading">
      <h2 id="contribute-heading">Contribute</h2>
      <form
        action={action}
        className="form-grid"
        aria-label="Contribute a memory"
        key={JSON.stringify(values)}
      >
        <input type="hidden" name="poolId" value={poolId} />
        <label htmlFor="contribute-agent">Contributor</label>
        <select id="contribute-agent" name="agentId" defaultValue={values.agentId ?? contributorIds[0]}>
          {contributorIds.map((id) => (
            <option key={id} value={id}>
              {id}
            </option>
          ))}
        </select>
        <label htmlFor="contribute-content">Content</label>
        <span>
          <textarea
            id="contribute-content"
            name="content"
            required
            rows={2}
            defaultValue={values.content ?? ''}
          />
          <FieldError state={state} field="content" />
        </span>
        <label htmlFor="contribute-category">Category</label>
        <LabelledSelect
          id="contribute-category"
          name="category"
          labels={MEMORY_CATEGORY_LABELS}
          defaultValue={values.category ?? 'FACT'}
        />
        <label htmlFor="contribute-importance">Importance</label>
        <span>
          <input
            id="contribute-importance"
            name="importance"
            inputMode="decimal"
            placeholder="0.5"
            defaultValue={values.importance ?? ''}
          />
          <FieldError state={state} field="importance" />
        </span>
        <button type="submit" disabled={pending}>
          {pending ? 'Contributing…' : 'Contribute'}
        </button>
        <FormError state={state} />
        {state.outcome && (
          <p className="span-all" role="status" data-testid="contribute-outcome">
            {OUTCOME_TEXT[state.outcome] ?? state.outcome}
          </p>
        )}
      </form>
    </section>
  )
}

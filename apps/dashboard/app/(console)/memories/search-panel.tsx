'use client'

import { useActionState } from 'react'
import { LabelledSelect } from '../../../components/form-fields'
import { SEARCH_SCOPES, SEARCH_STRATEGIES } from '../../../lib/memories'
import { type SearchState, searchMemory } from './actions'
import { SearchResults } from './search-results'

/** Search over the agent's memory with a chosen strategy; each hit shows why it ranked. */
export function SearchPanel({ agentId }: { agentId: string }) {
  const [state, action, pending] = useActionState<SearchState, FormData>(searchMemory, {})
  const scopes = state.scopes ?? ['MEMORIES']
  const strategy = state.strategy ?? 'HYBRID'
  return (
    <section className="card" aria-labelledby="search-heading">
      <h2 id="search-heading">Search</h2>
      {/* React resets a form after its action: the fields take back what was searched. */}
      <form
        action={action}
        className="filters"
        aria-label="Search memory"
        key={JSON.stringify([scopes, strategy])}
      >
        <input type="hidden" name="agentId" value={agentId} />
        <label>
          Search query
          <input
            name="query"
            type="search"
            defaultValue={state.query ?? ''}
            placeholder="what to look for"
            required
          />
        </label>
        <fieldset className="scopes">
          <legend>Scopes</legend>
          {Object.entries(SEARCH_SCOPES).map(([value, label]) => (
            <label key={value} className="inline-field">
              <input type="checkbox" name="scope" value={value} defaultChecked={scopes.includes(value)} />
              {label}
            </label>
          ))}
        </fieldset>
        <LabelledSelect label="Strategy" name="strategy" labels={SEARCH_STRATEGIES} defaultValue={strategy} />
        <button type="submit" disabled={pending}>
          {pending ? 'Searching…' : 'Search'}
        </button>
      </form>
      {state.error && (
        <p className="field-error" role="alert">
          {state.error}
        </p>
      )}
      {state.hits &&
        (state.hits.length > 0 ? (
          <SearchResults agentId={agentId} hits={state.hits} mmrLambda={state.mmrLambda ?? 1} />
        ) : (
          <p className="empty" data-testid="no-hits">
            Nothing matched “{state.query}”. Try the Hybrid or Similarity strategy, or more scopes.
          </p>
        ))}
      {!state.hits && !state.error && (
        <p className="muted">
          Searches count as recalls: each hit&apos;s access count goes up, as when an agent searches.
        </p>
      )}
    </section>
  )
}

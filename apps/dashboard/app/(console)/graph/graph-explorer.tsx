'use client'

import { type FormEvent, useMemo, useState, useTransition } from 'react'
import {
  asOfFromDate,
  type DrawnGraph,
  EMPTY_GRAPH,
  ENTITY_TYPE_COLOURS,
  ENTITY_TYPE_LABELS,
  ENTITY_TYPES,
  type GraphEntity,
  type GraphRelationship,
  knownAtFromField,
  mergeNeighbourhood,
  toElements,
  visibleGraph,
} from '../../../lib/graph'
import { type Answer, type EntityMatch, loadNeighbourhood, loadRelationship, searchEntities } from './actions'
import { GraphCanvas } from './graph-canvas'
import { RelationshipPanel } from './relationship-panel'

const DEPTHS = [1, 2, 3, 4]

/**
 * Search an entity, draw its neighbourhood, expand nodes, filter by type and time, and open an
 * edge to read or correct it. Everything drawn comes from the API's neighbourhood reads; an as-of
 * change or a correction reads every expanded neighbourhood again, so the drawing is what the API
 * answers for that time, never a local guess.
 */
export function GraphExplorer({ agentId, entities }: { agentId: string; entities: GraphEntity[] }) {
  const [query, setQuery] = useState('')
  const [searchType, setSearchType] = useState('')
  const [matches, setMatches] = useState<EntityMatch[]>(entities.map((entity) => ({ entity, score: 1 })))
  const [searched, setSearched] = useState<string | null>(null)
  const [drawn, setDrawn] = useState<DrawnGraph>(EMPTY_GRAPH)
  /** The entities whose neighbourhoods are drawn, the first one first. */
  const [expanded, setExpanded] = useState<string[]>([])
  const [depth, setDepth] = useState(2)
  const [asOfField, setAsOfField] = useState('')
  const [knownAtField, setKnownAtField] = useState('')
  const [shownTypes, setShownTypes] = useState<Set<string>>(new Set(ENTITY_TYPES))
  const [selected, setSelected] = useState<GraphRelationship | null>(null)
  const [error, setError] = useState<string | null>(null)
  const [pending, startTransition] = useTransition()

  const asOf = asOfFromDate(asOfField)
  // System time: the graph as Engram believed it at that instant. A date and time, not a day: an
  // edge is often learnt and retired on the same day, and "before the retirement" is within it.
  const knownAt = knownAtFromField(knownAtField)
  const visible = useMemo(() => visibleGraph(drawn, shownTypes), [drawn, shownTypes])
  const elements = useMemo(() => toElements(visible), [visible])
  const entityNames = new Map(drawn.nodes.map((n) => [n.entity.id, n.entity.name]))

  /** Reads the neighbourhoods of `centres` in order into one drawing; the first refusal stops it. */
  async function readAll(
    centres: string[],
    atDepth: number,
    at: string | null,
    known: string | null,
  ): Promise<DrawnGraph | null> {
    let next = EMPTY_GRAPH
    for (const centre of centres) {
      const answer = await loadNeighbourhood(agentId, centre, atDepth, at, known)
      if (!answer.ok) {
        setError(answer.message)
        return null
      }
      next = mergeNeighbourhood(next, answer.value)
    }
    setError(null)
    return next
  }

  function redraw(centres: string[], atDepth = depth, at = asOf, known = knownAt) {
    if (at === undefined) {
      setError('As of must be a date.')
      return
    }
    if (known === undefined) {
      setError('Known at must be a date and time.')
      return
    }
    startTransition(async () => {
      const next = await readAll(centres, atDepth, at, known)
      if (!next) return
      setDrawn(next)
      setExpanded(centres)
    })
  }

  function search(event: FormEvent) {
    event.preventDefault()
    startTransition(async () => {
      const answer: Answer<{ totalCount: number; matches: EntityMatch[] }> = await searchEntities(
        agentId,
        query,
        searchType || null,
      )
      if (!answer.ok) {
        setError(answer.message)
        return
      }
      setError(null)
      setMatches(answer.value.matches)
      setSearched(query.trim() || null)
    })
  }

  function expand(entityId: string) {
    if (expanded.includes(entityId)) return
    redraw([...expanded, entityId])
  }

  async function showRelationship(id: string) {
    const answer = await loadRelationship(agentId, id)
    if (!answer.ok) setError(answer.message)
    else setSelected(answer.value)
  }

  const toggleType = (type: string) =>
    setShownTypes((current) => {
      const next = new Set(current)
      if (next.has(type)) next.delete(type)
      else next.add(type)
      return next
    })

  const canvasLabel = `Knowledge graph: ${visible.nodes.length} entities and ${visible.relationships.length} relationships drawn`

  return (
    <div className="graph-explorer" aria-busy={pending}>
      <form className="filters" aria-label="Search entities" onSubmit={search}>
        <label>
          Entity
          <input
            type="search"
            name="name"
            value={query}
            maxLength={200}
            placeholder="a name or alias"
            onChange={(event) => setQuery(event.target.value)}
          />
        </label>
        <label>
          Type
          <select name="type" value={searchType} onChange={(event) => setSearchType(event.target.value)}>
            <option value="">Any type</option>
            {ENTITY_TYPES.map((type) => (
              <option key={type} value={type}>
                {ENTITY_TYPE_LABELS[type]}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={pending}>
          Search
        </button>
      </form>

      <section aria-label="Matching entities" className="graph-matches">
        <h2>{searched ? `Entities matching “${searched}”` : 'Entities'}</h2>
        {matches.length === 0 ? (
          <p className="empty" data-testid="graph-no-match">
            No entity matches{searched ? ` “${searched}”` : ''}.
          </p>
        ) : (
          <ul className="chips">
            {matches.map(({ entity }) => (
              <li key={entity.id}>
                <button
                  type="button"
                  className="secondary"
                  disabled={pending}
                  aria-label={`Draw ${entity.name} (${ENTITY_TYPE_LABELS[entity.type] ?? entity.type})`}
                  onClick={() => redraw([entity.id])}
                >
                  <span className="swatch" style={{ background: ENTITY_TYPE_COLOURS[entity.type] }} />
                  {entity.name}
                  <span className="muted"> · {ENTITY_TYPE_LABELS[entity.type] ?? entity.type}</span>
                </button>
              </li>
            ))}
          </ul>
        )}
      </section>

      <form className="filters" aria-label="Graph filters" onSubmit={(event) => event.preventDefault()}>
        <fieldset className="type-filter">
          <legend>Entity types shown</legend>
          {ENTITY_TYPES.map((type) => (
            <label key={type}>
              <input type="checkbox" checked={shownTypes.has(type)} onChange={() => toggleType(type)} />
              <span className="swatch" style={{ background: ENTITY_TYPE_COLOURS[type] }} />
              {ENTITY_TYPE_LABELS[type]}
            </label>
          ))}
        </fieldset>
        <label>
          As of
          <input
            type="date"
            name="asOf"
            value={asOfField}
            aria-describedby="as-of-help"
            onChange={(event) => {
              setAsOfField(event.target.value)
              const at = asOfFromDate(event.target.value)
              if (expanded.length && at !== undefined) redraw(expanded, depth, at)
            }}
          />
        </label>
        <span id="as-of-help" className="muted">
          What was true at the end of that day (empty: now).
        </span>
        <label>
          Known at
          <input
            type="datetime-local"
            step={1}
            name="knownAt"
            value={knownAtField}
            aria-describedby="known-at-help"
            onChange={(event) => {
              setKnownAtField(event.target.value)
              const known = knownAtFromField(event.target.value)
              if (expanded.length && known !== undefined) redraw(expanded, depth, asOf, known)
            }}
          />
        </label>
        <span id="known-at-help" className="muted">
          As Engram believed it at that time (UTC), before later retirements (empty: now).
        </span>
        <label>
          Depth
          <select
            name="depth"
            value={depth}
            onChange={(event) => {
              const next = Number(event.target.value)
              setDepth(next)
              if (expanded.length) redraw(expanded, next)
            }}
          >
            {DEPTHS.map((d) => (
              <option key={d} value={d}>
                {d} {d === 1 ? 'hop' : 'hops'}
              </option>
            ))}
          </select>
        </label>
      </form>

      {error && (
        <p className="field-error" role="alert" data-testid="graph-error">
          {error}
        </p>
      )}
      {drawn.truncations.map((message) => (
        <p key={message} className="notice graph-truncation" role="status" data-testid="graph-truncation">
          Not everything is drawn: {message}
        </p>
      ))}

      {expanded.length === 0 ? (
        <p className="empty" data-testid="graph-start">
          Choose an entity above to draw its neighbourhood; then click a node to expand it and an edge to
          read, correct or retire it.
        </p>
      ) : (
        <div className="graph-layout">
          <div className="graph-stage">
            <GraphCanvas
              elements={elements}
              selectedEdgeId={selected?.id ?? null}
              label={canvasLabel}
              onNodeTap={expand}
              onEdgeTap={(id) => startTransition(() => showRelationship(id))}
            />
            <p className="muted" data-testid="graph-counts">
              {visible.nodes.length} entities · {visible.relationships.length} relationships
              {asOf ? ` · as of ${asOfField}` : ''}
              {/* The instant read, to the second: Chromium's field drops ":00" seconds from its value. */}
              {knownAt ? ` · known at ${knownAt.slice(0, 19)}` : ''}
            </p>
          </div>
          <div className="graph-side">
            <section aria-label="Entities drawn">
              <h2>Entities drawn</h2>
              <ul className="plain-list">
                {visible.nodes.map((node) => (
                  <li key={node.entity.id} data-testid={`graph-node-${node.entity.name}`}>
                    <span className="swatch" style={{ background: ENTITY_TYPE_COLOURS[node.entity.type] }} />
                    {node.entity.name}{' '}
                    <span className="muted">
                      {ENTITY_TYPE_LABELS[node.entity.type] ?? node.entity.type} ·{' '}
                      {node.depth === 0 ? 'start' : `${node.depth} ${node.depth === 1 ? 'hop' : 'hops'}`}
                    </span>{' '}
                    {expanded.includes(node.entity.id) ? (
                      <span className="tag muted-tag">expanded</span>
                    ) : (
                      <button
                        type="button"
                        className="link"
                        disabled={pending}
                        aria-label={`Expand ${node.entity.name}`}
                        onClick={() => expand(node.entity.id)}
                      >
                        Expand
                      </button>
                    )}
                  </li>
                ))}
              </ul>
            </section>
            <section aria-label="Relationships drawn">
              <h2>Relationships drawn</h2>
              {visible.relationships.length === 0 ? (
                <p className="empty">No relationships hold for the entities shown.</p>
              ) : (
                <ul className="plain-list">
                  {visible.relationships.map((r) => {
                    const text = `${entityNames.get(r.source.id) ?? r.source.name} ${r.relation} ${entityNames.get(r.target.id) ?? r.target.name}`
                    return (
                      <li key={r.id}>
                        <button
                          type="button"
                          className="link"
                          aria-pressed={selected?.id === r.id}
                          onClick={() => startTransition(() => showRelationship(r.id))}
                        >
                          {text}
                        </button>{' '}
                        <span className="muted">{r.confidence.toFixed(2)}</span>
                      </li>
                    )
                  })}
                </ul>
              )}
            </section>
          </div>
        </div>
      )}

      {selected && (
        <RelationshipPanel
          key={selected.id}
          relationship={selected}
          onClose={() => setSelected(null)}
          onChanged={(changed) => {
            setSelected(changed)
            redraw(expanded)
          }}
        />
      )}
    </div>
  )
}

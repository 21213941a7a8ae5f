import { describe, expect, it } from 'vitest'
import {
  asOfFromDate,
  dateTimeFieldValue,
  EMPTY_GRAPH,
  type GraphEntity,
  type GraphRelationship,
  knownAtFromField,
  memorySourceHref,
  mergeNeighbourhood,
  type Neighbourhood,
  toElements,
  validityText,
  visibleGraph,
} from './graph'

function entity(id: string, type = 'PERSON'): GraphEntity {
  return { id, agentId: 'a', type, name: id, aliases: [], summary: null, mentionCount: 1, origin: 'MANUAL' }
}

function edge(id: string, source: GraphEntity, relation: string, target: GraphEntity, confidence = 0.5) {
  return {
    id,
    agentId: 'a',
    source: { id: source.id, name: source.name, type: source.type },
    relation,
    target: { id: target.id, name: target.name, type: target.type },
    confidence,
    validFrom: null,
    validUntil: null,
    learntAt: '2026-01-01T00:00:00.000Z',
    retiredAt: null,
    retiredReason: null,
    supersededById: null,
    current: true,
    origin: 'MANUAL',
    sources: [],
  } satisfies GraphRelationship
}

const dana = entity('Dana')
const acme = entity('Acme', 'COMPANY')
const berlin = entity('Berlin', 'PLACE')
const lena = entity('Lena')

function neighbourhood(center: GraphEntity, nodes: [GraphEntity, number][], rels: GraphRelationship[]) {
  return {
    center,
    nodes: nodes.map(([e, depth]) => ({ entity: e, depth })),
    relationships: rels,
    truncated: false,
    truncation: null,
  } satisfies Neighbourhood
}

describe('mergeNeighbourhood', () => {
  const worksAt = edge('r1', dana, 'works at', acme)
  const locatedIn = edge('r2', acme, 'located in', berlin)
  const sister = edge('r3', lena, 'sister of', dana)

  it('counts an expanded neighbourhood’s depths from the entity expanded', () => {
    let drawn = mergeNeighbourhood(
      EMPTY_GRAPH,
      neighbourhood(
        dana,
        [
          [dana, 0],
          [acme, 1],
        ],
        [worksAt],
      ),
    )
    drawn = mergeNeighbourhood(
      drawn,
      neighbourhood(
        acme,
        [
          [acme, 0],
          [berlin, 1],
          [dana, 1],
        ],
        [worksAt, locatedIn],
      ),
    )
    const depths = Object.fromEntries(drawn.nodes.map((n) => [n.entity.id, n.depth]))
    // Dana stays the centre (0, not 1+1), Berlin is two hops out through Acme.
    expect(depths).toEqual({ Dana: 0, Acme: 1, Berlin: 2 })
    expect(drawn.relationships.map((r) => r.id)).toEqual(['r1', 'r2'])
  })

  it('keeps the newer copy of an edge read twice and each truncation message once', () => {
    const cut = {
      ...neighbourhood(dana, [[dana, 0]], [worksAt]),
      truncated: true,
      truncation: 'Acme: 1,000 edges cut to 200',
    }
    const corrected = { ...worksAt, confidence: 0.9 }
    let drawn = mergeNeighbourhood(EMPTY_GRAPH, cut)
    drawn = mergeNeighbourhood(drawn, { ...cut, relationships: [corrected, sister] })
    expect(drawn.truncations).toEqual(['Acme: 1,000 edges cut to 200'])
    expect(drawn.relationships.find((r) => r.id === 'r1')?.confidence).toBe(0.9)
  })

  it('ignores a truncation message when the API says nothing was cut', () => {
    const drawn = mergeNeighbourhood(EMPTY_GRAPH, {
      ...neighbourhood(dana, [[dana, 0]], []),
      truncation: 'stale',
    })
    expect(drawn.truncations).toEqual([])
  })
})

describe('visibleGraph', () => {
  const drawn = mergeNeighbourhood(
    EMPTY_GRAPH,
    neighbourhood(
      dana,
      [
        [dana, 0],
        [acme, 1],
        [berlin, 2],
        [lena, 1],
      ],
      [
        edge('r1', dana, 'works at', acme),
        edge('r2', acme, 'located in', berlin),
        edge('r3', lena, 'sister of', dana),
      ],
    ),
  )

  it('hides the entities of unchosen types and the edges touching them', () => {
    const shown = visibleGraph(drawn, new Set(['PERSON', 'PLACE']))
    expect(shown.nodes.map((n) => n.entity.id)).toEqual(['Dana', 'Berlin', 'Lena'])
    expect(shown.relationships.map((r) => r.id)).toEqual(['r3'])
  })

  it('keeps the centre even when its own type is filtered out', () => {
    const shown = visibleGraph(drawn, new Set(['COMPANY']))
    expect(shown.nodes.map((n) => n.entity.id)).toEqual(['Dana', 'Acme'])
    expect(shown.relationships.map((r) => r.id)).toEqual(['r1'])
  })
})

describe('toElements', () => {
  it('gives nodes their type colour and depth, edges their relation and a width by confidence', () => {
    const elements = toElements({
      nodes: [{ entity: dana, depth: 0 }],
      relationships: [edge('r1', dana, 'works at', acme, 1)],
    })
    expect(elements[0]).toEqual({
      group: 'nodes',
      data: { id: 'entity:Dana', ref: 'Dana', label: 'Dana', type: 'PERSON', depth: 0, colour: '#2563eb' },
    })
    expect(elements[1]).toEqual({
      group: 'edges',
      data: {
        id: 'relationship:r1',
        ref: 'r1',
        source: 'entity:Dana',
        target: 'entity:Acme',
        label: 'works at',
        width: 5,
      },
    })
  })

  it('keeps an entity and a relationship of the same API id apart', () => {
    // The API numbers each table from 1: entity "1" and relationship "1" are both drawn.
    const one = entity('1')
    const two = entity('2')
    const elements = toElements({
      nodes: [
        { entity: one, depth: 0 },
        { entity: two, depth: 1 },
      ],
      relationships: [edge('1', one, 'knows', two)],
    })
    expect(new Set(elements.map((e) => e.data.id)).size).toBe(3)
  })
})

describe('dates', () => {
  it('reads an as-of date as the end of that day in UTC, refusing what is not a date', () => {
    expect(asOfFromDate('')).toBeNull()
    expect(asOfFromDate('2026-03-01')).toBe('2026-03-01T23:59:59.999Z')
    expect(asOfFromDate('2026-13-45')).toBeUndefined()
    expect(asOfFromDate('yesterday')).toBeUndefined()
  })

  it('says a validity span in words and fills date-time fields in UTC', () => {
    expect(validityText({ validFrom: null, validUntil: null })).toBe('no bounds known')
    expect(validityText({ validFrom: '2026-03-01T10:00:00.000Z', validUntil: null })).toBe(
      'from 2026-03-01 10:00 UTC',
    )
    expect(
      validityText({ validFrom: '2026-03-01T10:00:00.000Z', validUntil: '2026-05-05T00:00:00.000Z' }),
    ).toBe('from 2026-03-01 10:00 UTC until 2026-05-05 00:00 UTC')
    expect(dateTimeFieldValue('2026-03-01T10:00:00.000Z')).toBe('2026-03-01T10:00')
    expect(dateTimeFieldValue(null)).toBe('')
  })
})

describe('source links', () => {
  it('land on the one memory whatever page it is on, superseded or not, scrolled to its row', () => {
    const href = memorySourceHref('agent a&b', '42')
    const url = new URL(href, 'http://dashboard')
    expect(url.pathname).toBe('/memories')
    expect(url.searchParams.get('agent')).toBe('agent a&b')
    expect(url.searchParams.get('id')).toBe('42')
    expect(url.searchParams.get('superseded')).toBe('1')
    expect(url.hash).toBe('#memory-42')
  })
})

describe('known at', () => {
  it('reads a date and time (seconds optional) as UTC, refusing what is not one', () => {
    expect(knownAtFromField('2026-03-01T10:00')).toBe('2026-03-01T10:00:00.000Z')
    expect(knownAtFromField('2026-03-01T10:00:07')).toBe('2026-03-01T10:00:07.000Z')
    expect(knownAtFromField('')).toBeNull()
    expect(knownAtFromField('yesterday')).toBeUndefined()
  })
})

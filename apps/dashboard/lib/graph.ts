import { parseUtcDateTime } from './format'

// The graph explorer's data (issue 15): the GraphQL selections it asks for, the shapes they answer,
// and the pure steps between them and the drawing (merging expanded neighbourhoods, filtering by
// entity type), kept here so they are tested without a browser.

export const ENTITY_TYPE_LABELS: Record<string, string> = {
  PERSON: 'Person',
  COMPANY: 'Company',
  PLACE: 'Place',
  PROJECT: 'Project',
  TOOL: 'Tool',
  CONCEPT: 'Concept',
  EVENT: 'Event',
}
export const ENTITY_TYPES = Object.keys(ENTITY_TYPE_LABELS)

/** One colour per entity type, for the nodes and the legend (the canvas takes no CSS variables). */
export const ENTITY_TYPE_COLOURS: Record<string, string> = {
  PERSON: '#2563eb',
  COMPANY: '#d97706',
  PLACE: '#059669',
  PROJECT: '#7c3aed',
  TOOL: '#db2777',
  CONCEPT: '#0891b2',
  EVENT: '#dc2626',
}

/**
 * The API's names for the graph's result types (the success members of the operations' unions).
 * One place, so the selections below follow the schema if a name changes.
 */
export const GRAPH_TYPENAMES = {
  entity: 'GraphEntity',
  entityPage: 'GraphEntityPage',
  relationship: 'GraphRelationship',
  neighbourhood: 'GraphNeighbourhood',
} as const

export interface GraphEntity {
  id: string
  agentId: string
  type: string
  name: string
  aliases: string[]
  summary: string | null
  mentionCount: number
  origin: string
}

export interface GraphEntityRef {
  id: string
  name: string
  type: string
}

/** Where an edge was learnt, read back by the API: the text as stored (redacted), its date, its conversation. */
export interface GraphSource {
  memoryId: string | null
  messageId: string | null
  /** The message's conversation; null for a memory alone or a message deleted since. */
  conversationId: string | null
  /** The memory's content, else the message's text (first 240 characters); null when deleted since. */
  excerpt: string | null
  at: string | null
}

export interface GraphRelationship {
  id: string
  agentId: string
  source: GraphEntityRef
  relation: string
  target: GraphEntityRef
  confidence: number
  validFrom: string | null
  validUntil: string | null
  learntAt: string
  retiredAt: string | null
  retiredReason: string | null
  supersededById: string | null
  current: boolean
  origin: string
  sources: GraphSource[]
}

export interface GraphNode {
  entity: GraphEntity
  /** Hops from the first entity drawn (0 for it). */
  depth: number
}

export interface Neighbourhood {
  center: GraphEntity | null
  nodes: GraphNode[]
  relationships: GraphRelationship[]
  truncated: boolean
  truncation: string | null
}

export const ENTITY_FIELDS = 'id agentId type name aliases summary mentionCount origin'
export const RELATIONSHIP_FIELDS = `id agentId relation confidence validFrom validUntil learntAt retiredAt retiredReason supersededById current origin
  source { id name type } target { id name type } sources { memoryId messageId conversationId excerpt at }`
export const NEIGHBOURHOOD_FIELDS = `center { ${ENTITY_FIELDS} } nodes { depth entity { ${ENTITY_FIELDS} } }
  relationships { ${RELATIONSHIP_FIELDS} } truncated truncation`

/** What the explorer has drawn so far: every neighbourhood it loaded, one graph. */
export interface DrawnGraph {
  nodes: GraphNode[]
  relationships: GraphRelationship[]
  /** Each cut neighbourhood's message, newest last, without repeats. */
  truncations: string[]
}

export const EMPTY_GRAPH: DrawnGraph = { nodes: [], relationships: [], truncations: [] }

/**
 * Adds an expanded neighbourhood to what is drawn. Its depths count from the entity expanded, so
 * they are shifted by that entity's own depth; a node reached twice keeps its shortest distance,
 * and an edge loaded again takes its newer copy (a correction made since).
 */
export function mergeNeighbourhood(drawn: DrawnGraph, next: Neighbourhood): DrawnGraph {
  const centreDepth = next.center ? (drawn.nodes.find((n) => n.entity.id === next.center?.id)?.depth ?? 0) : 0
  const nodes = new Map(drawn.nodes.map((n) => [n.entity.id, n]))
  for (const node of next.nodes) {
    const depth = node.depth + centreDepth
    const known = nodes.get(node.entity.id)
    nodes.set(node.entity.id, { entity: node.entity, depth: known ? Math.min(known.depth, depth) : depth })
  }
  const relationships = new Map(drawn.relationships.map((r) => [r.id, r]))
  for (const relationship of next.relationships) relationships.set(relationship.id, relationship)
  const truncations =
    next.truncated && next.truncation && !drawn.truncations.includes(next.truncation)
      ? [...drawn.truncations, next.truncation]
      : drawn.truncations
  return { nodes: [...nodes.values()], relationships: [...relationships.values()], truncations }
}

/**
 * What is shown under the type filter: nodes of the chosen types (the first entity always, so the
 * drawing never loses its anchor) and the edges whose both ends are shown.
 */
export function visibleGraph(
  drawn: DrawnGraph,
  types: ReadonlySet<string>,
): { nodes: GraphNode[]; relationships: GraphRelationship[] } {
  const nodes = drawn.nodes.filter((n) => n.depth === 0 || types.has(n.entity.type))
  const shown = new Set(nodes.map((n) => n.entity.id))
  return {
    nodes,
    relationships: drawn.relationships.filter((r) => shown.has(r.source.id) && shown.has(r.target.id)),
  }
}

/**
 * The drawing's element ids. Entities and relationships are numbered apart by the API (entity 1
 * and relationship 1 both exist), and cytoscape keeps one namespace: without a prefix the second
 * element of an id is dropped.
 */
export const entityKey = (id: string) => `entity:${id}`
export const relationshipKey = (id: string) => `relationship:${id}`

/**
 * The graph as cytoscape elements: nodes carry their type and depth for the style and the layout,
 * every element its API id (`ref`) for the taps.
 */
export function toElements(graph: { nodes: GraphNode[]; relationships: GraphRelationship[] }) {
  return [
    ...graph.nodes.map((n) => ({
      group: 'nodes' as const,
      data: {
        id: entityKey(n.entity.id),
        ref: n.entity.id,
        label: n.entity.name,
        type: n.entity.type,
        depth: n.depth,
        colour: ENTITY_TYPE_COLOURS[n.entity.type] ?? '#64748b',
      },
    })),
    ...graph.relationships.map((r) => ({
      group: 'edges' as const,
      data: {
        id: relationshipKey(r.id),
        ref: r.id,
        source: entityKey(r.source.id),
        target: entityKey(r.target.id),
        label: r.relation,
        // Wider for surer edges: 1 px at confidence 0, 5 px at 1.
        width: 1 + 4 * r.confidence,
      },
    })),
  ]
}

/**
 * "2026-03-01" from a date field, read as the end of that day in UTC, so a fact valid from that
 * day holds "as of" it; null when empty, undefined when it is not a date.
 */
export function asOfFromDate(value: string): string | null | undefined {
  if (!value) return null
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return undefined
  const date = new Date(`${value}T23:59:59.999Z`)
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString()
}

/**
 * The memories page showing this one memory (whatever page it would be on), scrolled to its row;
 * superseded ones too, since an edge may outlive the memory's validity.
 */
export function memorySourceHref(agentId: string, memoryId: string): string {
  return `/memories?${new URLSearchParams({ agent: agentId, id: memoryId, superseded: '1' })}#memory-${encodeURIComponent(memoryId)}`
}

/**
 * A "known at" field's value ("2026-03-01T10:00" or with seconds), read as UTC, as an ISO instant;
 * null when empty, undefined when it is not a date and time.
 */
export function knownAtFromField(value: string): string | null | undefined {
  const date = parseUtcDateTime(value)
  return date === undefined ? undefined : (date?.toISOString() ?? null)
}

/** A validity span in words: "from 1 Mar 2026 until 5 May 2026", "always (no bounds known)". */
export function validityText(relationship: Pick<GraphRelationship, 'validFrom' | 'validUntil'>): string {
  const { validFrom, validUntil } = relationship
  if (!validFrom && !validUntil) return 'no bounds known'
  return [validFrom && `from ${dayText(validFrom)}`, validUntil && `until ${dayText(validUntil)}`]
    .filter(Boolean)
    .join(' ')
}

/** "2026-03-01T10:00:00.000Z" → "2026-03-01 10:00 UTC": exact, unambiguous and the same on every machine. */
export function dayText(iso: string): string {
  const date = new Date(iso)
  if (Number.isNaN(date.getTime())) return iso
  return `${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`
}

/** A date-time field's value for an ISO instant ("2026-03-01T10:00"), UTC, empty for none. */
export function dateTimeFieldValue(iso: string | null): string {
  return iso ? new Date(iso).toISOString().slice(0, 16) : ''
}

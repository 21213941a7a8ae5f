'use server'

import { type Answer, answer, attempt, type Payload } from '../../../lib/answers'
import { ERROR_FIELDS, gql } from '../../../lib/api'
import { parseUtcDateTime } from '../../../lib/format'
import {
  ENTITY_FIELDS,
  GRAPH_TYPENAMES,
  type GraphEntity,
  type GraphRelationship,
  NEIGHBOURHOOD_FIELDS,
  type Neighbourhood,
  RELATIONSHIP_FIELDS,
} from '../../../lib/graph'

// The explorer's calls to the API, as the signed-in operator. They answer data or a refusal the
// panel shows in place (never throw), so a bad search or a refused correction keeps the drawing.

export type { Answer }

export interface EntityMatch {
  entity: GraphEntity
  score: number
}

/** Entities by name (fuzzy) and type; without a name, the agent's entities (the page's first list). */
export async function searchEntities(
  agentId: string,
  name: string,
  type: string | null,
): Promise<Answer<{ totalCount: number; matches: EntityMatch[] }>> {
  return attempt(async () => {
    const { graphEntities } = await gql<{ graphEntities: Payload }>(
      `query($a: ID, $name: String, $type: EntityType, $limit: Int) {
        graphEntities(agentId: $a, name: $name, type: $type, limit: $limit) {
          __typename
          ... on ${GRAPH_TYPENAMES.entityPage} { totalCount matches { score entity { ${ENTITY_FIELDS} } } }
          ${ERROR_FIELDS}
        }
      }`,
      { a: agentId, name: name.trim() || null, type, limit: 20 },
    )
    return answer(graphEntities, GRAPH_TYPENAMES.entityPage, 'The search')
  })
}

/**
 * The neighbourhood of one entity to a depth, as of a time (valid time) as Engram believed it at
 * another (system time: `knownAt` before a retirement still sees the retired edge); null: now.
 */
export async function loadNeighbourhood(
  agentId: string,
  entityId: string,
  depth: number,
  asOf: string | null,
  knownAt: string | null = null,
): Promise<Answer<Neighbourhood>> {
  return attempt(async () => {
    const { graphNeighbourhood } = await gql<{ graphNeighbourhood: Payload }>(
      `query($a: ID, $id: ID, $depth: Int, $asOf: DateTime, $knownAt: DateTime) {
        graphNeighbourhood(agentId: $a, entityId: $id, depth: $depth, asOf: $asOf, knownAt: $knownAt) {
          __typename
          ... on ${GRAPH_TYPENAMES.neighbourhood} { ${NEIGHBOURHOOD_FIELDS} }
          ${ERROR_FIELDS}
        }
      }`,
      { a: agentId, id: entityId, depth, asOf, knownAt },
    )
    return answer(graphNeighbourhood, GRAPH_TYPENAMES.neighbourhood, 'Loading the neighbourhood')
  })
}

/** One relationship, fresh: its validity, retirement and sources as stored now. */
export async function loadRelationship(agentId: string, id: string): Promise<Answer<GraphRelationship>> {
  return attempt(async () => {
    const { graphRelationship } = await gql<{ graphRelationship: Payload }>(
      `query($a: ID, $id: ID!) {
        graphRelationship(agentId: $a, id: $id) {
          __typename ... on ${GRAPH_TYPENAMES.relationship} { ${RELATIONSHIP_FIELDS} } ${ERROR_FIELDS}
        }
      }`,
      { a: agentId, id },
    )
    return answer(graphRelationship, GRAPH_TYPENAMES.relationship, 'Loading the relationship')
  })
}

/** A date-time field of the correction form: an instant, null to clear it, or a field issue. */
function validityField(form: FormData, field: 'validFrom' | 'validUntil') {
  const value = parseUtcDateTime(String(form.get(field) ?? ''))
  if (value === undefined) return { issue: { field, message: 'must be a date and time', limit: null } }
  return { value: value?.toISOString() ?? null }
}

/**
 * Corrects an edge: relation, confidence and validity (an emptied date clears that bound). The
 * API checks the limits and answers typed issues, shown beside the fields.
 */
export async function correctRelationship(form: FormData): Promise<Answer<GraphRelationship>> {
  const confidenceText = String(form.get('confidence') ?? '').trim()
  const confidence = Number(confidenceText)
  const validFrom = validityField(form, 'validFrom')
  const validUntil = validityField(form, 'validUntil')
  const issues = [
    ...(confidenceText === '' || !Number.isFinite(confidence)
      ? [{ field: 'confidence', message: 'must be a number between 0.0 and 1.0', limit: '0..1' }]
      : []),
    ...(validFrom.issue ? [validFrom.issue] : []),
    ...(validUntil.issue ? [validUntil.issue] : []),
  ]
  if (issues.length) return { ok: false, message: 'The correction was not sent.', issues }
  return attempt(async () => {
    const { updateGraphRelationship } = await gql<{ updateGraphRelationship: Payload }>(
      `mutation($input: UpdateGraphRelationshipInput!) {
        updateGraphRelationship(input: $input) {
          __typename ... on ${GRAPH_TYPENAMES.relationship} { ${RELATIONSHIP_FIELDS} } ${ERROR_FIELDS}
        }
      }`,
      {
        input: {
          agentId: String(form.get('agentId')),
          id: String(form.get('id')),
          relation: String(form.get('relation') ?? ''),
          confidence,
          validFrom: validFrom.value,
          validUntil: validUntil.value,
        },
      },
    )
    return answer(updateGraphRelationship, GRAPH_TYPENAMES.relationship, 'The correction')
  })
}

/** Retires a wrong edge: Engram stops believing it now; reads with an earlier knownAt still see it. */
export async function retireRelationship(
  agentId: string,
  id: string,
  reason: string,
): Promise<Answer<GraphRelationship>> {
  return attempt(async () => {
    const { retireGraphRelationship } = await gql<{ retireGraphRelationship: Payload }>(
      `mutation($input: RetireGraphRelationshipInput!) {
        retireGraphRelationship(input: $input) {
          __typename ... on ${GRAPH_TYPENAMES.relationship} { ${RELATIONSHIP_FIELDS} } ${ERROR_FIELDS}
        }
      }`,
      { input: { agentId, id, reason: reason.trim() || null } },
    )
    return answer(retireGraphRelationship, GRAPH_TYPENAMES.relationship, 'Retiring')
  })
}

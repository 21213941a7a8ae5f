import type { OutputOf } from '@engram/contract'
import { edgeHoldsAt } from '@engram/core'
import type { GraphEntityRecord } from '../ports/graph.ts'
import type { GraphRelationshipHit } from '../search/search-types.ts'

// A GRAPH search hit's entity or relationship in the contract's graph shapes (issue 15). Narrow on
// purpose: the graph operations' own wire shaping belongs to the GraphService's doors; once both
// are merged, one of the two should call the other's.

type Hit = OutputOf<'search'>['hits'][number]
const iso = (d: Date) => d.toISOString()
const isoOrNull = (d: Date | null) => (d ? d.toISOString() : null)

export function graphEntityOut(e: GraphEntityRecord): NonNullable<Hit['entity']> {
  return {
    id: e.id,
    agentId: e.agentId,
    userId: e.userId,
    type: e.type,
    name: e.name,
    aliases: [...e.aliases],
    summary: e.summary,
    mentionCount: e.mentionCount,
    origin: e.origin,
    firstSeenAt: iso(e.firstSeenAt),
    lastSeenAt: iso(e.lastSeenAt),
    createdAt: iso(e.createdAt),
    updatedAt: iso(e.updatedAt),
  }
}

export function graphRelationshipHitOut(
  hit: GraphRelationshipHit,
  now: Date,
): NonNullable<Hit['relationship']> {
  const r = hit.relationship
  const ref = (e: GraphEntityRecord) => ({ id: e.id, name: e.name, type: e.type })
  return {
    id: r.id,
    agentId: r.agentId,
    userId: r.userId,
    source: ref(hit.source),
    relation: r.relation,
    target: ref(hit.target),
    confidence: r.confidence,
    validFrom: isoOrNull(r.validFrom),
    validUntil: isoOrNull(r.validUntil),
    learntAt: iso(r.learntAt),
    retiredAt: isoOrNull(r.retiredAt),
    retiredReason: r.retiredReason,
    supersededById: r.supersededById,
    current: edgeHoldsAt(r, { asOf: now, knownAt: now }),
    origin: r.origin,
    sources: hit.sources.map((s) => ({ memoryId: s.memoryId, messageId: s.messageId })),
    createdAt: iso(r.createdAt),
    updatedAt: iso(r.updatedAt),
  }
}

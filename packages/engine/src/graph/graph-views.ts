import type { Clock, EntityType, ExclusiveRelation, GraphLimits, GraphTime } from '@engram/core'
import type {
  GraphEntityRecord,
  GraphRelationshipRecord,
  GraphRepository,
  GraphSource,
} from '../ports/graph.ts'
import type { RecallSources } from '../ports/recall-sources.ts'

// What GraphService takes and answers (issue 15): references to entities, read times, views of
// relationships with their sources, neighbourhoods and paths, and an operator's inputs.

/** An entity named by id or by a (fuzzy) name; an id wins when both are given. */
export interface EntityRef {
  entityId?: string | null
  name?: string | null
}

/** When a read is made; each clock defaults to now (see core's GraphTime). */
export interface GraphReadTime {
  asOf?: Date | null
  knownAt?: Date | null
}

export interface EntityMatch {
  entity: GraphEntityRecord
  /** See entityMatchScore: 1 exact, 0.5-0.95 shared words, below 0.5 a close spelling. */
  score: number
}

/**
 * When an entity read is made. Entities have system time only (createdAt, when Engram learnt
 * them), not valid time: `knownAt` (default now) hides those learnt after it. There is no asOf:
 * whether an entity "existed" at a valid time would mean keeping only entities with a
 * relationship holding then, which the repository cannot page or count (a scan of the agent's
 * edges per page); relationship reads answer that question.
 */
export interface EntityReadTime {
  knownAt?: Date | null
}

export interface EntitySearch extends EntityReadTime {
  name?: string | null
  type?: EntityType | null
  userId?: string | null
  offset?: number
  limit?: number
}

/**
 * One memory or message a relationship was learnt from, read back so an operator sees why Engram
 * believes it: the text as stored (already through the privacy guard) cut to an excerpt, when it
 * was written, and the conversation a message belongs to. A row deleted since reads as its ids
 * alone (null excerpt and date).
 */
export interface RelationshipSource extends GraphSource {
  /** The conversation of the message (null for a memory alone, or a message gone). */
  conversationId: string | null
  /** The memory's content, else the message's text, first SOURCE_EXCERPT_CHARS characters. */
  excerpt: string | null
  /** When the memory was created, else when the message was said. */
  at: Date | null
}

/** A relationship with its two ends and the memories and messages it was learnt from. */
export interface RelationshipView {
  relationship: GraphRelationshipRecord
  source: GraphEntityRecord
  target: GraphEntityRecord
  sources: RelationshipSource[]
}

export interface RelationshipSearch extends EntityRef, GraphReadTime {
  relation?: string | null
  minConfidence?: number | null
  /** Also edges that do not hold at the read's time (ended by a newer fact, retired, not yet valid). */
  includeHistory?: boolean | null
  offset?: number
  limit?: number
}

export interface NeighbourhoodRequest extends EntityRef, GraphReadTime {
  depth?: number | null
  types?: readonly EntityType[] | null
  relations?: readonly string[] | null
  minConfidence?: number | null
  limit?: number | null
}

export interface Neighbourhood {
  center: GraphEntityRecord | null
  /** The centre first (depth 0), then each level in the order it was reached. */
  nodes: { entity: GraphEntityRecord; depth: number }[]
  /** The edges between answered nodes that hold at the read's time. */
  relationships: RelationshipView[]
  truncated: boolean
  truncation: string | null
  time: GraphTime
}

export interface PathsRequest extends GraphReadTime {
  from: EntityRef
  to: EntityRef
  maxDepth?: number | null
  limit?: number | null
}

export interface GraphPath {
  /** From the first entity to the second. */
  entities: GraphEntityRecord[]
  /** entities[i] — relationships[i] — entities[i+1], in either direction. */
  relationships: RelationshipView[]
}

export interface Paths {
  from: GraphEntityRecord | null
  to: GraphEntityRecord | null
  paths: GraphPath[]
  truncated: boolean
  truncation: string | null
}

export interface NewEntityInput {
  type: EntityType
  name: string
  aliases?: readonly string[] | null
  summary?: string | null
  userId?: string | null
}

export interface EntityChangesInput {
  type?: EntityType | null
  name?: string | null
  aliases?: readonly string[] | null
  /** null clears it. */
  summary?: string | null
}

export interface NewRelationshipInput {
  sourceId: string
  relation: string
  targetId: string
  confidence?: number | null
  validFrom?: Date | null
  validUntil?: Date | null
}

export interface RelationshipChangesInput {
  sourceId?: string
  relation?: string
  targetId?: string
  confidence?: number
  /** null: unbounded on that side; absent: unchanged. */
  validFrom?: Date | null
  validUntil?: Date | null
}

export interface GraphServiceDeps {
  repository: GraphRepository
  clock: Clock
  /** Reads a relationship's source memories and turns by id (agent-scoped) for their excerpts. */
  recall: Pick<RecallSources, 'memoryItems' | 'messages'>
  limits?: GraphLimits
  /** Relations holding for one counterpart at a time (a new one ends the old one's validity). */
  exclusiveRelations?: readonly ExclusiveRelation[]
}

import type { EntityType, GraphOrigin, GraphTime } from '@engram/core'

/**
 * The knowledge graph's storage (issue 15). Every call is scoped to its agent: another tenant's id
 * finds nothing and changes nothing. Relationships are bi-temporal (see core's graph.ts): an edge
 * is never overwritten by a contradicting one, its validity is ended instead.
 */
export interface GraphEntityRecord {
  id: string
  agentId: string
  /** The user the entity was learnt about, or null for the agent's own (unscoped) memories. */
  userId: string | null
  type: EntityType
  /** The canonical name, as first written (or as an operator set it). */
  name: string
  /** core's normalizeEntityName(name): the key exact lookups use. */
  normalizedName: string
  /** Other names of the same entity, as written; the canonical name is not repeated here. */
  aliases: string[]
  summary: string | null
  /** The name's embedding (resolution by similarity), null when none was computed. */
  embedding: Float32Array | null
  /** Memories and messages that named it (kept up to date by formation). */
  mentionCount: number
  origin: GraphOrigin
  firstSeenAt: Date
  lastSeenAt: Date
  createdAt: Date
  updatedAt: Date
}

/** An entity to create: its record without what the store gives it (ids, the name key, updatedAt = createdAt). */
export type NewGraphEntity = Omit<GraphEntityRecord, 'id' | 'agentId' | 'normalizedName' | 'updatedAt'>

export interface GraphEntityChanges {
  type?: EntityType
  name?: string
  aliases?: string[]
  summary?: string | null
  embedding?: Float32Array | null
  mentionCount?: number
  lastSeenAt?: Date
  userId?: string | null
  origin?: GraphOrigin
  updatedAt: Date
}

export interface GraphRelationshipRecord {
  id: string
  agentId: string
  userId: string | null
  sourceId: string
  /** core's normalizeRelation form: "works at", "tech lead on". */
  relation: string
  targetId: string
  confidence: number
  /** Valid time: when the fact held in the world (null: unbounded on that side). */
  validFrom: Date | null
  validUntil: Date | null
  /** System time: when Engram learnt it, and when it stopped believing it (null: still believed). */
  learntAt: Date
  retiredAt: Date | null
  retiredReason: string | null
  /** The relationship whose arrival ended this one's validity, if one did. */
  supersededById: string | null
  origin: GraphOrigin
  createdAt: Date
  updatedAt: Date
}

/** A relationship to create: believed, current and unsuperseded until something changes it. */
export type NewGraphRelationship = Omit<
  GraphRelationshipRecord,
  'id' | 'agentId' | 'retiredAt' | 'retiredReason' | 'supersededById' | 'updatedAt'
>

export interface GraphRelationshipChanges {
  relation?: string
  sourceId?: string
  targetId?: string
  confidence?: number
  validFrom?: Date | null
  validUntil?: Date | null
  retiredAt?: Date | null
  retiredReason?: string | null
  supersededById?: string | null
  origin?: GraphOrigin
  updatedAt: Date
}

/** Where an entity or relationship was learnt: a memory item, a message, or both (a memory formed from a turn). */
export interface GraphSource {
  memoryId: string | null
  messageId: string | null
}

export interface GraphEvidenceRecord extends GraphSource {
  /** Exactly one of the two is set. */
  entityId: string | null
  relationshipId: string | null
  createdAt: Date
}

/** Which relationships a read returns; every field narrows it. */
export interface GraphRelationshipFilter {
  /** Normalised relation names (exact). */
  relations?: readonly string[]
  /** Only edges touching one of these entities (as source or target). */
  entityIds?: readonly string[]
  minConfidence?: number
  /** Only edges that hold at this time (core's edgeHoldsAt); absent: every edge, retired and ended ones too. */
  at?: GraphTime
  userId?: string | null
}

export interface GraphEntityQuery {
  /** A substring of the normalised name or of an alias (already normalised by the caller). */
  nameContains?: string
  type?: EntityType
  /** A user's entities; null: those learnt with no user; absent: all. */
  userId?: string | null
  /** Only entities Engram had learnt by then (createdAt ≤ learntBy): a read's knownAt. */
  learntBy?: Date
}

export interface GraphForgetResult {
  /** Formed relationships deleted because their last source went. */
  relationships: number
  /** Formed entities deleted because their last source went and no relationship uses them. */
  entities: number
}

export interface GraphRepository {
  /** Runs `fn` with this repository bound to one transaction (resolution reads and the writes they decide). */
  transaction<T>(fn: (graph: GraphRepository) => Promise<T>): Promise<T>

  // --- entities -------------------------------------------------------------------------------
  findEntity(agentId: string, id: string): Promise<GraphEntityRecord | null>
  entitiesByIds(agentId: string, ids: readonly string[]): Promise<GraphEntityRecord[]>
  /** Entities whose normalised name equals `normalizedName` or one of whose aliases normalises to it. */
  entitiesByName(agentId: string, normalizedName: string): Promise<GraphEntityRecord[]>
  /**
   * Entities sharing at least one normalised name token (of the name or an alias) with `tokens`:
   * the candidates resolution scores. At most `limit`, most mentioned first.
   */
  entitiesByTokens(agentId: string, tokens: readonly string[], limit: number): Promise<GraphEntityRecord[]>
  /** Most mentioned first, ties by id; a null agent means every agent (an admin's list). */
  searchEntities(
    agentId: string | null,
    query: GraphEntityQuery,
    offset: number,
    limit: number,
  ): Promise<GraphEntityRecord[]>
  countEntities(agentId: string | null, query: GraphEntityQuery): Promise<number>
  createEntity(agentId: string, entity: NewGraphEntity): Promise<GraphEntityRecord>
  updateEntity(agentId: string, id: string, changes: GraphEntityChanges): Promise<GraphEntityRecord>
  /** Deletes the entity, every relationship touching it and their evidence. */
  deleteEntity(agentId: string, id: string): Promise<void>

  // --- relationships --------------------------------------------------------------------------
  findRelationship(agentId: string, id: string): Promise<GraphRelationshipRecord | null>
  /** Highest confidence first, ties by learntAt descending then id. */
  relationships(
    agentId: string | null,
    filter: GraphRelationshipFilter,
    offset: number,
    limit: number,
  ): Promise<GraphRelationshipRecord[]>
  countRelationships(agentId: string | null, filter: GraphRelationshipFilter): Promise<number>
  /** Edges touching an entity, whatever their time (the per-entity limit counts them). */
  countEdgesOf(agentId: string, entityId: string): Promise<number>
  createRelationship(agentId: string, relationship: NewGraphRelationship): Promise<GraphRelationshipRecord>
  updateRelationship(
    agentId: string,
    id: string,
    changes: GraphRelationshipChanges,
  ): Promise<GraphRelationshipRecord>
  /** Deletes the relationship and its evidence. */
  deleteRelationship(agentId: string, id: string): Promise<void>
  /** Moves every relationship and piece of evidence of `fromId` onto `intoId` and deletes `fromId` (a merge). */
  reassignEntity(agentId: string, fromId: string, intoId: string, at: Date): Promise<void>

  // --- provenance -----------------------------------------------------------------------------
  /** Records sources; a (subject, memory, message) already recorded is not repeated. */
  addEvidence(
    agentId: string,
    evidence: readonly Omit<GraphEvidenceRecord, 'createdAt'>[],
    at: Date,
  ): Promise<void>
  evidenceOf(
    agentId: string,
    subject: { relationshipIds?: readonly string[]; entityIds?: readonly string[] },
  ): Promise<GraphEvidenceRecord[]>
  /**
   * The deletion of memories or messages: drops their evidence, then deletes FORMED relationships
   * left with none and FORMED entities left with no evidence and no relationship. MANUAL ones stay.
   */
  forgetSources(
    agentId: string,
    sources: { memoryIds?: readonly string[]; messageIds?: readonly string[] },
  ): Promise<GraphForgetResult>
  /** Every entity and relationship of the agent (clearing an agent's memory). */
  clear(agentId: string): Promise<GraphForgetResult>
}

import {
  type Clock,
  DEFAULT_EXCLUSIVE_RELATIONS,
  DEFAULT_GRAPH_LIMITS,
  type EntityType,
  type ExclusiveRelation,
  edgesContradictedBy,
  type GraphLimits,
  type GraphTime,
  NotFoundError,
  nameTokens,
  normalizeEntityName,
  reinforcedConfidence,
  ValidationError,
} from '@engram/core'
import type {
  GraphEntityChanges,
  GraphEntityQuery,
  GraphEntityRecord,
  GraphEvidenceRecord,
  GraphRelationshipChanges,
  GraphRelationshipFilter,
  GraphRelationshipRecord,
  GraphRepository,
} from '../ports/graph.ts'
import { byMentions, fuzzyEntityMatches, namedIn, TOKEN_CANDIDATES } from './entity-match.ts'
import { foldMergedEdges } from './entity-merge.ts'
import { GraphInputRules, uniqueNames } from './graph-input.ts'
import type {
  EntityChangesInput,
  EntityMatch,
  EntityReadTime,
  EntityRef,
  EntitySearch,
  GraphReadTime,
  GraphServiceDeps,
  Neighbourhood,
  NeighbourhoodRequest,
  NewEntityInput,
  NewRelationshipInput,
  Paths,
  PathsRequest,
  RelationshipChangesInput,
  RelationshipSearch,
  RelationshipSource,
  RelationshipView,
} from './graph-views.ts'
import { chainsTo, uniqueById, unseenEnds, walkSide } from './graph-walk.ts'
import { relationshipSourceReader } from './relationship-sources.ts'

export type * from './graph-views.ts'
export { relationshipSourceReader, SOURCE_EXCERPT_CHARS } from './relationship-sources.ts'

/** An operator's relationship is taken as certain unless they say otherwise. */
const MANUAL_CONFIDENCE = 1
/** Entities fetched per read while a level's neighbours are gathered. */
const FETCH_CHUNK = 256

/**
 * The knowledge graph's reads and an operator's corrections (issue 15): fuzzy entity search,
 * relationships by type and entity as of a time, a bounded neighbourhood walk, shortest paths, and
 * entity and relationship CRUD that keeps the bi-temporal rules (a contradicted edge's validity
 * ends, a repeated edge is a confirmation, a wrong edge is retired, never silently rewritten).
 * Every call is scoped to one agent through the repository.
 */
export class GraphService {
  private readonly graph: GraphRepository
  private readonly clock: Clock
  private readonly recall: GraphServiceDeps['recall']
  readonly limits: GraphLimits
  private readonly exclusive: readonly ExclusiveRelation[]
  private readonly input: GraphInputRules

  constructor(deps: GraphServiceDeps) {
    this.graph = deps.repository
    this.clock = deps.clock
    this.recall = deps.recall
    this.limits = deps.limits ?? DEFAULT_GRAPH_LIMITS
    this.exclusive = deps.exclusiveRelations ?? DEFAULT_EXCLUSIVE_RELATIONS
    this.input = new GraphInputRules(this.limits)
  }

  // --- reads -----------------------------------------------------------------------------------

  /** NOT_FOUND for another agent's id, and for one learnt after `knownAt` (it was not known then). */
  async entity(agentId: string, id: string, read: EntityReadTime = {}): Promise<GraphEntityRecord> {
    const found = await this.graph.findEntity(agentId, id)
    if (!found || (read.knownAt && found.createdAt.getTime() > read.knownAt.getTime()))
      throw new NotFoundError('GraphEntity', id)
    return found
  }

  /**
   * Entities by fuzzy name (see entityMatchScore for the score), best first, ties by mentions; with
   * no name, the agent's entities most mentioned first (score 1). Close spellings are looked for
   * among the entities sharing a word with the query, those containing a word's first three
   * letters, and the agent's SPELLING_SCAN most mentioned, so a typo in a huge graph's rarely
   * named entity may be missed; exact names and shared words never are.
   */
  async searchEntities(
    agentId: string,
    search: EntitySearch,
  ): Promise<{ totalCount: number; matches: EntityMatch[] }> {
    const offset = search.offset ?? 0
    const limit = this.input.resultSize(search.limit, 'limit')
    const query: GraphEntityQuery = {
      type: search.type ?? undefined,
      userId: search.userId ?? undefined,
      ...(search.knownAt ? { learntBy: search.knownAt } : {}),
    }
    if (!search.name) {
      const [entities, totalCount] = await Promise.all([
        this.graph.searchEntities(agentId, query, offset, limit),
        this.graph.countEntities(agentId, query),
      ])
      return { totalCount, matches: entities.map((entity) => ({ entity, score: 1 })) }
    }
    const matches = await fuzzyEntityMatches(this.graph, agentId, search.name, query)
    return { totalCount: matches.length, matches: matches.slice(offset, offset + limit) }
  }

  /** The entity a reference names: by id (NOT_FOUND when it is not the agent's), else the best fuzzy match or null. */
  async resolve(agentId: string, ref: EntityRef, field = 'entityId'): Promise<GraphEntityRecord | null> {
    if (ref.entityId) return this.entity(agentId, ref.entityId)
    if (ref.name) {
      // An exact name or alias scores 1 and wins (most mentioned first): no need to score the rest.
      const exact = await this.graph.entitiesByName(agentId, normalizeEntityName(ref.name))
      if (exact.length > 0) return [...exact].sort(byMentions)[0] as GraphEntityRecord
      return (await fuzzyEntityMatches(this.graph, agentId, ref.name, {}))[0]?.entity ?? null
    }
    throw new ValidationError([{ field, message: 'give an entity id or a name' }])
  }

  /**
   * The entities a free text names by their whole name or an alias, most mentioned first: the
   * entry points graph-augmented retrieval starts from ("Where does Dana work?" → Dana).
   */
  async entitiesNamedIn(
    agentId: string,
    text: string,
    limit = this.limits.defaultResultSize,
  ): Promise<GraphEntityRecord[]> {
    const tokens = nameTokens(text)
    if (tokens.length === 0) return []
    const candidates = await this.graph.entitiesByTokens(agentId, [...new Set(tokens)], TOKEN_CANDIDATES)
    return candidates.filter((e) => namedIn(tokens, e)).slice(0, limit)
  }

  async relationship(agentId: string, id: string): Promise<RelationshipView> {
    const found = await this.graph.findRelationship(agentId, id)
    if (!found) throw new NotFoundError('GraphRelationship', id)
    return (await this.describe(agentId, [found]))[0] as RelationshipView
  }

  /**
   * Relationships by relation and/or entity, highest confidence first: those holding at the read's
   * time, or every one touching them with `includeHistory`. A name that matches no entity answers
   * an empty page rather than every relationship.
   */
  async relationships(
    agentId: string,
    search: RelationshipSearch,
  ): Promise<{ totalCount: number; relationships: RelationshipView[]; time: GraphTime }> {
    const time = this.timeOf(search)
    const limit = this.input.resultSize(search.limit, 'limit')
    const filter: GraphRelationshipFilter = {
      ...(search.relation ? { relations: [this.input.relationOf(search.relation, 'relation')] } : {}),
      ...(search.minConfidence != null ? { minConfidence: search.minConfidence } : {}),
      ...(search.includeHistory ? {} : { at: time }),
    }
    if (search.entityId || search.name) {
      const entity = await this.resolve(agentId, search)
      if (!entity) return { totalCount: 0, relationships: [], time }
      filter.entityIds = [entity.id]
    }
    const [rows, totalCount] = await Promise.all([
      this.graph.relationships(agentId, filter, search.offset ?? 0, limit),
      this.graph.countRelationships(agentId, filter),
    ])
    return { totalCount, relationships: await this.describe(agentId, rows), time }
  }

  /** The memories and messages entities and relationships were learnt from. */
  sourcesOf(
    agentId: string,
    subject: { relationshipIds?: readonly string[]; entityIds?: readonly string[] },
  ): Promise<GraphEvidenceRecord[]> {
    return this.graph.evidenceOf(agentId, subject)
  }

  /**
   * The entities and relationships around one entity, walked breadth first one level at a time
   * (never recursively): each level expands at most `maxFrontier` entities (the most mentioned),
   * reads at most `maxEdgesPerLevel` relationships (the most confident), and the answer holds at
   * most `limit` entities. Whatever a cap cut is said in `truncation`, so a hub with thousands of
   * edges answers at once with "cut here" instead of exploding. `types` keeps (and walks through)
   * only entities of those types; the centre is always answered.
   */
  async neighbourhood(agentId: string, request: NeighbourhoodRequest): Promise<Neighbourhood> {
    const time = this.timeOf(request)
    const depth = this.input.depthOf(request.depth, 'depth')
    const limit = this.input.resultSize(request.limit, 'limit')
    const center = await this.resolve(agentId, request)
    if (!center)
      return { center: null, nodes: [], relationships: [], truncated: false, truncation: null, time }
    const filter = this.walkFilter(request, time)
    const types = request.types?.length ? new Set(request.types) : null
    const nodes = new Map<string, { entity: GraphEntityRecord; depth: number }>([
      [center.id, { entity: center, depth: 0 }],
    ])
    const kept = new Map<string, GraphRelationshipRecord>()
    const notes: string[] = []
    let frontier = [center]
    for (let level = 1; level <= depth && frontier.length > 0; level++) {
      const { edges } = await this.readLevel(agentId, frontier, filter, level, notes)
      const wanted = unseenEnds(edges, (id) => nodes.has(id))
      const next: GraphEntityRecord[] = []
      let filteredOut = 0
      for (let at = 0; at < wanted.length && nodes.size < limit; at += FETCH_CHUNK) {
        for (const entity of await this.fetchInOrder(agentId, wanted.slice(at, at + FETCH_CHUNK))) {
          if (types && !types.has(entity.type)) {
            filteredOut++
            continue
          }
          if (nodes.size >= limit) break
          nodes.set(entity.id, { entity, depth: level })
          next.push(entity)
        }
      }
      // Once the answer is full, the next level is still read (bounded like any) so the cut is said, not guessed.
      const leftOut = wanted.length - next.length - filteredOut
      if (leftOut > 0 && nodes.size >= limit)
        notes.push(
          `the answer holds its limit of ${limit} entities: up to ${leftOut} more at depth ${level} were left out (limit)`,
        )
      for (const edge of edges)
        if (nodes.has(edge.sourceId) && nodes.has(edge.targetId)) kept.set(edge.id, edge)
      frontier = next
    }
    const known = new Map([...nodes.values()].map((n) => [n.entity.id, n.entity]))
    return {
      center,
      nodes: [...nodes.values()],
      relationships: await this.describe(agentId, [...kept.values()], known),
      truncated: notes.length > 0,
      truncation: notes.length > 0 ? notes.join('; ') : null,
      time,
    }
  }

  /**
   * The shortest chains of relationships between two entities, found by a breadth-first walk from
   * both ends at once (the smaller side expands each step, bounded per level like neighbourhood);
   * every shortest chain up to `limit`, none longer than `maxDepth` hops. Edges are walked in
   * either direction.
   */
  async paths(agentId: string, request: PathsRequest): Promise<Paths> {
    const time = this.timeOf(request)
    const maxDepth = this.input.depthOf(request.maxDepth ?? this.limits.maxDepth, 'maxDepth')
    const limit = request.limit ?? this.limits.defaultPaths
    if (limit > this.limits.maxPaths) throw this.input.tooMany('limit', this.limits.maxPaths)
    const [from, to] = await Promise.all([
      this.resolve(agentId, request.from, 'fromId'),
      this.resolve(agentId, request.to, 'toId'),
    ])
    if (!from || !to) return { from, to, paths: [], truncated: false, truncation: null }
    if (from.id === to.id)
      return {
        from,
        to,
        paths: [{ entities: [from], relationships: [] }],
        truncated: false,
        truncation: null,
      }
    const filter = this.walkFilter({}, time)
    const known = new Map([
      [from.id, from],
      [to.id, to],
    ])
    const notes: string[] = []
    const sides = [walkSide(from), walkSide(to)] as const
    let meeting: string[] = []
    while (sides[0].depth + sides[1].depth < maxDepth) {
      const open = sides.filter((s) => s.frontier.length > 0)
      if (open.length < 2) break
      const side = sides[0].frontier.length <= sides[1].frontier.length ? sides[0] : sides[1]
      const level = side.depth + 1
      const { edges, expanded } = await this.readLevel(agentId, side.frontier, filter, level, notes)
      const reached: string[] = []
      for (const edge of edges) {
        for (const [here, there] of [
          [edge.sourceId, edge.targetId],
          [edge.targetId, edge.sourceId],
        ] as const) {
          if (here === there || !expanded.has(here)) continue
          const seen = side.distance.get(there)
          if (seen === undefined) {
            side.distance.set(there, level)
            reached.push(there)
          } else if (seen !== level) continue
          const parents = side.parents.get(there) ?? []
          if (!parents.some((p) => p.edge.id === edge.id)) parents.push({ from: here, edge })
          side.parents.set(there, parents)
        }
      }
      const entities = await this.fetchInOrder(
        agentId,
        reached.filter((id) => !known.has(id)),
      )
      for (const e of entities) known.set(e.id, e)
      side.frontier = reached.flatMap((id) => {
        const e = known.get(id)
        return e ? [e] : []
      })
      side.depth = level
      meeting = [...sides[0].distance.keys()].filter((id) => sides[1].distance.has(id))
      if (meeting.length > 0) break
    }
    const [forward, backward] = sides
    const shortest = Math.min(
      ...meeting.map((id) => (forward.distance.get(id) as number) + (backward.distance.get(id) as number)),
    )
    const chains: { ids: string[]; edges: GraphRelationshipRecord[] }[] = []
    const keys = new Set<string>()
    for (const id of meeting) {
      if ((forward.distance.get(id) as number) + (backward.distance.get(id) as number) !== shortest) continue
      for (const head of chainsTo(forward, id, limit))
        for (const tail of chainsTo(backward, id, limit)) {
          const edges = [...head.edges, ...[...tail.edges].reverse()]
          const key = edges.map((e) => e.id).join('>')
          if (keys.has(key) || chains.length >= limit) continue
          keys.add(key)
          chains.push({ ids: [...head.ids, ...[...tail.ids].reverse().slice(1)], edges })
        }
    }
    const views = new Map(
      (await this.describe(agentId, uniqueById(chains.flatMap((c) => c.edges)), known)).map((v) => [
        v.relationship.id,
        v,
      ]),
    )
    return {
      from,
      to,
      paths: chains.map((c) => ({
        entities: c.ids.map((id) => known.get(id) as GraphEntityRecord),
        relationships: c.edges.map((e) => views.get(e.id) as RelationshipView),
      })),
      truncated: notes.length > 0,
      truncation: notes.length > 0 ? notes.join('; ') : null,
    }
  }

  // --- an operator's writes --------------------------------------------------------------------

  async createEntity(agentId: string, input: NewEntityInput): Promise<GraphEntityRecord> {
    const name = this.input.entityNameOf(input.name, 'name')
    const aliases = this.input.aliasesOf(input.aliases ?? [], name)
    const summary = this.input.summaryOf(input.summary ?? null)
    return this.graph.transaction(async (graph) => {
      const count = await graph.countEntities(agentId, {})
      if (count >= this.limits.maxEntitiesPerAgent) {
        throw new ValidationError([
          {
            field: 'agentId',
            message: `already has ${count} graph entities, the most an agent may have (maxEntitiesPerAgent ${this.limits.maxEntitiesPerAgent})`,
            limit: this.limits.maxEntitiesPerAgent,
          },
        ])
      }
      await this.refuseNameTaken(graph, agentId, input.type, name, null)
      const now = this.clock.now()
      return graph.createEntity(agentId, {
        userId: input.userId ?? null,
        type: input.type,
        name,
        aliases,
        summary,
        embedding: null,
        mentionCount: 0,
        origin: 'MANUAL',
        firstSeenAt: now,
        lastSeenAt: now,
        createdAt: now,
      })
    })
  }

  async updateEntity(agentId: string, id: string, input: EntityChangesInput): Promise<GraphEntityRecord> {
    return this.graph.transaction(async (graph) => {
      const entity = await graph.findEntity(agentId, id)
      if (!entity) throw new NotFoundError('GraphEntity', id)
      const name = input.name != null ? this.input.entityNameOf(input.name, 'name') : entity.name
      const type = input.type ?? entity.type
      const changes: GraphEntityChanges = { updatedAt: this.clock.now() }
      if (input.name != null) changes.name = name
      if (input.type != null) changes.type = type
      if (input.aliases != null || input.name != null)
        changes.aliases = this.input.aliasesOf(input.aliases ?? entity.aliases, name)
      if (input.summary !== undefined) changes.summary = this.input.summaryOf(input.summary)
      if (changes.name !== undefined || changes.type !== undefined)
        await this.refuseNameTaken(graph, agentId, type, name, id)
      return graph.updateEntity(agentId, id, changes)
    })
  }

  /**
   * Makes `fromId` part of `intoId`: its relationships and sources move over, its names become
   * aliases, mentions add up, and it is deleted. An edge the two shared becomes a self-loop and
   * goes; two edges that became the same (source, relation, target) are one, its sources joined.
   */
  async mergeEntities(agentId: string, fromId: string, intoId: string): Promise<GraphEntityRecord> {
    if (fromId === intoId)
      throw new ValidationError([{ field: 'fromId', message: 'must differ from intoId' }])
    return this.graph.transaction(async (graph) => {
      const [from, into] = await Promise.all([
        graph.findEntity(agentId, fromId),
        graph.findEntity(agentId, intoId),
      ])
      if (!from) throw new NotFoundError('GraphEntity', fromId)
      if (!into) throw new NotFoundError('GraphEntity', intoId)
      const aliases = uniqueNames([...into.aliases, from.name, ...from.aliases], into.name)
      if (aliases.length > this.limits.maxAliasesPerEntity)
        throw this.input.tooMany(
          'aliases',
          this.limits.maxAliasesPerEntity,
          `the merged entity would have ${aliases.length} aliases`,
        )
      const edges = (await graph.countEdgesOf(agentId, fromId)) + (await graph.countEdgesOf(agentId, intoId))
      if (edges > this.limits.maxEdgesPerEntity)
        throw this.input.tooMany(
          'intoId',
          this.limits.maxEdgesPerEntity,
          `the merged entity would have ${edges} relationships`,
        )
      const now = this.clock.now()
      await graph.reassignEntity(agentId, fromId, intoId, now)
      await foldMergedEdges(graph, agentId, intoId, this.limits.maxEdgesPerEntity * 2, this.clock.now())
      return graph.updateEntity(agentId, intoId, {
        aliases,
        summary: into.summary ?? from.summary,
        mentionCount: into.mentionCount + from.mentionCount,
        lastSeenAt: new Date(Math.max(from.lastSeenAt.getTime(), into.lastSeenAt.getTime())),
        updatedAt: now,
      })
    })
  }

  async deleteEntity(agentId: string, id: string): Promise<void> {
    await this.graph.deleteEntity(agentId, id)
  }

  /**
   * An operator's relationship (origin MANUAL). The same current (source, relation, target) again
   * is a confirmation: its confidence is reinforced and no edge is added. A new edge of an
   * exclusive relation (works at, lives in...) ends the validity of the current edges it
   * contradicts at its validFrom (or now), pointing them at it; an edge entered as already ended
   * (validUntil in the past) is history and ends nothing, and neither does it end a newer fact.
   */
  async createRelationship(agentId: string, input: NewRelationshipInput): Promise<RelationshipView> {
    const relation = this.input.relationOf(input.relation, 'relation')
    if (input.sourceId === input.targetId)
      throw new ValidationError([{ field: 'targetId', message: 'must differ from sourceId' }])
    this.input.assertValidity(input.validFrom ?? null, input.validUntil ?? null)
    const created = await this.graph.transaction(async (graph) => {
      for (const id of [input.sourceId, input.targetId])
        if (!(await graph.findEntity(agentId, id))) throw new NotFoundError('GraphEntity', id)
      const now = this.clock.now()
      const current = await graph.relationships(
        agentId,
        {
          entityIds: [input.sourceId, input.targetId],
          relations: [relation],
          at: { asOf: now, knownAt: now },
        },
        0,
        this.limits.maxEdgesPerEntity,
      )
      const same = current.find((e) => e.sourceId === input.sourceId && e.targetId === input.targetId)
      if (same) {
        return graph.updateRelationship(agentId, same.id, {
          confidence: Math.max(reinforcedConfidence(same.confidence), input.confidence ?? 0),
          updatedAt: now,
        })
      }
      await this.assertRoomForEdge(graph, agentId, input.sourceId, 'sourceId')
      await this.assertRoomForEdge(graph, agentId, input.targetId, 'targetId')
      const edge = await graph.createRelationship(agentId, {
        userId: null,
        sourceId: input.sourceId,
        relation,
        targetId: input.targetId,
        confidence: input.confidence ?? MANUAL_CONFIDENCE,
        validFrom: input.validFrom ?? null,
        validUntil: input.validUntil ?? null,
        learntAt: now,
        origin: 'MANUAL',
        createdAt: now,
      })
      const historical = edge.validUntil != null && edge.validUntil <= now
      if (!historical) {
        const endsAt = edge.validFrom ?? now
        for (const old of edgesContradictedBy(edge, current, this.exclusive)) {
          if (old.validFrom && old.validFrom >= endsAt) continue
          await graph.updateRelationship(agentId, old.id, {
            validUntil: endsAt,
            supersededById: edge.id,
            updatedAt: now,
          })
        }
      }
      return edge
    })
    return (await this.describe(agentId, [created]))[0] as RelationshipView
  }

  async updateRelationship(
    agentId: string,
    id: string,
    input: RelationshipChangesInput,
  ): Promise<RelationshipView> {
    const updated = await this.graph.transaction(async (graph) => {
      const edge = await graph.findRelationship(agentId, id)
      if (!edge) throw new NotFoundError('GraphRelationship', id)
      const changes: GraphRelationshipChanges = { updatedAt: this.clock.now() }
      if (input.relation !== undefined) changes.relation = this.input.relationOf(input.relation, 'relation')
      if (input.confidence !== undefined) changes.confidence = input.confidence
      if (input.validFrom !== undefined) changes.validFrom = input.validFrom
      if (input.validUntil !== undefined) changes.validUntil = input.validUntil
      for (const [field, next, old] of [
        ['sourceId', input.sourceId, edge.sourceId],
        ['targetId', input.targetId, edge.targetId],
      ] as const) {
        if (next === undefined || next === old) continue
        if (!(await graph.findEntity(agentId, next))) throw new NotFoundError('GraphEntity', next)
        await this.assertRoomForEdge(graph, agentId, next, field)
        changes[field] = next
      }
      if ((changes.sourceId ?? edge.sourceId) === (changes.targetId ?? edge.targetId))
        throw new ValidationError([{ field: 'targetId', message: 'must differ from sourceId' }])
      this.input.assertValidity(
        changes.validFrom !== undefined ? changes.validFrom : edge.validFrom,
        changes.validUntil !== undefined ? changes.validUntil : edge.validUntil,
      )
      return graph.updateRelationship(agentId, id, changes)
    })
    return (await this.describe(agentId, [updated]))[0] as RelationshipView
  }

  /** Engram stops believing the edge now; reads with an earlier knownAt still see it. Retiring twice keeps the first. */
  async retireRelationship(agentId: string, id: string, reason: string | null): Promise<RelationshipView> {
    const edge = await this.graph.findRelationship(agentId, id)
    if (!edge) throw new NotFoundError('GraphRelationship', id)
    const now = this.clock.now()
    const retired = edge.retiredAt
      ? edge
      : await this.graph.updateRelationship(agentId, id, {
          retiredAt: now,
          retiredReason: reason,
          updatedAt: now,
        })
    return (await this.describe(agentId, [retired]))[0] as RelationshipView
  }

  async deleteRelationship(agentId: string, id: string): Promise<void> {
    await this.graph.deleteRelationship(agentId, id)
  }

  // --- inside ----------------------------------------------------------------------------------

  /** One level of a walk: the frontier cut to maxFrontier, then at most maxEdgesPerLevel edges. */
  private async readLevel(
    agentId: string,
    frontier: GraphEntityRecord[],
    filter: GraphRelationshipFilter,
    level: number,
    notes: string[],
  ): Promise<{ edges: GraphRelationshipRecord[]; expanded: Set<string> }> {
    const { maxFrontier, maxEdgesPerLevel } = this.limits
    let expanding = frontier
    if (frontier.length > maxFrontier) {
      expanding = [...frontier].sort(byMentions).slice(0, maxFrontier)
      notes.push(
        `level ${level}: expanded the ${maxFrontier} most mentioned of ${frontier.length} entities (maxFrontier ${maxFrontier})`,
      )
    }
    const expanded = new Set(expanding.map((e) => e.id))
    const edges = await this.graph.relationships(
      agentId,
      { ...filter, entityIds: [...expanded] },
      0,
      maxEdgesPerLevel + 1,
    )
    if (edges.length > maxEdgesPerLevel) {
      edges.length = maxEdgesPerLevel
      notes.push(
        `level ${level}: read the ${maxEdgesPerLevel} most confident relationships and left the rest out (maxEdgesPerLevel ${maxEdgesPerLevel})`,
      )
    }
    return { edges, expanded }
  }

  private walkFilter(
    request: { relations?: readonly string[] | null; minConfidence?: number | null },
    time: GraphTime,
  ): GraphRelationshipFilter {
    return {
      at: time,
      ...(request.relations?.length
        ? { relations: request.relations.map((r, i) => this.input.relationOf(r, `relations.${i}`)) }
        : {}),
      ...(request.minConfidence != null ? { minConfidence: request.minConfidence } : {}),
    }
  }

  /** Entities by id in the order asked (the repository's order is its own). */
  private async fetchInOrder(agentId: string, ids: readonly string[]): Promise<GraphEntityRecord[]> {
    if (ids.length === 0) return []
    const byId = new Map((await this.graph.entitiesByIds(agentId, ids)).map((e) => [e.id, e]))
    return ids.flatMap((id) => {
      const e = byId.get(id)
      return e ? [e] : []
    })
  }

  /** Relationships with their ends (from `known` when given) and sources, in the order given. */
  private async describe(
    agentId: string,
    rows: readonly GraphRelationshipRecord[],
    known: Map<string, GraphEntityRecord> = new Map(),
  ): Promise<RelationshipView[]> {
    if (rows.length === 0) return []
    const ends = new Map(known)
    const missing = [...new Set(rows.flatMap((r) => [r.sourceId, r.targetId]))].filter((id) => !ends.has(id))
    for (const e of await this.graph.entitiesByIds(agentId, missing)) ends.set(e.id, e)
    const evidence = await this.graph.evidenceOf(agentId, { relationshipIds: rows.map((r) => r.id) })
    const read = await relationshipSourceReader(this.recall, agentId, evidence, this.clock.now())
    const sources = new Map<string, RelationshipSource[]>()
    for (const ev of evidence) {
      if (!ev.relationshipId) continue
      const list = sources.get(ev.relationshipId) ?? []
      list.push(read(ev))
      sources.set(ev.relationshipId, list)
    }
    return rows.flatMap((relationship) => {
      const source = ends.get(relationship.sourceId)
      const target = ends.get(relationship.targetId)
      return source && target
        ? [{ relationship, source, target, sources: sources.get(relationship.id) ?? [] }]
        : []
    })
  }

  private async refuseNameTaken(
    graph: GraphRepository,
    agentId: string,
    type: EntityType,
    name: string,
    self: string | null,
  ): Promise<void> {
    const taken = (await graph.entitiesByName(agentId, normalizeEntityName(name))).find(
      (e) => e.type === type && e.id !== self,
    )
    if (taken) {
      throw new ValidationError([
        {
          field: 'name',
          message: `another ${type} is already named "${name}" (${taken.id}): update or merge that one`,
        },
      ])
    }
  }

  private async assertRoomForEdge(graph: GraphRepository, agentId: string, entityId: string, field: string) {
    const edges = await graph.countEdgesOf(agentId, entityId)
    if (edges >= this.limits.maxEdgesPerEntity)
      throw this.input.tooMany(
        field,
        this.limits.maxEdgesPerEntity,
        `entity ${entityId} already has ${edges} relationships`,
      )
  }

  private timeOf(read: GraphReadTime): GraphTime {
    const now = this.clock.now()
    return { asOf: read.asOf ?? now, knownAt: read.knownAt ?? now }
  }
}

// The knowledge graph (issue 15): entities, bi-temporal relationships, neighbourhoods and paths for
// an agent's key; an operator's corrections (create, update, merge, retire, delete) for admin keys.
// Every field answers through the operations layer, like the SDK's embedded client.
import type { OutputOf } from '@engram/contract'
import { ENTITY_TYPES, GRAPH_ORIGINS } from '@engram/core'
import type { QueryOrMutationName } from '@engram/engine'
import { builder } from '../builder.ts'
import type { Context } from '../context.ts'
import { operate } from '../operations.ts'

export const EntityTypeEnum = builder.enumType('EntityType', {
  description: 'What an entity of the knowledge graph is.',
  values: ENTITY_TYPES,
})

const GraphOriginEnum = builder.enumType('GraphOrigin', {
  description:
    'FORMED: built by memory formation, removed with its last source memory or message. MANUAL: an operator’s, kept until an operator removes it.',
  values: GRAPH_ORIGINS,
})

type Entity = OutputOf<'graphEntity'>
type Relationship = OutputOf<'graphRelationship'>

export const GraphEntityRef = builder.objectRef<Entity>('GraphEntity').implement({
  description: 'A person, company, place, project, tool, concept or event of an agent’s knowledge graph.',
  fields: (t) => ({
    id: t.exposeID('id'),
    agentId: t.exposeID('agentId'),
    userId: t.exposeString('userId', {
      nullable: true,
      description: 'The user it was learnt about; null for the agent’s own memories.',
    }),
    type: t.field({ type: EntityTypeEnum, resolve: (e) => e.type }),
    name: t.exposeString('name', { description: 'The canonical name.' }),
    aliases: t.exposeStringList('aliases', { description: 'Other names of the same entity.' }),
    summary: t.exposeString('summary', { nullable: true }),
    mentionCount: t.exposeInt('mentionCount', { description: 'Memories and messages that named it.' }),
    origin: t.field({ type: GraphOriginEnum, resolve: (e) => e.origin }),
    firstSeenAt: t.expose('firstSeenAt', { type: 'DateTime' }),
    lastSeenAt: t.expose('lastSeenAt', { type: 'DateTime' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
})

const GraphEntityEndRef = builder.objectRef<Relationship['source']>('GraphEntityEnd').implement({
  description: 'An end of a relationship: enough to name and draw it.',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    type: t.field({ type: EntityTypeEnum, resolve: (e) => e.type }),
  }),
})

const GraphSourceRef = builder.objectRef<Relationship['sources'][number]>('GraphSource').implement({
  description: 'A memory and/or a message a relationship was learnt from.',
  fields: (t) => ({
    memoryId: t.exposeString('memoryId', { nullable: true }),
    messageId: t.exposeString('messageId', { nullable: true }),
    conversationId: t.exposeString('conversationId', {
      nullable: true,
      description:
        'The conversation the message belongs to (null for a memory alone or a message deleted since).',
    }),
    excerpt: t.exposeString('excerpt', {
      nullable: true,
      description:
        'The memory’s content, else the message’s text, as stored (after the privacy guard’s redaction): its first 240 characters. Null when the row was deleted since.',
    }),
    at: t.expose('at', {
      type: 'DateTime',
      nullable: true,
      description: 'When the memory was created, else when the message was said.',
    }),
  }),
})

export const GraphRelationshipRef = builder.objectRef<Relationship>('GraphRelationship').implement({
  description:
    'A relationship between two entities with two clocks: valid time (validFrom/validUntil, when it was true in the world) and system time (learntAt/retiredAt, when Engram learnt it and stopped believing it).',
  fields: (t) => ({
    id: t.exposeID('id'),
    agentId: t.exposeID('agentId'),
    userId: t.exposeString('userId', { nullable: true }),
    source: t.field({ type: GraphEntityEndRef, resolve: (r) => r.source }),
    relation: t.exposeString('relation', { description: 'Lower case, single spaces: "works at".' }),
    target: t.field({ type: GraphEntityEndRef, resolve: (r) => r.target }),
    confidence: t.exposeFloat('confidence'),
    validFrom: t.expose('validFrom', { type: 'DateTime', nullable: true }),
    validUntil: t.expose('validUntil', {
      type: 'DateTime',
      nullable: true,
      description: 'Set when a newer contradicting fact ended it (see supersededById) or an operator did.',
    }),
    learntAt: t.expose('learntAt', { type: 'DateTime' }),
    retiredAt: t.expose('retiredAt', { type: 'DateTime', nullable: true }),
    retiredReason: t.exposeString('retiredReason', { nullable: true }),
    supersededById: t.exposeString('supersededById', { nullable: true }),
    current: t.exposeBoolean('current', { description: 'Holds now: valid now and not retired.' }),
    origin: t.field({ type: GraphOriginEnum, resolve: (r) => r.origin }),
    sources: t.field({ type: [GraphSourceRef], resolve: (r) => r.sources }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
})

const GraphEntityMatchRef = builder
  .objectRef<OutputOf<'graphEntities'>['matches'][number]>('GraphEntityMatch')
  .implement({
    fields: (t) => ({
      entity: t.field({ type: GraphEntityRef, resolve: (m) => m.entity }),
      score: t.exposeFloat('score', {
        description:
          '1 for an exact name or alias; 0.5-0.95 for shared words (0.5 + 0.45 × shared / words of the longer name); below 0.5 for a close spelling.',
      }),
    }),
  })

const GraphEntityPageRef = builder.objectRef<OutputOf<'graphEntities'>>('GraphEntityPage').implement({
  fields: (t) => ({
    totalCount: t.exposeInt('totalCount'),
    matches: t.field({ type: [GraphEntityMatchRef], resolve: (p) => p.matches }),
  }),
})

const GraphRelationshipPageRef = builder
  .objectRef<OutputOf<'graphRelationships'>>('GraphRelationshipPage')
  .implement({
    fields: (t) => ({
      totalCount: t.exposeInt('totalCount'),
      relationships: t.field({ type: [GraphRelationshipRef], resolve: (p) => p.relationships }),
    }),
  })

const GraphNodeRef = builder
  .objectRef<OutputOf<'graphNeighbourhood'>['nodes'][number]>('GraphNode')
  .implement({
    fields: (t) => ({
      entity: t.field({ type: GraphEntityRef, resolve: (n) => n.entity }),
      depth: t.exposeInt('depth', { description: 'Hops from the centre (0 for the centre).' }),
    }),
  })

const GraphNeighbourhoodRef = builder
  .objectRef<OutputOf<'graphNeighbourhood'>>('GraphNeighbourhood')
  .implement({
    fields: (t) => ({
      center: t.field({
        type: GraphEntityRef,
        nullable: true,
        description: 'Null when no entity matched.',
        resolve: (n) => n.center,
      }),
      nodes: t.field({ type: [GraphNodeRef], resolve: (n) => n.nodes }),
      relationships: t.field({ type: [GraphRelationshipRef], resolve: (n) => n.relationships }),
      truncated: t.exposeBoolean('truncated', {
        description:
          'True when a limit cut the walk: a dense hub’s frontier, the edges read per level, or `limit`.',
      }),
      truncation: t.exposeString('truncation', { nullable: true, description: 'What was cut and why.' }),
      asOf: t.expose('asOf', { type: 'DateTime' }),
      knownAt: t.expose('knownAt', { type: 'DateTime' }),
    }),
  })

const GraphPathRef = builder.objectRef<OutputOf<'graphPaths'>['paths'][number]>('GraphPath').implement({
  fields: (t) => ({
    entities: t.field({ type: [GraphEntityEndRef], resolve: (p) => p.entities }),
    relationships: t.field({ type: [GraphRelationshipRef], resolve: (p) => p.relationships }),
    length: t.exposeInt('length', { description: 'Hops.' }),
  }),
})

const GraphPathsRef = builder.objectRef<OutputOf<'graphPaths'>>('GraphPaths').implement({
  fields: (t) => ({
    from: t.field({ type: GraphEntityRef, nullable: true, resolve: (p) => p.from }),
    to: t.field({ type: GraphEntityRef, nullable: true, resolve: (p) => p.to }),
    paths: t.field({ type: [GraphPathRef], description: 'Shortest first.', resolve: (p) => p.paths }),
    truncated: t.exposeBoolean('truncated'),
    truncation: t.exposeString('truncation', { nullable: true }),
  }),
})

const GraphDeletedRef = builder.objectRef<OutputOf<'deleteGraphEntity'>>('GraphDeleted').implement({
  fields: (t) => ({ id: t.exposeID('id'), deleted: t.exposeBoolean('deleted') }),
})

const CreateGraphEntityInput = builder.inputType('CreateGraphEntityInput', {
  fields: (t) => ({
    agentId: t.id(),
    type: t.field({ type: EntityTypeEnum, required: true }),
    name: t.string({ required: true }),
    aliases: t.stringList(),
    summary: t.string(),
    userId: t.string(),
  }),
})

const UpdateGraphEntityInput = builder.inputType('UpdateGraphEntityInput', {
  fields: (t) => ({
    agentId: t.id(),
    id: t.id({ required: true }),
    type: t.field({ type: EntityTypeEnum }),
    name: t.string(),
    aliases: t.stringList({ description: 'Replaces the aliases.' }),
    summary: t.string({ description: 'null clears it.' }),
  }),
})

const CreateGraphRelationshipInput = builder.inputType('CreateGraphRelationshipInput', {
  fields: (t) => ({
    agentId: t.id(),
    sourceId: t.id({ required: true }),
    relation: t.string({ required: true }),
    targetId: t.id({ required: true }),
    confidence: t.float({ description: 'Default 1 (an operator’s word).' }),
    validFrom: t.field({ type: 'DateTime' }),
    validUntil: t.field({ type: 'DateTime' }),
  }),
})

const UpdateGraphRelationshipInput = builder.inputType('UpdateGraphRelationshipInput', {
  fields: (t) => ({
    agentId: t.id(),
    id: t.id({ required: true }),
    sourceId: t.id(),
    relation: t.string(),
    targetId: t.id(),
    confidence: t.float(),
    validFrom: t.field({ type: 'DateTime', description: 'null: unbounded; left out: unchanged.' }),
    validUntil: t.field({ type: 'DateTime', description: 'null: unbounded; left out: unchanged.' }),
  }),
})

const RetireGraphRelationshipInput = builder.inputType('RetireGraphRelationshipInput', {
  fields: (t) => ({
    agentId: t.id(),
    id: t.id({ required: true }),
    reason: t.string(),
  }),
})

/** GraphQL's DateTime arrives as a Date; the catalog takes ISO strings. */
function wireArgs(args: Record<string, unknown> | null | undefined): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(args ?? {}).map(([key, value]) => [
      key,
      value instanceof Date ? value.toISOString() : value,
    ]),
  )
}

const graphOperation =
  <N extends QueryOrMutationName>(name: N, nullMeans: readonly string[] = []) =>
  (_root: unknown, args: Record<string, unknown>, ctx: Context) =>
    operate(ctx, name, wireArgs(args), nullMeans)
const graphInputOperation =
  <N extends QueryOrMutationName>(name: N, nullMeans: readonly string[] = []) =>
  (_root: unknown, args: { input: Record<string, unknown> }, ctx: Context) =>
    operate(ctx, name, wireArgs(args.input), nullMeans)

builder.queryFields((t) => ({
  graphEntities: t.field({
    type: GraphEntityPageRef,
    errors: {},
    description:
      'Entities of the agent’s knowledge graph by name (fuzzy: exact names and aliases first, then shared words, then close spellings) and type; most mentioned first without a name. Only those Engram had learnt by knownAt; no asOf, as an entity has no validity of its own (its relationships do).',
    args: {
      agentId: t.arg.id(),
      name: t.arg.string(),
      type: t.arg({ type: EntityTypeEnum }),
      userId: t.arg.string(),
      knownAt: t.arg({
        type: 'DateTime',
        description: 'System time: entities learnt (createdAt) after it are left out; now when not given.',
      }),
      offset: t.arg.int(),
      limit: t.arg.int({ description: '1-500, 50 when not given.' }),
    },
    resolve: graphOperation('graphEntities'),
  }),
  graphEntity: t.field({
    type: GraphEntityRef,
    errors: {},
    description:
      'One entity of the knowledge graph by id, as Engram knew it at knownAt (default now): NOT_FOUND when it was learnt later.',
    args: {
      agentId: t.arg.id(),
      id: t.arg.id({ required: true }),
      knownAt: t.arg({
        type: 'DateTime',
        description: 'System time: an entity learnt (createdAt) after it is NOT_FOUND; now when not given.',
      }),
    },
    resolve: graphOperation('graphEntity'),
  }),
  graphRelationships: t.field({
    type: GraphRelationshipPageRef,
    errors: {},
    description:
      'Relationships by relation type and/or entity (id or fuzzy name), highest confidence first: those holding at asOf (valid time) as known at knownAt (system time), both default now; includeHistory adds ended and retired ones.',
    args: {
      agentId: t.arg.id(),
      relation: t.arg.string(),
      entityId: t.arg.id(),
      name: t.arg.string(),
      minConfidence: t.arg.float(),
      includeHistory: t.arg.boolean(),
      asOf: t.arg({ type: 'DateTime' }),
      knownAt: t.arg({ type: 'DateTime' }),
      offset: t.arg.int(),
      limit: t.arg.int({ description: '1-500, 50 when not given.' }),
    },
    resolve: graphOperation('graphRelationships'),
  }),
  graphRelationship: t.field({
    type: GraphRelationshipRef,
    errors: {},
    description:
      'One relationship by id, with its validity and the memories and messages it was learnt from.',
    args: { agentId: t.arg.id(), id: t.arg.id({ required: true }) },
    resolve: graphOperation('graphRelationship'),
  }),
  graphNeighbourhood: t.field({
    type: GraphNeighbourhoodRef,
    errors: {},
    description:
      'The entities and relationships around one entity (by id or fuzzy name) up to `depth` hops (default 2, at most 4), as of a time. The walk is bounded per level; `truncation` says what a dense hub cut.',
    args: {
      agentId: t.arg.id(),
      entityId: t.arg.id(),
      name: t.arg.string(),
      depth: t.arg.int(),
      types: t.arg({ type: [EntityTypeEnum] }),
      relations: t.arg.stringList(),
      minConfidence: t.arg.float(),
      asOf: t.arg({ type: 'DateTime' }),
      knownAt: t.arg({ type: 'DateTime' }),
      limit: t.arg.int({ description: 'Entities answered at most, the centre included (1-500, 50).' }),
    },
    resolve: graphOperation('graphNeighbourhood'),
  }),
  graphPaths: t.field({
    type: GraphPathsRef,
    errors: {},
    description:
      'The shortest chains of relationships linking two entities (at most `maxDepth` hops, 4), as of a time.',
    args: {
      agentId: t.arg.id(),
      fromId: t.arg.id(),
      fromName: t.arg.string(),
      toId: t.arg.id(),
      toName: t.arg.string(),
      maxDepth: t.arg.int(),
      asOf: t.arg({ type: 'DateTime' }),
      knownAt: t.arg({ type: 'DateTime' }),
      limit: t.arg.int({ description: 'Paths answered at most (1-20, 5).' }),
    },
    resolve: graphOperation('graphPaths'),
  }),
}))

builder.mutationFields((t) => ({
  createGraphEntity: t.field({
    type: GraphEntityRef,
    errors: {},
    description: 'Admin: adds an entity to an agent’s graph by hand (origin MANUAL).',
    args: { input: t.arg({ type: CreateGraphEntityInput, required: true }) },
    resolve: graphInputOperation('createGraphEntity'),
  }),
  updateGraphEntity: t.field({
    type: GraphEntityRef,
    errors: {},
    description: 'Admin: corrects an entity’s type, canonical name, aliases or summary.',
    args: { input: t.arg({ type: UpdateGraphEntityInput, required: true }) },
    resolve: graphInputOperation('updateGraphEntity', ['summary']),
  }),
  mergeGraphEntities: t.field({
    type: GraphEntityRef,
    errors: {},
    description:
      'Admin: makes two entities one; `fromId`’s relationships, names and sources move onto `intoId`, and `fromId` is deleted.',
    args: { agentId: t.arg.id(), fromId: t.arg.id({ required: true }), intoId: t.arg.id({ required: true }) },
    resolve: graphOperation('mergeGraphEntities'),
  }),
  deleteGraphEntity: t.field({
    type: GraphDeletedRef,
    errors: {},
    description: 'Admin: deletes an entity and every relationship touching it.',
    args: { agentId: t.arg.id(), id: t.arg.id({ required: true }) },
    resolve: graphOperation('deleteGraphEntity'),
  }),
  createGraphRelationship: t.field({
    type: GraphRelationshipRef,
    errors: {},
    description:
      'Admin: adds a relationship by hand. The same current relationship again raises its confidence; a new one of an exclusive relation (works at, lives in...) ends the validity of the one it contradicts.',
    args: { input: t.arg({ type: CreateGraphRelationshipInput, required: true }) },
    resolve: graphInputOperation('createGraphRelationship'),
  }),
  updateGraphRelationship: t.field({
    type: GraphRelationshipRef,
    errors: {},
    description: 'Admin: corrects a relationship’s ends, relation, confidence or validity.',
    args: { input: t.arg({ type: UpdateGraphRelationshipInput, required: true }) },
    resolve: graphInputOperation('updateGraphRelationship', ['validFrom', 'validUntil']),
  }),
  retireGraphRelationship: t.field({
    type: GraphRelationshipRef,
    errors: {},
    description:
      'Admin: marks a relationship as wrong. Engram stops believing it now; reads with an earlier knownAt still see it.',
    args: { input: t.arg({ type: RetireGraphRelationshipInput, required: true }) },
    resolve: graphInputOperation('retireGraphRelationship'),
  }),
  deleteGraphRelationship: t.field({
    type: GraphDeletedRef,
    errors: {},
    description: 'Admin: deletes a relationship for good, with its history.',
    args: { agentId: t.arg.id(), id: t.arg.id({ required: true }) },
    resolve: graphOperation('deleteGraphRelationship'),
  }),
}))

// The knowledge graph's entity and relationship as a GRAPH search hit carries them (issue 15),
// over the contract's graph shapes. The graph operations' schema file (graph.ts) describes the
// same shapes for its queries: when both are on one branch, this file's refs give way to those.
import type { OutputOf } from '@engram/contract'
import { builder } from '../builder.ts'

type Hit = OutputOf<'search'>['hits'][number]
type Entity = NonNullable<Hit['entity']>
type Relationship = NonNullable<Hit['relationship']>

const ENTITY_TYPES = ['PERSON', 'COMPANY', 'PLACE', 'PROJECT', 'TOOL', 'CONCEPT', 'EVENT'] as const
export const EntityTypeEnum = builder.enumType('EntityType', { values: ENTITY_TYPES })
export const GraphOriginEnum = builder.enumType('GraphOrigin', {
  description: 'FORMED: built by memory formation, removed with its last source. MANUAL: an operator’s.',
  values: ['FORMED', 'MANUAL'] as const,
})

export const GraphEntityRef = builder.objectRef<Entity>('GraphEntity').implement({
  description: 'A node of the knowledge graph: a person, company, place, project, tool, concept or event.',
  fields: (t) => ({
    id: t.exposeID('id'),
    agentId: t.exposeID('agentId'),
    userId: t.exposeString('userId', { nullable: true }),
    type: t.field({ type: EntityTypeEnum, resolve: (e) => e.type }),
    name: t.exposeString('name'),
    aliases: t.exposeStringList('aliases'),
    summary: t.exposeString('summary', { nullable: true }),
    mentionCount: t.exposeInt('mentionCount'),
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
  description: 'Where a relationship was learnt: a memory, a message, or both.',
  fields: (t) => ({
    memoryId: t.exposeString('memoryId', { nullable: true }),
    messageId: t.exposeString('messageId', { nullable: true }),
  }),
})

export const GraphRelationshipRef = builder.objectRef<Relationship>('GraphRelationship').implement({
  description:
    'An edge of the knowledge graph, bi-temporal: validFrom/validUntil say when it held in the world, learntAt/retiredAt when Engram believed it.',
  fields: (t) => ({
    id: t.exposeID('id'),
    agentId: t.exposeID('agentId'),
    userId: t.exposeString('userId', { nullable: true }),
    source: t.field({ type: GraphEntityEndRef, resolve: (r) => r.source }),
    relation: t.exposeString('relation'),
    target: t.field({ type: GraphEntityEndRef, resolve: (r) => r.target }),
    confidence: t.exposeFloat('confidence'),
    validFrom: t.expose('validFrom', { type: 'DateTime', nullable: true }),
    validUntil: t.expose('validUntil', { type: 'DateTime', nullable: true }),
    learntAt: t.expose('learntAt', { type: 'DateTime' }),
    retiredAt: t.expose('retiredAt', { type: 'DateTime', nullable: true }),
    retiredReason: t.exposeString('retiredReason', { nullable: true }),
    supersededById: t.exposeID('supersededById', { nullable: true }),
    current: t.exposeBoolean('current', { description: 'Holds now: valid now and not retired.' }),
    origin: t.field({ type: GraphOriginEnum, resolve: (r) => r.origin }),
    sources: t.field({ type: [GraphSourceRef], resolve: (r) => r.sources }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
})

import { z } from 'zod'
import { CONTRACT_LIMITS as L } from '../limits.ts'
import { agent, DateTimeSchema, IdSchema, limitIssue, unit, userId } from './fields.ts'

// The knowledge graph (issue 15): inputs and outputs of its operations, one file for the family.

export const EntityTypeSchema = z.enum(['PERSON', 'COMPANY', 'PLACE', 'PROJECT', 'TOOL', 'CONCEPT', 'EVENT'])
export const GraphOriginSchema = z.enum(['FORMED', 'MANUAL'])

const notBlank = (max: number) =>
  z
    .string()
    .max(max)
    .refine((s) => s.trim().length > 0, { message: 'must not be blank', ...limitIssue(1) })
export const entityName = notBlank(L.maxEntityNameChars)
export const relationName = notBlank(L.maxRelationChars)
const aliases = z.array(entityName).max(L.maxAliasesPerEntity)
const summary = z.string().max(L.maxEntitySummaryChars)

/**
 * When a graph read is made. `asOf` is valid time (what was true in the world then), `knownAt`
 * system time (what Engram believed then); both default to now.
 */
const graphTime = {
  asOf: DateTimeSchema.optional(),
  knownAt: DateTimeSchema.optional(),
}
/** An entity named by id or by name (fuzzy: the best match of the agent's entities). */
const entityRef = {
  entityId: IdSchema.optional(),
  name: entityName.optional(),
}
const depth = z.number().int().min(1).max(L.maxGraphDepth)
const resultSize = z.number().int().min(1).max(L.maxGraphResultSize)
const offset = z.number().int().min(0).max(1_000_000)

// --- inputs ------------------------------------------------------------------------------------

/**
 * When an entity read is made: system time only. An entity has no validity of its own (its
 * relationships do), so there is no asOf: `knownAt` (default now) hides entities Engram learnt
 * after it.
 */
const entityTime = { knownAt: DateTimeSchema.optional() }

export const GraphEntityByIdInputSchema = z.object({ ...agent, id: IdSchema })
/** graphEntity's read: the by-id input and when it is read (deleteGraphEntity takes no time). */
export const GraphEntityReadInputSchema = GraphEntityByIdInputSchema.extend(entityTime)
export const GraphRelationshipByIdInputSchema = z.object({ ...agent, id: IdSchema })

export const GraphEntitiesInputSchema = z.object({
  ...agent,
  /** Fuzzy: exact names and aliases first, then shared words, then close spellings. */
  name: entityName.optional(),
  type: EntityTypeSchema.optional(),
  userId: userId.optional(),
  ...entityTime,
  offset: offset.optional(),
  limit: resultSize.optional(),
})

export const GraphRelationshipsInputSchema = z.object({
  ...agent,
  /** A relation type ("works at"); case and spacing do not matter. */
  relation: relationName.optional(),
  ...entityRef,
  minConfidence: unit.optional(),
  /** Also edges that no longer hold at the read's time (ended or retired), for the record. */
  includeHistory: z.boolean().optional(),
  ...graphTime,
  offset: offset.optional(),
  limit: resultSize.optional(),
})

export const GraphNeighbourhoodInputSchema = z.object({
  ...agent,
  ...entityRef,
  /** Hops from the entity (default 2, at most 4). */
  depth: depth.optional(),
  types: z.array(EntityTypeSchema).max(7).optional(),
  relations: z.array(relationName).max(50).optional(),
  minConfidence: unit.optional(),
  ...graphTime,
  /** Entities answered at most, the centre included (default 50). */
  limit: resultSize.optional(),
})

export const GraphPathsInputSchema = z.object({
  ...agent,
  fromId: IdSchema.optional(),
  fromName: entityName.optional(),
  toId: IdSchema.optional(),
  toName: entityName.optional(),
  /** Longest path in hops (default and at most 4). */
  maxDepth: depth.optional(),
  ...graphTime,
  /** Shortest paths answered at most (default 5, at most 20). */
  limit: z.number().int().min(1).max(L.maxGraphPaths).optional(),
})

export const CreateGraphEntityInputSchema = z.object({
  ...agent,
  type: EntityTypeSchema,
  name: entityName,
  aliases: aliases.optional(),
  summary: summary.optional(),
  userId: userId.optional(),
})
export const UpdateGraphEntityInputSchema = z.object({
  ...agent,
  id: IdSchema,
  type: EntityTypeSchema.optional(),
  name: entityName.optional(),
  aliases: aliases.optional(),
  summary: summary.nullable().optional(),
})
/** Two nodes that are one entity: `fromId`'s edges, names and sources move onto `intoId`. */
export const MergeGraphEntitiesInputSchema = z.object({ ...agent, fromId: IdSchema, intoId: IdSchema })

export const CreateGraphRelationshipInputSchema = z.object({
  ...agent,
  sourceId: IdSchema,
  relation: relationName,
  targetId: IdSchema,
  confidence: unit.optional(),
  validFrom: DateTimeSchema.optional(),
  validUntil: DateTimeSchema.optional(),
})
export const UpdateGraphRelationshipInputSchema = z.object({
  ...agent,
  id: IdSchema,
  sourceId: IdSchema.optional(),
  relation: relationName.optional(),
  targetId: IdSchema.optional(),
  confidence: unit.optional(),
  validFrom: DateTimeSchema.nullable().optional(),
  validUntil: DateTimeSchema.nullable().optional(),
})
/** An edge that was wrong: Engram stops believing it now (its history stays readable with knownAt). */
export const RetireGraphRelationshipInputSchema = z.object({
  ...agent,
  id: IdSchema,
  reason: z.string().max(L.maxRetiredReasonChars).optional(),
})

// --- outputs -----------------------------------------------------------------------------------

const date = z.string()

export const GraphEntitySchema = z.object({
  id: z.string(),
  agentId: z.string(),
  userId: z.string().nullable(),
  type: EntityTypeSchema,
  name: z.string(),
  aliases: z.array(z.string()),
  summary: z.string().nullable(),
  mentionCount: z.number().int(),
  origin: GraphOriginSchema,
  firstSeenAt: date,
  lastSeenAt: date,
  createdAt: date,
  updatedAt: date,
})
/** An end of a relationship, enough to draw and name it. */
export const GraphEntityRefSchema = z.object({ id: z.string(), name: z.string(), type: EntityTypeSchema })
/**
 * A memory and/or a message a relationship was learnt from, read back so an operator sees why it
 * is believed. A row deleted since answers with its ids alone (null excerpt and date).
 */
export const GraphSourceSchema = z.object({
  memoryId: z.string().nullable(),
  messageId: z.string().nullable(),
  /** The conversation the message belongs to (null for a memory alone or a message gone). */
  conversationId: z.string().nullable(),
  /** The memory's content, else the message's text, as stored (after redaction): its first 240 characters. */
  excerpt: z.string().nullable(),
  /** When the memory was created, else when the message was said. */
  at: date.nullable(),
})
export const GraphRelationshipSchema = z.object({
  id: z.string(),
  agentId: z.string(),
  userId: z.string().nullable(),
  source: GraphEntityRefSchema,
  relation: z.string(),
  target: GraphEntityRefSchema,
  confidence: z.number(),
  validFrom: date.nullable(),
  validUntil: date.nullable(),
  learntAt: date,
  retiredAt: date.nullable(),
  retiredReason: z.string().nullable(),
  supersededById: z.string().nullable(),
  /** Holds now: valid now and not retired. */
  current: z.boolean(),
  origin: GraphOriginSchema,
  /** The memories and messages it was learnt from. */
  sources: z.array(GraphSourceSchema),
  createdAt: date,
  updatedAt: date,
})
export const GraphEntityMatchSchema = z.object({
  entity: GraphEntitySchema,
  /** 1 for an exact name or alias, lower for shared words and close spellings. */
  score: z.number(),
})
export const GraphEntityPageSchema = z.object({
  totalCount: z.number().int(),
  matches: z.array(GraphEntityMatchSchema),
})
export const GraphRelationshipPageSchema = z.object({
  totalCount: z.number().int(),
  relationships: z.array(GraphRelationshipSchema),
})
export const GraphNodeSchema = z.object({
  entity: GraphEntitySchema,
  /** Hops from the centre (0 for the centre). */
  depth: z.number().int(),
})
export const GraphNeighbourhoodSchema = z.object({
  /** Null when no entity matched. */
  center: GraphEntitySchema.nullable(),
  nodes: z.array(GraphNodeSchema),
  relationships: z.array(GraphRelationshipSchema),
  /** True when a limit cut the result: a dense hub's frontier, the edges read per level, or `limit`. */
  truncated: z.boolean(),
  /** What was cut and why, for a person or a model to read; null when nothing was. */
  truncation: z.string().nullable(),
  asOf: date,
  knownAt: date,
})
export const GraphPathSchema = z.object({
  entities: z.array(GraphEntityRefSchema),
  relationships: z.array(GraphRelationshipSchema),
  length: z.number().int(),
})
export const GraphPathsSchema = z.object({
  from: GraphEntitySchema.nullable(),
  to: GraphEntitySchema.nullable(),
  /** Shortest first. */
  paths: z.array(GraphPathSchema),
  truncated: z.boolean(),
  truncation: z.string().nullable(),
})
export const GraphDeletedSchema = z.object({ id: z.string(), deleted: z.boolean() })

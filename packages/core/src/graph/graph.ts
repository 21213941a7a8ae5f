import { z } from 'zod'

/**
 * The knowledge graph of spec 003 (issue 15): entities and the relationships between them, kept
 * bi-temporal after Graphiti. Two clocks per relationship:
 * - valid time (`validFrom`/`validUntil`): when the fact was true in the world. A newer fact that
 *   contradicts it ends its validity; it stays known, so "as of" a past date still answers with it.
 * - system time (`learntAt`/`retiredAt`): when Engram learnt the fact and when it stopped believing
 *   it (an operator retired it as wrong). A retired edge is kept for the record but answers no read
 *   made at or after its retirement.
 * This file holds the pure rules every adapter and door share: types, limits, name normalisation
 * and the temporal predicate.
 */

export const ENTITY_TYPES = ['PERSON', 'COMPANY', 'PLACE', 'PROJECT', 'TOOL', 'CONCEPT', 'EVENT'] as const
export type EntityType = (typeof ENTITY_TYPES)[number]

/** Formed: built by memory formation from memories and messages, removed with its last source. Manual: an operator's, kept until an operator removes it. */
export const GRAPH_ORIGINS = ['FORMED', 'MANUAL'] as const
export type GraphOrigin = (typeof GRAPH_ORIGINS)[number]

// Every size is bounded; each limit is configurable and travels in the typed error.
export const GraphLimitsSchema = z.object({
  maxEntityNameChars: z.number().int().min(8).max(2_000).default(200),
  maxAliasesPerEntity: z.number().int().min(1).max(1_000).default(50),
  maxEntitySummaryChars: z.number().int().min(1).max(100_000).default(2_000),
  maxRelationChars: z.number().int().min(4).max(1_000).default(100),
  /** Relationships touching one entity; formation stops adding (and says so) past it. */
  maxEdgesPerEntity: z.number().int().min(1).max(1_000_000).default(1_000),
  maxEntitiesPerAgent: z.number().int().min(1).max(10_000_000).default(100_000),
  /** Traversal depth: spec 003's default 2, at most 4. */
  defaultDepth: z.number().int().min(1).max(4).default(2),
  maxDepth: z.number().int().min(1).max(8).default(4),
  /** Entities one graph read returns (neighbourhood, search). */
  defaultResultSize: z.number().int().min(1).max(10_000).default(50),
  maxResultSize: z.number().int().min(1).max(10_000).default(500),
  /** Entities one traversal level expands; a dense hub past it is cut and the result says so. */
  maxFrontier: z.number().int().min(1).max(100_000).default(200),
  /** Edges read per traversal level, whatever the frontier. */
  maxEdgesPerLevel: z.number().int().min(1).max(1_000_000).default(5_000),
  maxPaths: z.number().int().min(1).max(100).default(20),
  defaultPaths: z.number().int().min(1).max(100).default(5),
})
export type GraphLimits = z.infer<typeof GraphLimitsSchema>
export const DEFAULT_GRAPH_LIMITS: GraphLimits = GraphLimitsSchema.parse({})

/** Case, accents, punctuation and a possessive "'s" do not make a different name. */
export function normalizeEntityName(name: string): string {
  return nameTokens(name).join(' ')
}

/** The words of a name, normalised: what entity lookup and resolution compare. */
export function nameTokens(name: string): string[] {
  return name
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/['’]s\b/g, '')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t.length > 0)
}

/** A relation as stored: lower case, single spaces ("Works  At" and "works at" are one relation). */
export function normalizeRelation(relation: string): string {
  return relation
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()
}

/** The two clocks a graph read is made at: valid time (asOf) and system time (knownAt), both default now. */
export interface GraphTime {
  asOf: Date
  knownAt: Date
}

export interface TemporalEdge {
  validFrom: Date | null
  validUntil: Date | null
  learntAt: Date
  retiredAt: Date | null
}

/**
 * Whether an edge answers a read made at `time`: true in the world at asOf (validFrom ≤ asOf <
 * validUntil, open ends unbounded) and believed at knownAt (learntAt ≤ knownAt < retiredAt).
 * Adapters filter with the same bounds in SQL; the conformance spec checks they agree.
 */
export function edgeHoldsAt(edge: TemporalEdge, time: GraphTime): boolean {
  const asOf = time.asOf.getTime()
  const knownAt = time.knownAt.getTime()
  if (edge.validFrom && edge.validFrom.getTime() > asOf) return false
  if (edge.validUntil && edge.validUntil.getTime() <= asOf) return false
  if (edge.learntAt.getTime() > knownAt) return false
  if (edge.retiredAt && edge.retiredAt.getTime() <= knownAt) return false
  return true
}

/**
 * A relation that holds for one counterpart at a time: per `source` (a person works at one company,
 * lives in one place) or per `target` (a project has one tech lead). A new edge of such a relation
 * ends the validity of the current edge it contradicts instead of overwriting it.
 */
export const ExclusiveRelationSchema = z.object({
  relation: z.string().min(1).max(100),
  per: z.enum(['source', 'target']),
})
export type ExclusiveRelation = z.infer<typeof ExclusiveRelationSchema>

export const DEFAULT_EXCLUSIVE_RELATIONS: readonly ExclusiveRelation[] = [
  { relation: 'works at', per: 'source' },
  { relation: 'lives in', per: 'source' },
  { relation: 'married to', per: 'source' },
  { relation: 'reports to', per: 'source' },
  { relation: 'tech lead on', per: 'target' },
  { relation: 'ceo of', per: 'target' },
]

export interface EdgeEnds {
  sourceId: string
  relation: string
  targetId: string
}

/**
 * The current edges an incoming one contradicts: same exclusive relation, same anchored end, a
 * different other end. The same edge again is a confirmation, not a contradiction.
 */
export function edgesContradictedBy<E extends EdgeEnds>(
  incoming: EdgeEnds,
  current: readonly E[],
  rules: readonly ExclusiveRelation[] = DEFAULT_EXCLUSIVE_RELATIONS,
): E[] {
  const rule = rules.find((r) => normalizeRelation(r.relation) === incoming.relation)
  if (!rule) return []
  return current.filter((edge) => {
    if (edge.relation !== incoming.relation) return false
    if (edge.sourceId === incoming.sourceId && edge.targetId === incoming.targetId) return false
    return rule.per === 'source' ? edge.sourceId === incoming.sourceId : edge.targetId === incoming.targetId
  })
}

/** A confirmation raises confidence by a share of what is missing (spec 004's rule, 20%). */
export function reinforcedConfidence(confidence: number, step = 0.2): number {
  return Math.min(1, confidence + (1 - confidence) * step)
}

import {
  DEFAULT_GRAPH_LIMITS,
  type GraphTime,
  nameTokens,
  normalizeEntityName,
  STOP_WORDS,
} from '@engram/core'
import type {
  GraphEntityRecord,
  GraphRelationshipRecord,
  GraphRepository,
  GraphSource,
} from '../ports/graph.ts'

/**
 * What retrieval reads of the knowledge graph (issue 15): the entities a text names and their
 * neighbourhood one or two hops out. Deliberately narrow: the GraphService (graph-service.ts) is
 * the graph's full reader for the doors (fuzzy search, paths, admin); search and memoryContext
 * only need these two reads, straight on the GraphRepository port, on every query.
 */

/** Hops retrieval walks from the entities a query names (search's expansion, Key relationships). */
export const GRAPH_RECALL_HOPS = 2
/** A hop-2 edge counts this share of a hop-1 edge: one more step away from what the query named. */
const SECOND_HOP_SHARE = 0.5
/**
 * An edge linking two entities the query names is what a multi-hop question is about ("How does
 * Dana know Lee?"); an edge leaving one named entity counts this share.
 */
const ONE_END_NAMED_SHARE = 0.6

/** Entities considered per query: more are never named in one question. */
const NAMED_ENTITY_LIMIT = 10
/** Candidates the token lookup proposes before the names are checked against the text. */
const TOKEN_LOOKUP_LIMIT = 50

/** An entity a text names, and how surely (1: its whole name or an alias; less: a part of its name). */
export interface NamedEntity {
  entity: GraphEntityRecord
  strength: number
}

/** A relationship reached from the named entities, with the hop it was reached at (1 or 2). */
export interface ReachedRelationship {
  relationship: GraphRelationshipRecord
  hop: number
  /** The named entity it was reached from (the strongest when several reach it). */
  from: NamedEntity
}

export interface GraphNeighbourhoodRead {
  named: NamedEntity[]
  /** Each relationship once, at the smallest hop that reached it. */
  relationships: ReachedRelationship[]
  /** Every entity touched (named, and the ends of every reached relationship), by id. */
  entities: Map<string, GraphEntityRecord>
  /** Each touched entity's hops from the named ones (0 for a named entity), and the named entity it was reached from. */
  depth: Map<string, { hops: number; from: NamedEntity }>
  /** True when a hub's edges or the frontier were cut (the caps below). */
  truncated: boolean
}

/** A light suffix strip so "moved"/"moving"/"moves" and "move" meet; names are compared whole. */
export function stemLite(word: string): string {
  if (word.length <= 4) return word
  for (const suffix of ['ing', 'ed', 'es', 's']) {
    if (word.endsWith(suffix) && word.length - suffix.length >= 3) return word.slice(0, -suffix.length)
  }
  return word
}

/** The content words of a text, stemmed lightly, for matching relations and names. */
export function graphTerms(text: string): Set<string> {
  return new Set(
    nameTokens(text)
      .filter((t) => !STOP_WORDS.has(t))
      .map(stemLite),
  )
}

/** Whether `needle` occurs as a contiguous run of `haystack`. */
function containsRun(haystack: readonly string[], needle: readonly string[]): boolean {
  if (needle.length === 0 || needle.length > haystack.length) return false
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer
    return true
  }
  return false
}

/** The words written with a capital in the text: a part of a name counts only as a proper noun. */
function capitalisedTokens(text: string): Set<string> {
  const out = new Set<string>()
  for (const word of text.match(/[\p{L}\p{N}'’]+/gu) ?? [])
    if (/^\p{Lu}/u.test(word)) for (const t of nameTokens(word)) out.add(t)
  return out
}

/**
 * The agent's entities a text names: the token lookup (port's entitiesByTokens) proposes, and an
 * entity is kept when its whole normalised name or an alias occurs in the text as a run of words
 * (strength 1), or when a word of its name (3+ letters, not a stop word) is written capitalised in
 * the text ("Dana" for "Dana Kim": strength = the share of its name's words present, at most 0.8).
 */
export async function entitiesNamedIn(
  graph: GraphRepository,
  agentId: string,
  text: string,
  limit = NAMED_ENTITY_LIMIT,
): Promise<NamedEntity[]> {
  const tokens = nameTokens(text)
  const lookup = [...new Set(tokens.filter((t) => !STOP_WORDS.has(t) && t.length >= 2))]
  if (lookup.length === 0) return []
  const capitalised = capitalisedTokens(text)
  const found: NamedEntity[] = []
  for (const entity of await graph.entitiesByTokens(agentId, lookup, TOKEN_LOOKUP_LIMIT)) {
    const names = [entity.normalizedName, ...entity.aliases.map(normalizeEntityName)]
    if (names.some((n) => containsRun(tokens, n.split(' ')))) {
      found.push({ entity, strength: 1 })
      continue
    }
    let best = 0
    for (const name of names) {
      const parts = name.split(' ').filter((p) => p.length >= 3 && !STOP_WORDS.has(p))
      if (parts.length === 0) continue
      const present = parts.filter((p) => capitalised.has(p)).length
      best = Math.max(best, present / name.split(' ').length)
    }
    if (best > 0) found.push({ entity, strength: Math.min(0.8, best) })
  }
  // Strongest first; among equals the most mentioned (the port's order) stays first.
  return found.sort((a, b) => b.strength - a.strength).slice(0, limit)
}

/**
 * The neighbourhood of the named entities: their relationships that hold at `time` (hop 1) and,
 * when `hops` is 2, those of the entities at the other ends (hop 2). Iterative, level by level, with
 * the graph limits' caps: at most `maxEdgesPerLevel` edges read per level (the port answers highest
 * confidence first, so a hub keeps its surest edges) and `maxFrontier` entities expanded.
 */
export async function neighbourhoodOf(
  graph: GraphRepository,
  agentId: string,
  named: readonly NamedEntity[],
  options: { hops: 1 | 2; time: GraphTime; maxEdgesPerLevel?: number; maxFrontier?: number },
): Promise<GraphNeighbourhoodRead> {
  const maxEdges = options.maxEdgesPerLevel ?? DEFAULT_GRAPH_LIMITS.maxEdgesPerLevel
  const maxFrontier = options.maxFrontier ?? DEFAULT_GRAPH_LIMITS.maxFrontier
  const entities = new Map<string, GraphEntityRecord>(named.map((n) => [n.entity.id, n.entity]))
  const reached = new Map<string, ReachedRelationship>()
  // Which named entity each frontier entity was reached from.
  let frontier = new Map<string, NamedEntity>(named.map((n) => [n.entity.id, n]))
  const visited = new Set(frontier.keys())
  const depth = new Map<string, { hops: number; from: NamedEntity }>(
    named.map((n) => [n.entity.id, { hops: 0, from: n }]),
  )
  let truncated = false
  for (let hop = 1; hop <= options.hops && frontier.size > 0; hop++) {
    let ids = [...frontier.keys()]
    if (ids.length > maxFrontier) {
      truncated = true
      ids = ids.slice(0, maxFrontier)
    }
    const edges = await graph.relationships(agentId, { entityIds: ids, at: options.time }, 0, maxEdges + 1)
    if (edges.length > maxEdges) {
      truncated = true
      edges.length = maxEdges
    }
    const next = new Map<string, NamedEntity>()
    for (const edge of edges) {
      const from = (frontier.get(edge.sourceId) ?? frontier.get(edge.targetId)) as NamedEntity
      // An edge keeps the first (smallest) hop that reached it, and the strongest named entity.
      const known = reached.get(edge.id)
      if (!known || (known.hop === hop && from.strength > known.from.strength))
        reached.set(edge.id, { relationship: edge, hop, from })
      for (const other of [edge.sourceId, edge.targetId])
        if (!visited.has(other) && !next.has(other)) next.set(other, from)
    }
    for (const [id, from] of next) {
      visited.add(id)
      depth.set(id, { hops: hop, from })
    }
    frontier = next
  }
  const missing = new Set<string>()
  for (const { relationship: r } of reached.values())
    for (const id of [r.sourceId, r.targetId]) if (!entities.has(id)) missing.add(id)
  for (const e of await graph.entitiesByIds(agentId, [...missing])) entities.set(e.id, e)
  return { named: [...named], relationships: [...reached.values()], entities, depth, truncated }
}

/** The evidence of relationships, grouped per relationship id. */
export async function sourcesOf(
  graph: GraphRepository,
  agentId: string,
  relationshipIds: readonly string[],
): Promise<Map<string, GraphSource[]>> {
  const out = new Map<string, GraphSource[]>()
  if (relationshipIds.length === 0) return out
  for (const ev of await graph.evidenceOf(agentId, { relationshipIds })) {
    if (!ev.relationshipId) continue
    const list = out.get(ev.relationshipId) ?? []
    list.push({ memoryId: ev.memoryId, messageId: ev.messageId })
    out.set(ev.relationshipId, list)
  }
  return out
}

/** "2024-03": the month is what a line in the context needs. */
const month = (d: Date) => d.toISOString().slice(0, 7)

/** One compact line per edge: "Dana Kim works at Acme (since 2024-03)". */
export function relationshipLine(
  r: Pick<GraphRelationshipRecord, 'relation' | 'validFrom' | 'validUntil'>,
  source: Pick<GraphEntityRecord, 'name'>,
  target: Pick<GraphEntityRecord, 'name'>,
): string {
  const when =
    r.validFrom && r.validUntil
      ? ` (${month(r.validFrom)} to ${month(r.validUntil)})`
      : r.validFrom
        ? ` (since ${month(r.validFrom)})`
        : r.validUntil
          ? ` (until ${month(r.validUntil)})`
          : ''
  return `${source.name} ${r.relation} ${target.name}${when}`
}

/**
 * How much of a query's content words (other than the named entities' own) an edge's relation and
 * far end cover, 0..1: "Where did Dana move to?" prefers Dana's "moved to" edge over "works at".
 */
export function edgeQueryOverlap(queryTerms: ReadonlySet<string>, words: string): number {
  if (queryTerms.size === 0) return 0
  const edgeTerms = graphTerms(words)
  let hit = 0
  for (const t of queryTerms) if (edgeTerms.has(t)) hit++
  return hit / queryTerms.size
}

/** The query's words other than the named entities' names: what an edge's relation should cover. */
function relationTerms(query: string, named: readonly NamedEntity[]): Set<string> {
  const terms = graphTerms(query)
  for (const n of named)
    for (const name of [n.entity.normalizedName, ...n.entity.aliases.map(normalizeEntityName)])
      for (const t of name.split(' ')) terms.delete(stemLite(t))
  return terms
}

/**
 * How relevant each reached edge is to the query, 0..1: the naming's strength × the edge's
 * confidence × (1 at hop 1, SECOND_HOP_SHARE at hop 2) × (1 when both ends are named,
 * ONE_END_NAMED_SHARE otherwise) × (½ + ½ × how much of the query's other words the relation and
 * the far end's names cover). Search's graph expansion and the "Key relationships" section rank by it.
 */
export function edgeRelevance(read: GraphNeighbourhoodRead, query: string): Map<string, number> {
  const namedIds = new Set(read.named.map((n) => n.entity.id))
  const terms = relationTerms(query, read.named)
  const out = new Map<string, number>()
  for (const { relationship: r, hop, from } of read.relationships) {
    const bothNamed = namedIds.has(r.sourceId) && namedIds.has(r.targetId)
    // The ends other than the named entity it was reached from (both at hop 2).
    const far = [r.sourceId, r.targetId]
      .filter((id) => id !== from.entity.id)
      .flatMap((id) => {
        const e = read.entities.get(id)
        return e ? [e.name, ...e.aliases] : []
      })
    const words = `${r.relation} ${far.join(' ')}`
    out.set(
      r.id,
      from.strength *
        r.confidence *
        (hop === 1 ? 1 : SECOND_HOP_SHARE) *
        (bothNamed ? 1 : ONE_END_NAMED_SHARE) *
        (0.5 + 0.5 * edgeQueryOverlap(terms, words)),
    )
  }
  return out
}

/** A mention one hop further from what the query named counts this share of the nearer one. */
const MENTION_HOP_SHARE = 0.5
/**
 * A mention says less than a relationship (it names the entity, it does not relate it to
 * anything): at most this share of an edge's relevance.
 */
const MENTION_SHARE = 0.5

/**
 * How much a mention of each touched entity says about the query, 0..1: MENTION_SHARE × the
 * naming's strength × MENTION_HOP_SHARE per hop from the named entity × 1 / (1 + ln mentions): an
 * entity named in hundreds of memories (a conversation's participant) is no clue to any one of
 * them; a rare one is.
 */
export function mentionRelevance(read: GraphNeighbourhoodRead): Map<string, number> {
  const out = new Map<string, number>()
  for (const [id, { hops, from }] of read.depth) {
    const entity = read.entities.get(id)
    if (!entity) continue
    out.set(
      id,
      (MENTION_SHARE * from.strength * MENTION_HOP_SHARE ** hops) /
        (1 + Math.log(Math.max(1, entity.mentionCount))),
    )
  }
  return out
}

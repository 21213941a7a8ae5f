import {
  edgeQueryOverlap,
  edgeRelevance,
  entitiesNamedIn,
  GRAPH_RECALL_HOPS,
  graphTerms,
  mentionRelevance,
  neighbourhoodOf,
  relationshipLine,
  sourcesOf,
} from '../graph/graph-recall.ts'
import { relationshipSourceReader } from '../graph/graph-service.ts'
import type { GraphEntityRecord, GraphRepository } from '../ports/graph.ts'
import type { RecallSources } from '../ports/recall-sources.ts'
import type { Candidate } from './search-candidates.ts'
import type { GraphRelationshipHit, ScoreComponents } from './search-types.ts'

// The knowledge graph in search (issue 15): the GRAPH scope's candidates, and graph expansion of
// MESSAGES and MEMORIES (entities the query names pull in what their neighbourhood was learnt from).

/** Relationships the GRAPH scope reads around the entities the query's words propose. */
const GRAPH_SCOPE_EDGES = 500

/** What a GRAPH candidate carries: the entity, or the relationship with its ends and sources. */
export type GraphRow = { entity: GraphEntityRecord } | { relationship: GraphRelationshipHit }

export const isGraphRow = (row: unknown): row is GraphRow =>
  typeof row === 'object' && row !== null && ('entity' in row || 'relationship' in row)

/**
 * Graph expansion's score of each turn (MESSAGES) or memory (MEMORIES) the named entities'
 * neighbourhood was learnt from, 0..1: the best of the relevance of the edges it supports
 * (graph-recall.ts's edgeRelevance) and of the mentions it holds of the entities touched, the named
 * ones included (mentionRelevance). Only relationships that hold now count, as in memoryContext.
 */
export async function graphExpansionScores(
  graph: GraphRepository,
  agentId: string,
  query: string,
  kind: 'messages' | 'memories',
  now: Date,
  limit: number,
): Promise<Map<string, number>> {
  const out = new Map<string, number>()
  const named = await entitiesNamedIn(graph, agentId, query)
  if (named.length === 0) return out
  const read = await neighbourhoodOf(graph, agentId, named, {
    hops: GRAPH_RECALL_HOPS,
    time: { asOf: now, knownAt: now },
  })
  const keep = (id: string | null, score: number) => {
    if (id && score > (out.get(id) ?? 0)) out.set(id, score)
  }
  // What the edges were learnt from, then what names the touched entities (their mentions).
  const edgeScore = edgeRelevance(read, query)
  for (const [relationshipId, list] of await sourcesOf(graph, agentId, [...edgeScore.keys()])) {
    const score = edgeScore.get(relationshipId) ?? 0
    for (const source of list) keep(kind === 'messages' ? source.messageId : source.memoryId, score)
  }
  const mentionScore = mentionRelevance(read)
  for (const ev of await graph.evidenceOf(agentId, { entityIds: [...mentionScore.keys()] }))
    if (ev.entityId)
      keep(kind === 'messages' ? ev.messageId : ev.memoryId, mentionScore.get(ev.entityId) ?? 0)
  // The best `limit`: a hub's hundreds of sources must not flood the candidates.
  return new Map([...out.entries()].sort((a, b) => b[1] - a[1]).slice(0, limit))
}

/**
 * The GRAPH scope's candidates (spec 003's Graph scope: entities and relationships, all time):
 * entities sharing a word with the query (the port's token lookup) and the relationships touching
 * them, ended ones too, retired ones not (an operator said they were wrong). Ranked lexically:
 * the share of the query's content words the entity's names, or the edge's ends and relation,
 * cover, plus half of how surely the query names it (an entity) or its surer end (a relationship).
 */
export async function graphScopeCandidates(
  graph: GraphRepository,
  recall: Pick<RecallSources, 'memoryItems' | 'messages'>,
  agentId: string,
  query: string,
  now: Date,
  limit: number,
): Promise<Candidate[]> {
  const terms = graphTerms(query)
  if (terms.size === 0) return []
  const proposed = await graph.entitiesByTokens(agentId, [...terms], limit)
  // The token lookup compares whole normalised words; the light stems are for relations.
  const named = new Map((await entitiesNamedIn(graph, agentId, query)).map((n) => [n.entity.id, n.strength]))
  const entities = new Map<string, GraphEntityRecord>(proposed.map((e) => [e.id, e]))
  const edges =
    entities.size === 0
      ? []
      : (
          await graph.relationships(agentId, { entityIds: [...entities.keys()] }, 0, GRAPH_SCOPE_EDGES)
        ).filter((r) => r.retiredAt === null || r.retiredAt > now)
  const missing = [...new Set(edges.flatMap((r) => [r.sourceId, r.targetId]))].filter(
    (id) => !entities.has(id),
  )
  for (const e of await graph.entitiesByIds(agentId, missing)) entities.set(e.id, e)
  const sources = await sourcesOf(
    graph,
    agentId,
    edges.map((r) => r.id),
  )
  const namesOf = (e: GraphEntityRecord) => [e.name, ...e.aliases].join(' ')
  const out: Candidate[] = []
  // What the query's words cover, plus half of how surely it names the entity (or the surer end):
  // an edge covering the query's other words too ("work") outranks the bare entity, and the
  // edge's confidence weighs half (a confirmed edge first among equals).
  for (const e of proposed) {
    const score = edgeQueryOverlap(terms, `${namesOf(e)} ${e.type}`) + 0.5 * (named.get(e.id) ?? 0)
    if (score <= 0) continue
    out.push(
      graphCandidate(`entity:${e.id}`, score, `${e.name} (${e.type.toLowerCase()})`, e.lastSeenAt, {
        entity: e,
      }),
    )
  }
  for (const r of edges) {
    const source = entities.get(r.sourceId)
    const target = entities.get(r.targetId)
    if (!source || !target) continue
    const score =
      edgeQueryOverlap(terms, `${namesOf(source)} ${r.relation} ${namesOf(target)}`) +
      0.5 * Math.max(named.get(source.id) ?? 0, named.get(target.id) ?? 0)
    if (score <= 0) continue
    out.push(
      graphCandidate(
        `relationship:${r.id}`,
        score * (0.5 + 0.5 * r.confidence),
        relationshipLine(r, source, target),
        r.validFrom ?? r.learntAt,
        { relationship: { relationship: r, source, target, sources: [] } },
        r.confidence,
      ),
    )
  }
  const kept = out.sort((a, b) => b.bm25 - a.bm25).slice(0, limit)
  // The kept edges' sources with their excerpts (why each is believed), read for these alone.
  const shown = kept.flatMap((c) =>
    isGraphRow(c.row) && 'relationship' in c.row ? [c.row.relationship] : [],
  )
  const read = await relationshipSourceReader(
    recall,
    agentId,
    shown.flatMap((v) => sources.get(v.relationship.id) ?? []),
    now,
  )
  for (const view of shown) view.sources = (sources.get(view.relationship.id) ?? []).map(read)
  return kept
}

function graphCandidate(
  id: string,
  score: number,
  text: string,
  timestamp: Date,
  row: GraphRow,
  confidence = 1,
): Candidate {
  return {
    scope: 'GRAPH',
    id,
    // The lexical side's score: HYBRID scales it to the best GRAPH candidate's, as BM25.
    bm25: score,
    feedback: 0,
    cooccurrence: 0,
    vector: 0,
    text,
    timestamp,
    importance: confidence,
    confidence,
    row,
  }
}

/**
 * The GRAPH scope's hits, whatever the strategy: the graph has no vectors, importance or
 * dialogue, so a hit scores its lexical score as a share of the best GRAPH candidate's (0..1,
 * comparable with the other scopes' HYBRID scores).
 */
export async function graphScopeHits(
  graph: GraphRepository,
  recall: RecallSources,
  agentId: string,
  query: string,
  now: Date,
  candidateLimit: number,
): Promise<{ candidate: Candidate; score: number; components: ScoreComponents }[]> {
  const candidates = await graphScopeCandidates(graph, recall, agentId, query, now, candidateLimit)
  const best = Math.max(0, ...candidates.map((c) => c.bm25))
  const byRecency = [...candidates].sort((a, b) => b.timestamp.getTime() - a.timestamp.getTime())
  const recencyRank = new Map(byRecency.map((c, i) => [c.id, 1 - i / candidateLimit]))
  return candidates.map((c) => ({
    candidate: c,
    score: best > 0 ? c.bm25 / best : 0,
    components: {
      bm25: c.bm25,
      vector: 0,
      importance: c.importance,
      recency: recencyRank.get(c.id) ?? 0,
      confidence: c.confidence,
      context: 0,
      episode: 0,
      time: 1,
      speaker: 1,
      feedback: 0,
      cooccurrence: 0,
      graph: 0,
      decay: 1,
    },
  }))
}

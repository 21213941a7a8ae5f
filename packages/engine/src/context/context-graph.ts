import type { ContextItem } from '@engram/core'
import {
  edgeRelevance,
  entitiesNamedIn,
  GRAPH_RECALL_HOPS,
  neighbourhoodOf,
  relationshipLine,
} from '../graph/graph-recall.ts'
import type { GraphEntityRecord, GraphRelationshipRecord, GraphRepository } from '../ports/graph.ts'

/**
 * The "Key relationships" section from the knowledge graph (issue 15): one line per relationship
 * that holds at `at` ("Dana Kim works at Acme (since 2024-03)"), the most relevant to the query
 * first: the edges around the entities it names, by edgeRelevance (hop, both ends named, the
 * relation matching the query's other words, confidence), then every other current edge by
 * confidence and recency (the port's order). The assembler trims the list to the section's budget
 * with the configured tokenizer, like every section. A user's context shows that user's edges and
 * the agent's own (no user); without a user, all of them.
 */
export async function graphRelationshipItems(
  graph: GraphRepository,
  agentId: string,
  request: { query: string; userId: string | null; at: Date; limit: number },
): Promise<ContextItem[]> {
  const time = { asOf: request.at, knownAt: request.at }
  const visible = (r: GraphRelationshipRecord) =>
    request.userId === null || r.userId === null || r.userId === request.userId
  const ranked: GraphRelationshipRecord[] = []
  const entities = new Map<string, GraphEntityRecord>()
  if (request.query.length > 0) {
    const named = await entitiesNamedIn(graph, agentId, request.query)
    if (named.length > 0) {
      const read = await neighbourhoodOf(graph, agentId, named, { hops: GRAPH_RECALL_HOPS, time })
      const relevance = edgeRelevance(read, request.query)
      for (const [id, e] of read.entities) entities.set(id, e)
      ranked.push(
        ...read.relationships
          .map((r) => r.relationship)
          .filter(visible)
          .sort(
            (a, b) =>
              (relevance.get(b.id) ?? 0) - (relevance.get(a.id) ?? 0) ||
              b.learntAt.getTime() - a.learntAt.getTime(),
          ),
      )
    }
  }
  const seen = new Set(ranked.map((r) => r.id))
  for (const r of await graph.relationships(agentId, { at: time }, 0, request.limit))
    if (visible(r) && !seen.has(r.id)) ranked.push(r)
  const chosen = ranked.slice(0, request.limit)
  const missing = [...new Set(chosen.flatMap((r) => [r.sourceId, r.targetId]))].filter(
    (id) => !entities.has(id),
  )
  for (const e of await graph.entitiesByIds(agentId, missing)) entities.set(e.id, e)
  return chosen.flatMap((r) => {
    const source = entities.get(r.sourceId)
    const target = entities.get(r.targetId)
    return source && target ? [{ id: `relationship:${r.id}`, text: relationshipLine(r, source, target) }] : []
  })
}

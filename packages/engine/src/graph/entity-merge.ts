import type { GraphRelationshipRecord, GraphRepository } from '../ports/graph.ts'

/**
 * After a merge moved one entity's edges onto another: an edge between the two (now a loop) goes,
 * and two current edges that became the same fold into the first learnt, with both sources and the
 * higher confidence. Ended and retired edges keep their own rows (history).
 */
export async function foldMergedEdges(
  graph: GraphRepository,
  agentId: string,
  entityId: string,
  maxEdges: number,
  now: Date,
): Promise<void> {
  const edges = await graph.relationships(agentId, { entityIds: [entityId] }, 0, maxEdges)
  const kept = new Map<string, GraphRelationshipRecord>()
  for (const edge of [...edges].sort(
    (a, b) => a.learntAt.getTime() - b.learntAt.getTime() || (a.id < b.id ? -1 : 1),
  )) {
    if (edge.sourceId === edge.targetId) {
      await graph.deleteRelationship(agentId, edge.id)
      continue
    }
    // Only edges still believed and open fold: history keeps its own rows.
    if (edge.retiredAt || edge.validUntil) continue
    const key = `${edge.sourceId}\u0000${edge.relation}\u0000${edge.targetId}`
    const first = kept.get(key)
    if (!first) {
      kept.set(key, edge)
      continue
    }
    const evidence = await graph.evidenceOf(agentId, { relationshipIds: [edge.id] })
    if (evidence.length > 0)
      await graph.addEvidence(
        agentId,
        evidence.map((ev) => ({
          entityId: null,
          relationshipId: first.id,
          memoryId: ev.memoryId,
          messageId: ev.messageId,
        })),
        now,
      )
    const confidence = Math.max(first.confidence, edge.confidence)
    if (confidence !== first.confidence) {
      await graph.updateRelationship(agentId, first.id, { confidence, updatedAt: now })
      first.confidence = confidence
    }
    await graph.deleteRelationship(agentId, edge.id)
  }
}

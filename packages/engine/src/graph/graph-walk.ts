import type { GraphEntityRecord, GraphRelationshipRecord } from '../ports/graph.ts'

// The bookkeeping of the bounded walks (neighbourhood, shortest paths from both ends).

export interface WalkSide {
  distance: Map<string, number>
  parents: Map<string, { from: string; edge: GraphRelationshipRecord }[]>
  frontier: GraphEntityRecord[]
  depth: number
}

export function walkSide(origin: GraphEntityRecord): WalkSide {
  return { distance: new Map([[origin.id, 0]]), parents: new Map(), frontier: [origin], depth: 0 }
}

/** The chains from a side's origin to `id` along its parents, at most `limit` (depth is at most maxDepth). */
export function chainsTo(
  side: WalkSide,
  id: string,
  limit: number,
): { ids: string[]; edges: GraphRelationshipRecord[] }[] {
  if (side.distance.get(id) === 0) return [{ ids: [id], edges: [] }]
  const out: { ids: string[]; edges: GraphRelationshipRecord[] }[] = []
  for (const parent of side.parents.get(id) ?? []) {
    for (const chain of chainsTo(side, parent.from, limit)) {
      out.push({ ids: [...chain.ids, id], edges: [...chain.edges, parent.edge] })
      if (out.length >= limit) return out
    }
  }
  return out
}

/** The ends of `edges` not yet answered, in edge order (the most confident edges' first). */
export function unseenEnds(
  edges: readonly GraphRelationshipRecord[],
  seen: (id: string) => boolean,
): string[] {
  const out = new Set<string>()
  for (const edge of edges) for (const id of [edge.sourceId, edge.targetId]) if (!seen(id)) out.add(id)
  return [...out]
}

export function uniqueById(edges: readonly GraphRelationshipRecord[]): GraphRelationshipRecord[] {
  return [...new Map(edges.map((e) => [e.id, e])).values()]
}

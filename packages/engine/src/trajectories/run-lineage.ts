import { RUN_ID_PATTERN, ValidationError } from '@engram/core'
import type { RunCursor, RunRecord, TrajectoryMemoryRepository } from '../ports/trajectories.ts'
import type { RunLineage } from './run-types.ts'

/** The runs list's cursor (its last run's updatedAt and id, base64url): what encodeCursor wrote. */
export function decodeRunCursor(cursor: string, field: string): RunCursor {
  const match = /^(-?\d{1,15}):(.+)$/s.exec(Buffer.from(cursor, 'base64url').toString('utf8'))
  if (!match || !RUN_ID_PATTERN.test(match[2] as string))
    throw new ValidationError([{ field, message: 'is not a cursor returned by this API' }])
  return { updatedAt: new Date(Number(match[1])), id: match[2] as string }
}

/**
 * A run's lineage: its ancestors up to the oldest stored (at most `maxAncestors`, and never round
 * a cycle an import could write), then the root's descendants breadth first, one level per read,
 * at most `most` runs in all (`truncated` when more exist).
 */
export async function walkLineage(
  repository: Pick<TrajectoryMemoryRepository, 'findRun' | 'childRuns'>,
  agentId: string,
  asked: RunRecord,
  most: number,
  maxAncestors: number,
): Promise<RunLineage> {
  const ancestry = [asked]
  let parentMissing = false
  while (ancestry.length < maxAncestors) {
    const parentId = (ancestry[0] as RunRecord).parentRunId
    if (parentId === null || ancestry.some((r) => r.id === parentId)) break
    const parent = await repository.findRun(agentId, parentId)
    if (!parent) {
      parentMissing = true
      break
    }
    ancestry.unshift(parent)
  }
  const root = ancestry[0] as RunRecord
  const runs = [{ run: root, depth: 0 }]
  const seen = new Set([root.id])
  let level = [root.id]
  let truncated = false
  for (let depth = 1; level.length > 0 && !truncated; depth++) {
    const room = most - runs.length
    const children = (await repository.childRuns(agentId, level, room + 1)).filter((c) => !seen.has(c.id))
    if (children.length > room) truncated = true
    level = []
    for (const child of children.slice(0, room)) {
      seen.add(child.id)
      runs.push({ run: child, depth })
      level.push(child.id)
    }
  }
  return {
    rootRunId: root.id,
    runs,
    ancestry: ancestry.map((r) => r.id),
    parentMissing,
    truncated,
  }
}

import { poolStorageAgentId } from '@engram/core'
import type { RecalledMemoryItem } from '../ports/recall-sources.ts'
import type { AccessBuffer } from './search-access.ts'
import type { Candidate } from './search-candidates.ts'
import type { ScoreComponents, SearchHit, SearchOptions } from './search-types.ts'

// Shared memory pools in search (issue 17): the POOLS scope's candidates and the accesses its
// kept hits record.

/** One agent's ranking (SearchService.rank of another agent: here a pool's storage agent). */
type RankOf = (agentId: string, options: SearchOptions) => Promise<{ hits: SearchHit[] }>

/**
 * The POOLS scope's scored candidates: each pool's memories ranked by the pool's own search, the
 * one queryPool runs (its storage agent's MEMORIES with its own statistics and vectors; HYBRID
 * unless asked otherwise), so a pool hit scores as it would in queryPool and as the agent's own
 * MEMORIES hits do, and the caller's merge ranks them all together. MMR and the threshold apply
 * once, to the merge; the conversation filters (conversationId, since, windowDays) are about the
 * agent's turns and do not apply to pools.
 */
export async function poolScopeCandidates(
  rank: RankOf,
  poolIds: readonly string[],
  options: SearchOptions,
  limit: number,
): Promise<{ candidate: Candidate; score: number; components: ScoreComponents }[]> {
  // The pools' searches at once: on Postgres their reads overlap instead of queueing one pool's
  // round trips behind the other's; the merge keeps the pools' order, so the result is the same.
  const rankings = await Promise.all(
    poolIds.map((poolId) =>
      rank(poolStorageAgentId(poolId), {
        scopes: ['MEMORIES'],
        strategy: options.strategy ?? 'HYBRID',
        weights: options.weights ?? null,
        decay: options.decay ?? null,
        memoryFilter: options.memoryFilter ?? null,
        limit,
        mmrLambda: 1,
        // Accesses are recorded for the hits the merge keeps (recordPoolAccess), not every candidate.
        track: false,
      }),
    ),
  )
  const out: { candidate: Candidate; score: number; components: ScoreComponents }[] = []
  for (const [index, poolId] of poolIds.entries()) {
    for (const hit of (rankings[index] as { hits: SearchHit[] }).hits) {
      if (!hit.memory) continue
      out.push({
        candidate: {
          scope: 'POOLS',
          id: hit.id,
          bm25: hit.components.bm25,
          feedback: hit.components.feedback,
          cooccurrence: hit.components.cooccurrence,
          vector: hit.components.vector,
          text: hit.text,
          timestamp: hit.timestamp,
          importance: hit.components.importance,
          confidence: hit.components.confidence,
          row: hit.memory,
          poolId,
        },
        score: hit.score,
        components: hit.components,
      })
    }
  }
  return out
}

/**
 * A kept pool hit is a use of the pool's memory (as in queryPool), recorded under the pool's
 * storage agent, never as the searching agent's; the hits show the updated counts.
 */
export async function recordPoolAccess(accesses: AccessBuffer, hits: SearchHit[]): Promise<void> {
  const byPool = new Map<string, SearchHit[]>()
  for (const hit of hits)
    if (hit.scope === 'POOLS' && hit.poolId && hit.memory)
      byPool.set(hit.poolId, [...(byPool.get(hit.poolId) ?? []), hit])
  for (const [poolId, poolHits] of byPool) {
    const updated = await accesses.record(
      poolStorageAgentId(poolId),
      poolHits.map((h) => h.memory as RecalledMemoryItem),
    )
    for (const [i, hit] of poolHits.entries()) hit.memory = updated[i] ?? hit.memory
  }
}

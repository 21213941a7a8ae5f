import type { ExactVectorIndex, VectorHit, VectorIndex } from './vector.ts'

/** What calibration needs of the exact side: its ids, their vectors, exact answers. */
export type ExactReference = Pick<ExactVectorIndex, 'idList' | 'vectorOf' | 'search'>

/** An approximate index whose search breadth (HNSW's efSearch) can be changed without a rebuild. */
export interface TunableVectorIndex extends VectorIndex {
  readonly searchBreadth: number
  setSearchBreadth(breadth: number): void
}

/** Breadths tried, smallest first: the first to reach the target wins. */
export const SEARCH_BREADTHS = [16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024] as const

export interface Calibration {
  breadth: number
  /** Recall@k of the sample at that breadth. */
  recall: number
  /** How many stored vectors served as queries. */
  queries: number
  /** False when even the largest breadth missed the target (data with no structure to exploit). */
  reached: boolean
}

/**
 * Sets the smallest search breadth at which `approximate` finds at least `targetRecall` of the
 * exact top-k, measured leave-one-out on stored vectors: each sample vector is a query, and itself
 * is left out of both answers. Recall depends on the data (bench: vector, for recall@10 ≥ 0.99
 * clustered embedding-like vectors needed efSearch 24 at 100k and 96 at 1M, the offline hashing
 * embedder's vectors of synthetic text 768 at 100k), so it is measured on the data rather than
 * fixed. Sample ids are spread evenly over `exact`'s slots: no randomness needed.
 *
 * Exact searches dominate the cost (sample × one scan); `pause` runs between them.
 */
export async function calibrateSearchBreadth(options: {
  exact: ExactReference
  approximate: TunableVectorIndex
  targetRecall: number
  sample: number
  k?: number
  pause?: () => Promise<void>
}): Promise<Calibration> {
  const { exact, approximate, targetRecall, pause } = options
  const k = options.k ?? 10
  const ids = exact.idList()
  const count = Math.min(options.sample, ids.length)
  const queries: { id: string; vector: Float32Array }[] = []
  for (let i = 0; i < count; i++) {
    const id = ids[Math.floor((i * ids.length) / count)] as string
    queries.push({ id, vector: Float32Array.from(exact.vectorOf(id) as Float32Array) })
  }
  const without = (hits: VectorHit[], id: string) => hits.filter((hit) => hit.id !== id).slice(0, k)
  const truth: VectorHit[][] = []
  for (const { id, vector } of queries) {
    truth.push(without(exact.search(vector, k + 1), id))
    if (pause) await pause()
  }
  let best: Calibration = { breadth: approximate.searchBreadth, recall: 0, queries: count, reached: false }
  for (const breadth of SEARCH_BREADTHS) {
    approximate.setSearchBreadth(breadth)
    const found = queries.map(({ id, vector }) => without(approximate.search(vector, k + 1), id))
    const recall = recallAtK(truth, found, k)
    best = { breadth, recall, queries: count, reached: recall >= targetRecall }
    if (best.reached) break
  }
  approximate.setSearchBreadth(best.breadth)
  return best
}

/**
 * Mean share of each exact top-k that a search found (recall@k), over queries answered in the
 * same order. An exact list shorter than k (a tiny index) counts only what it holds.
 */
export function recallAtK(exact: readonly VectorHit[][], found: readonly VectorHit[][], k: number): number {
  if (exact.length === 0) return 1
  let sum = 0
  for (const [q, truth] of exact.entries()) {
    const wanted = new Set(truth.slice(0, k).map((hit) => hit.id))
    if (wanted.size === 0) {
      sum += 1
      continue
    }
    let hits = 0
    for (const hit of (found[q] ?? []).slice(0, k)) if (wanted.has(hit.id)) hits++
    sum += hits / wanted.size
  }
  return sum / exact.length
}

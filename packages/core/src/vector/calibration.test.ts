import { describe, expect, it } from 'vitest'
import { seededRandom } from '../random.ts'
import { calibrateSearchBreadth, recallAtK, type TunableVectorIndex } from './calibration.ts'
import { clusteredVectors } from './synthetic.ts'
import { ExactVectorIndex, type VectorHit } from './vector.ts'

/**
 * An "approximate" index whose recall grows with its breadth: it answers exactly, then swaps the
 * worst `lost` of its top-k for the farthest vectors, `lost` shrinking as the breadth grows.
 */
class BreadthLimitedIndex extends ExactVectorIndex implements TunableVectorIndex {
  searchBreadth = 16
  constructor(private readonly breadthForFullRecall: number) {
    super()
  }
  setSearchBreadth(breadth: number): void {
    this.searchBreadth = breadth
  }
  override search(query: Float32Array, limit: number): VectorHit[] {
    const hits = super.search(query, limit)
    const lost = Math.max(
      0,
      Math.ceil(((this.breadthForFullRecall - this.searchBreadth) / this.breadthForFullRecall) * 5),
    )
    const worst = super.search(
      Float32Array.from(query, (x) => -x),
      lost,
    )
    return [...hits.slice(0, hits.length - lost), ...worst]
  }
}

function filled(breadthForFullRecall: number) {
  const source = clusteredVectors(seededRandom(8), { dimensions: 32, latentDimensions: 8, clusters: 20 })
  const exact = new ExactVectorIndex()
  const approximate = new BreadthLimitedIndex(breadthForFullRecall)
  for (let i = 0; i < 2_000; i++) {
    const vector = source.next()
    exact.upsert(`v${i}`, vector)
    approximate.upsert(`v${i}`, vector)
  }
  return { exact, approximate }
}

describe('calibrateSearchBreadth', () => {
  it('picks the smallest breadth that reaches the target and leaves the index set to it', async () => {
    const { exact, approximate } = filled(128)
    let pauses = 0
    const calibration = await calibrateSearchBreadth({
      exact,
      approximate,
      targetRecall: 0.95,
      sample: 40,
      pause: async () => {
        pauses++
      },
    })
    expect(calibration).toEqual({ breadth: 128, recall: 1, queries: 40, reached: true })
    expect(approximate.searchBreadth).toBe(128)
    expect(pauses).toBe(40)
  })

  it('settles for the largest breadth when none reaches the target', async () => {
    const { exact, approximate } = filled(100_000)
    const calibration = await calibrateSearchBreadth({ exact, approximate, targetRecall: 0.99, sample: 10 })
    expect(calibration.reached).toBe(false)
    expect(calibration.breadth).toBe(1024)
    expect(calibration.recall).toBeLessThan(0.99)
  })
})

describe('recallAtK', () => {
  it('counts the share of each exact top-k found, shorter lists by what they hold', () => {
    const hit = (id: string) => ({ id, similarity: 0 })
    expect(recallAtK([[hit('a'), hit('b')]], [[hit('b'), hit('c')]], 2)).toBe(0.5)
    expect(recallAtK([[hit('a')], []], [[hit('a')], [hit('x')]], 10)).toBe(1)
    expect(recallAtK([], [], 10)).toBe(1)
  })
})

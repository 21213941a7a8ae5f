import { describe, expect, it } from 'vitest'
import { seededRandom } from '../random.ts'
import {
  AdaptiveVectorIndex,
  type ApproximateBuildInput,
  type ApproximateBuildResult,
  type ApproximateVectorIndex,
  buildApproximateIndex,
} from './adaptive.ts'
import { clusteredVectors } from './synthetic.ts'
import { ExactVectorIndex, vectorNorm } from './vector.ts'

const normalisedCopy = (vector: Float32Array) => [...vector].map((x) => x / vectorNorm(vector))

/** Stands in for HNSW: an exact index that counts its writes, so the tests see what was copied. */
class RecordingIndex extends ExactVectorIndex implements ApproximateVectorIndex {
  writes = 0
  private readonly stamps = new Map<string, string | undefined>()
  override upsert(id: string, vector: Float32Array, stamp?: string): void {
    this.writes++
    this.stamps.set(id, stamp)
    super.upsert(id, vector)
  }
  override remove(id: string): boolean {
    this.stamps.delete(id)
    return super.remove(id)
  }
  stampOf(id: string): string | undefined {
    return this.stamps.get(id)
  }
}

function setup(approximateAbove: number, withPause = false) {
  const created: RecordingIndex[] = []
  const pauses: (() => void)[] = []
  const index = new AdaptiveVectorIndex({
    createApproximate: () => {
      const approximate = new RecordingIndex()
      created.push(approximate)
      return approximate
    },
    // A pause the test releases by hand: writes can land between build batches.
    ...(withPause ? { pause: () => new Promise<void>((resolve) => pauses.push(resolve)) } : {}),
    config: { approximateAbove, buildBatch: 10 },
  })
  const source = clusteredVectors(seededRandom(3), { dimensions: 16, latentDimensions: 4, clusters: 5 })
  return { index, created, pauses, source }
}

describe('AdaptiveVectorIndex', () => {
  it('stays exact up to the threshold, then builds the approximate index and switches', async () => {
    const { index, created, source } = setup(50)
    for (let i = 0; i < 50; i++) index.upsert(`v${i}`, source.next(), `h${i}`)
    expect(await index.maintain()).toBe(false)
    expect(index.mode).toBe('exact')
    index.upsert('v50', source.next())
    const query = source.next()
    const before = index.search(query, 5)
    expect(await index.maintain()).toBe(true)
    expect(index.mode).toBe('approximate')
    expect(index.active).toBe(created[0])
    expect(index.size).toBe(51)
    expect(index.search(query, 5)).toEqual(before)
    // Stamps given while exact travel to the approximate index.
    expect(index.stampOf('v7')).toBe('h7')
    expect(created[0]!.stampOf('v7')).toBe('h7')
    expect(index.stampOf('v50')).toBeUndefined()
  })

  it('keeps answering during a build and carries writes made meanwhile', async () => {
    const { index, pauses, source } = setup(20, true)
    for (let i = 0; i < 40; i++) index.upsert(`v${i}`, source.next())
    const built = index.maintain()
    expect(index.mode).toBe('building')
    expect(index.maintain()).toBe(built)
    const moved = source.next()
    // Between batches: one vector replaced, one removed, one added.
    await Promise.resolve()
    index.upsert('v39', moved, 'moved')
    index.remove('v0')
    index.upsert('new', source.next())
    expect(index.search(moved, 1)[0]?.id).toBe('v39')
    while (index.mode === 'building') {
      pauses.shift()?.()
      await new Promise((resolve) => setImmediate(resolve))
    }
    expect(await built).toBe(true)
    expect(index.mode).toBe('approximate')
    expect(index.size).toBe(40)
    expect(index.search(moved, 1)[0]).toMatchObject({ id: 'v39' })
    expect(index.stampOf('v39')).toBe('moved')
    expect(index.search(moved, 50).map((h) => h.id)).not.toContain('v0')
    expect(index.search(moved, 50).map((h) => h.id)).toContain('new')
  })

  it('abandons a build at its next pause and stays exact', async () => {
    const { index, pauses, source } = setup(20, true)
    for (let i = 0; i < 40; i++) index.upsert(`v${i}`, source.next())
    const built = index.maintain()
    index.abandonBuild()
    pauses.shift()?.()
    expect(await built).toBe(false)
    expect(index.mode).toBe('exact')
    expect(index.size).toBe(40)
  })

  it('hands a snapshot to an out-of-thread builder and catches up with writes made meanwhile', async () => {
    let received: ApproximateBuildInput | null = null
    let finish: (() => void) | null = null
    const index = new AdaptiveVectorIndex({
      createApproximate: () => new RecordingIndex(),
      buildApproximate: async (snapshot) => {
        received = snapshot
        // Stands in for the worker: the build finishes when the test says so.
        await new Promise<void>((resolve) => (finish = resolve))
        const built = await buildApproximateIndex(snapshot, () => new RecordingIndex())
        return built as ApproximateBuildResult
      },
      config: { approximateAbove: 20, calibrationQueries: 0 },
    })
    const source = clusteredVectors(seededRandom(5), { dimensions: 8, latentDimensions: 4, clusters: 3 })
    const vectors = Array.from({ length: 30 }, () => source.next())
    for (const [i, vector] of vectors.entries()) index.upsert(`v${i}`, vector, `h${i}`)
    const built = index.maintain()
    while (!finish) await new Promise((resolve) => setImmediate(resolve))
    const snapshot = received as unknown as ApproximateBuildInput
    expect(snapshot.ids).toHaveLength(30)
    expect(snapshot.dimensions).toBe(8)
    expect(snapshot.vectors).toHaveLength(30 * 8)
    const i = snapshot.ids.indexOf('v12')
    expect(snapshot.stamps[i]).toBe('h12')
    const expected = normalisedCopy(vectors[12] as Float32Array)
    for (const [d, value] of snapshot.vectors.subarray(i * 8, i * 8 + 8).entries())
      expect(value).toBeCloseTo(expected[d] as number, 6)
    // While the builder works: the exact index answers and takes writes.
    const moved = source.next()
    index.upsert('v3', moved, 'moved')
    index.remove('v4')
    expect(index.mode).toBe('building')
    ;(finish as () => void)()
    expect(await built).toBe(true)
    expect(index.mode).toBe('approximate')
    expect(index.size).toBe(29)
    expect(index.search(moved, 1)[0]?.id).toBe('v3')
    expect(index.stampOf('v3')).toBe('moved')
    expect(index.search(moved, 50).map((h) => h.id)).not.toContain('v4')
  })

  it('aborts an out-of-thread build it abandons and stays exact', async () => {
    let signal: AbortSignal | null = null
    const index = new AdaptiveVectorIndex({
      createApproximate: () => new RecordingIndex(),
      buildApproximate: (_snapshot, abort) => {
        signal = abort
        return new Promise((_resolve, reject) =>
          abort.addEventListener('abort', () => reject(new Error('stopped'))),
        )
      },
      config: { approximateAbove: 5 },
    })
    for (let i = 0; i < 10; i++) index.upsert(`v${i}`, Float32Array.from([1, i]))
    const built = index.maintain()
    while (!signal) await new Promise((resolve) => setImmediate(resolve))
    index.abandonBuild()
    expect((signal as AbortSignal).aborted).toBe(true)
    expect(await built).toBe(false)
    expect(index.mode).toBe('exact')
    expect(index.size).toBe(10)
  })

  it('returns to exact well below the threshold, not just below it', async () => {
    const { index, source } = setup(20)
    for (let i = 0; i < 30; i++) index.upsert(`v${i}`, source.next(), `h${i}`)
    await index.maintain()
    expect(index.mode).toBe('approximate')
    // 15 left: below 20 but not below half of it.
    for (let i = 0; i < 15; i++) index.remove(`v${i}`)
    await index.maintain()
    expect(index.mode).toBe('approximate')
    for (let i = 15; i < 21; i++) index.remove(`v${i}`)
    await index.maintain()
    expect(index.mode).toBe('exact')
    expect(index.size).toBe(9)
    expect(index.stampOf('v29')).toBe('h29')
    expect(index.search(source.next(), 100)).toHaveLength(9)
  })

  it('tunes a tunable index on the build, leave-one-out on stored vectors', async () => {
    class TunableIndex extends RecordingIndex {
      searchBreadth = 64
      setSearchBreadth(breadth: number): void {
        this.searchBreadth = breadth
      }
    }
    const tuned = new TunableIndex()
    const index = new AdaptiveVectorIndex({
      createApproximate: () => tuned,
      config: { approximateAbove: 20, calibrationQueries: 15 },
    })
    const source = clusteredVectors(seededRandom(4), { dimensions: 16, latentDimensions: 4, clusters: 5 })
    for (let i = 0; i < 30; i++) index.upsert(`v${i}`, source.next())
    expect(index.calibration).toBeNull()
    await index.maintain()
    // An exact stand-in reaches any target at the smallest breadth.
    expect(index.calibration).toEqual({ breadth: 16, recall: 1, queries: 15, reached: true })
    expect(tuned.searchBreadth).toBe(16)
  })

  it('starts from an approximate index handed to it (loaded from a file)', () => {
    const loaded = new RecordingIndex()
    loaded.upsert('a', Float32Array.from([1, 0]))
    const index = new AdaptiveVectorIndex({
      createApproximate: () => new RecordingIndex(),
      approximate: loaded,
    })
    expect(index.mode).toBe('approximate')
    expect(index.search(Float32Array.from([1, 0]), 1)).toEqual([{ id: 'a', similarity: 1 }])
  })
})

describe('AdaptiveVectorIndex scan settings', () => {
  const fill = (index: AdaptiveVectorIndex, count: number) => {
    const random = seededRandom(3)
    for (let i = 0; i < count; i++)
      index.upsert(
        `v${i}`,
        Float32Array.from({ length: 8 }, () => random()),
      )
  }
  const createApproximate = () => new RecordingIndex()

  it('hands its exact index the kernel threshold it is given (ENGRAM_VECTOR_KERNEL_ABOVE)', () => {
    const low = new AdaptiveVectorIndex({ createApproximate, scan: { kernelAbove: 16 } })
    fill(low, 20)
    expect((low.active as ExactVectorIndex).usesKernel).toBe(true)
    // The default (1,024) keeps 20 vectors in JavaScript; 'javascript' never moves them.
    const byDefault = new AdaptiveVectorIndex({ createApproximate })
    const never = new AdaptiveVectorIndex({
      createApproximate,
      scan: { kernel: 'javascript', kernelAbove: 0 },
    })
    fill(byDefault, 20)
    fill(never, 20)
    expect((byDefault.active as ExactVectorIndex).usesKernel).toBe(false)
    expect((never.active as ExactVectorIndex).usesKernel).toBe(false)
  })
})

import { z } from 'zod'
import { parseWith } from '../errors.ts'
import {
  type Calibration,
  calibrateSearchBreadth,
  type ExactReference,
  type TunableVectorIndex,
} from './calibration.ts'
import { ExactVectorIndex, type VectorHit, type VectorIndex, type VectorScanConfig } from './vector.ts'

/**
 * When to leave the exact scan for an approximate index. 20,000: the exact scan then takes ~7 ms
 * a query at 384 dims on one core (bench: vector, ~290 queries/s at 10k), still fine
 * interactively, and an HNSW graph of that size builds in ~5 s in the background (2.4 s at 10k,
 * 40 s at 100k); above it the scan grows linearly while the graph answers in well under 1 ms.
 */
export const DEFAULT_APPROXIMATE_ABOVE = 20_000

export const AdaptiveIndexConfigSchema = z.object({
  /** More vectors than this: search goes to the approximate index (built in the background). */
  approximateAbove: z.number().int().min(0).max(1_000_000_000).default(DEFAULT_APPROXIMATE_ABOVE),
  /**
   * Back to exact below this share of `approximateAbove`: the gap keeps an index whose size hovers
   * around the threshold from being rebuilt back and forth.
   */
  exactBelowRatio: z.number().min(0).max(1).default(0.5),
  /** Vectors copied into the approximate index between two pauses of a background build. */
  buildBatch: z.number().int().min(1).max(1_000_000).default(256),
  /**
   * Recall@10 a new approximate index is tuned to (see calibrateSearchBreadth), on a sample of
   * `calibrationQueries` stored vectors; 0 queries keep the index's own default breadth. Stored
   * vectors are easier queries than fresh ones (bench: 0.988 against 0.963-0.971 for fresh queries
   * at the same efSearch), and 50 queries measure ±0.01, so the target sits well above the 0.95
   * wanted.
   */
  targetRecall: z.number().min(0).max(1).default(0.99),
  calibrationQueries: z.number().int().min(0).max(10_000).default(50),
})
export type AdaptiveIndexConfig = z.infer<typeof AdaptiveIndexConfigSchema>

/**
 * An approximate index that can hand its vectors back (to return to exact search) and keeps a
 * `stamp` per vector: whatever tells its owner which version of the vector it holds (e.g. the
 * hash of the embedded text), saved with the index so a reload can tell what changed since.
 */
export interface ApproximateVectorIndex extends VectorIndex {
  upsert(id: string, vector: Float32Array, stamp?: string): void
  entries(): Iterable<[string, Float32Array]>
  stampOf(id: string): string | undefined
  /** Present when the search breadth can be tuned: a build then calibrates it. */
  setSearchBreadth?(breadth: number): void
  readonly searchBreadth?: number
  /** Gives back growth slack once a build has filled the index, when it keeps any. */
  trim?(): void
  /** Deleted entries still in the structure (an HNSW graph marks them), when it keeps any. */
  readonly deletedCount?: number
}

/** The exact index's contents at the start of a build, in one transferable buffer. */
export interface ApproximateBuildInput {
  ids: string[]
  stamps: (string | undefined)[]
  /** Row i (`dimensions` floats, normalised) is the vector of `ids[i]`. */
  vectors: Float32Array
  dimensions: number
  /** What the new index's search breadth is calibrated to (see calibrateSearchBreadth). */
  targetRecall: number
  calibrationQueries: number
}

export interface ApproximateBuildResult {
  index: ApproximateVectorIndex
  /** Null when not calibrated (no queries asked for, or an index without a search breadth). */
  calibration: Calibration | null
}

export interface AdaptiveVectorIndexOptions {
  createApproximate: () => ApproximateVectorIndex
  /**
   * Yields between build batches (e.g. to the event loop, so requests are served meanwhile);
   * without it a build runs to the end in one go.
   */
  pause?: () => Promise<void>
  /**
   * Builds the approximate index from a snapshot somewhere else (a worker thread: an HNSW graph of
   * 100k vectors takes ~40 s of CPU, which in batches on the event loop still delays every request
   * behind each batch). Without it the build runs here, in batches with `pause` between them.
   */
  buildApproximate?: (snapshot: ApproximateBuildInput, signal: AbortSignal) => Promise<ApproximateBuildResult>
  /** An approximate index already filled (e.g. loaded from a file): starts in approximate mode. */
  approximate?: ApproximateVectorIndex
  config?: Partial<AdaptiveIndexConfig>
  /** How its exact index scans (the SIMD kernel, and from how many vectors); the defaults when absent. */
  scan?: Partial<VectorScanConfig>
}

export type AdaptiveMode = 'exact' | 'building' | 'approximate'

/**
 * Exact search while small, an approximate index (HNSW) once large, behind one VectorIndex.
 * Crossing the threshold does not switch at once: `maintain()` builds the approximate index in
 * batches while the exact one keeps answering, and switches when it holds everything, writes
 * made during the build included. The exact copy is then dropped: holding both would double the
 * memory of the largest indexes.
 */
export class AdaptiveVectorIndex implements VectorIndex {
  private exact: ExactVectorIndex | null
  private approximate: ApproximateVectorIndex | null
  /** The approximate index being filled, and ids written since the build took its snapshot. */
  private build: {
    touched: Set<string>
    /** Aborted with `abandoned`: tells an out-of-thread build to stop. */
    stop: AbortController
    done: Promise<boolean>
    abandoned: boolean
  } | null = null
  /** Stamps while exact (the exact index has none), handed to the approximate index on a build. */
  private readonly stamps = new Map<string, string>()
  private readonly config: AdaptiveIndexConfig
  /** What the last build's calibration found (null before any build, or when not tunable). */
  calibration: Calibration | null = null

  constructor(private readonly options: AdaptiveVectorIndexOptions) {
    this.config = parseWith(AdaptiveIndexConfigSchema, options.config, 'adaptiveIndex')
    this.approximate = options.approximate ?? null
    this.exact = this.approximate ? null : new ExactVectorIndex(this.options.scan)
  }

  get mode(): AdaptiveMode {
    if (this.build) return 'building'
    return this.approximate ? 'approximate' : 'exact'
  }

  /** The index answering searches now. */
  get active(): VectorIndex {
    return (this.exact ?? this.approximate) as VectorIndex
  }

  get dimensions(): number | null {
    return this.active.dimensions
  }

  /** Deleted entries the approximate index still walks through (maintenance rebuilds past a share). */
  get deletedCount(): number {
    return this.approximate?.deletedCount ?? 0
  }

  get size(): number {
    return this.active.size
  }

  upsert(id: string, vector: Float32Array, stamp?: string): void {
    if (this.exact) {
      this.exact.upsert(id, vector)
      if (stamp === undefined) this.stamps.delete(id)
      else this.stamps.set(id, stamp)
      this.build?.touched.add(id)
    } else (this.approximate as ApproximateVectorIndex).upsert(id, vector, stamp)
  }

  remove(id: string): boolean {
    const removed = this.active.remove(id)
    this.stamps.delete(id)
    if (removed) this.build?.touched.add(id)
    return removed
  }

  /** The stamp `upsert` was given with the vector now held for `id`. */
  stampOf(id: string): string | undefined {
    return this.exact ? this.stamps.get(id) : this.approximate?.stampOf(id)
  }

  search(query: Float32Array, limit: number): VectorHit[] {
    return this.active.search(query, limit)
  }

  /**
   * Moves to the index the size calls for: starts (or joins) a background build above the
   * threshold, returns to exact well below it. Resolves true when an approximate index was just
   * built and switched to (worth saving), false otherwise.
   */
  maintain(): Promise<boolean> {
    if (this.build) return this.build.done
    const { approximateAbove, exactBelowRatio } = this.config
    if (this.exact && this.exact.size > approximateAbove) return this.startBuild(this.exact)
    if (this.approximate && this.approximate.size < approximateAbove * exactBelowRatio) {
      const exact = new ExactVectorIndex(this.options.scan)
      for (const [id, vector] of this.approximate.entries()) {
        exact.upsert(id, vector)
        const stamp = this.approximate.stampOf(id)
        if (stamp !== undefined) this.stamps.set(id, stamp)
      }
      this.exact = exact
      this.approximate = null
    }
    return Promise.resolve(false)
  }

  /**
   * Stops a build in progress at its next pause and stays exact (e.g. at shutdown); the next
   * `maintain()` starts over.
   */
  abandonBuild(): void {
    if (!this.build) return
    this.build.abandoned = true
    this.build.stop.abort()
  }

  private startBuild(exact: ExactVectorIndex): Promise<boolean> {
    const build = {
      touched: new Set<string>(),
      stop: new AbortController(),
      done: Promise.resolve(false),
      abandoned: false,
    }
    this.build = build
    build.done = this.copyInto(exact, build).finally(() => {
      this.build = null
    })
    return build.done
  }

  private async copyInto(
    exact: ExactVectorIndex,
    build: { touched: Set<string>; stop: AbortController; abandoned: boolean },
  ): Promise<boolean> {
    const { touched } = build
    const { pause, buildApproximate, createApproximate } = this.options
    const snapshot = await snapshotOf(exact, this.stamps, {
      targetRecall: this.config.targetRecall,
      calibrationQueries: this.config.calibrationQueries,
      batch: this.config.buildBatch,
      abandoned: () => build.abandoned,
      ...(pause ? { pause } : {}),
    })
    if (!snapshot) return false
    let built: ApproximateBuildResult | null
    try {
      built = buildApproximate
        ? await buildApproximate(snapshot, build.stop.signal)
        : await buildApproximateIndex(snapshot, createApproximate, {
            batch: this.config.buildBatch,
            reference: exact,
            abandoned: () => build.abandoned,
            ...(pause ? { pause } : {}),
          })
    } catch (error) {
      // A builder stopped by abandonBuild() fails as told: not an error.
      if (build.abandoned) return false
      throw error
    }
    if (!built || build.abandoned) return false
    const target = built.index
    this.calibration = built.calibration
    // Catch up with the writes made during the build, then switch, all in one synchronous step.
    for (const id of touched) {
      const vector = exact.vectorOf(id)
      if (vector) target.upsert(id, vector, this.stamps.get(id))
      else target.remove(id)
    }
    target.trim?.()
    this.approximate = target
    this.exact = null
    this.stamps.clear()
    return true
  }
}

/**
 * Copies the exact index into one buffer, `batch` vectors between pauses; null when abandoned.
 * Writes during the pauses are the caller's to catch up with (the build's `touched`).
 */
async function snapshotOf(
  exact: ExactVectorIndex,
  stamps: ReadonlyMap<string, string>,
  options: {
    targetRecall: number
    calibrationQueries: number
    batch: number
    pause?: () => Promise<void>
    abandoned: () => boolean
  },
): Promise<ApproximateBuildInput | null> {
  const ids = exact.idList()
  const dimensions = exact.dimensions ?? 0
  const vectors = new Float32Array(ids.length * dimensions)
  const kept: string[] = []
  const keptStamps: (string | undefined)[] = []
  // Larger steps than a build's: a copy is ~100x cheaper than an HNSW insert.
  const step = options.batch * 64
  for (let start = 0; start < ids.length; start += step) {
    for (const id of ids.slice(start, start + step)) {
      const vector = exact.vectorOf(id)
      if (!vector) continue
      vectors.set(vector, kept.length * dimensions)
      kept.push(id)
      keptStamps.push(stamps.get(id))
    }
    if (options.pause) await options.pause()
    if (options.abandoned()) return null
  }
  return {
    ids: kept,
    stamps: keptStamps,
    vectors: kept.length === ids.length ? vectors : vectors.slice(0, kept.length * dimensions),
    dimensions,
    targetRecall: options.targetRecall,
    calibrationQueries: options.calibrationQueries,
  }
}

/**
 * Fills a new approximate index from a snapshot and calibrates its search breadth against exact
 * answers: `reference` when given (the live exact index), else an exact index of the snapshot.
 * Null when `abandoned` turns true at a pause. What a worker thread runs for `buildApproximate`.
 */
export async function buildApproximateIndex(
  snapshot: ApproximateBuildInput,
  create: () => ApproximateVectorIndex,
  options: {
    batch?: number
    reference?: ExactReference
    pause?: () => Promise<void>
    abandoned?: () => boolean
  } = {},
): Promise<ApproximateBuildResult | null> {
  const { ids, stamps, vectors, dimensions } = snapshot
  const { pause, abandoned } = options
  const batch = options.batch ?? ids.length
  const target = create()
  const row = (i: number) => vectors.subarray(i * dimensions, (i + 1) * dimensions)
  for (let start = 0; start < ids.length; start += batch) {
    for (let i = start; i < Math.min(ids.length, start + batch); i++)
      target.upsert(ids[i] as string, row(i), stamps[i])
    if (pause) await pause()
    if (abandoned?.()) return null
  }
  if (snapshot.calibrationQueries === 0 || !isTunable(target)) return { index: target, calibration: null }
  let reference = options.reference
  if (!reference) {
    const exact = new ExactVectorIndex()
    for (let i = 0; i < ids.length; i++) exact.upsert(ids[i] as string, row(i))
    reference = exact
  }
  const calibration = await calibrateSearchBreadth({
    exact: reference,
    approximate: target,
    targetRecall: snapshot.targetRecall,
    sample: snapshot.calibrationQueries,
    ...(pause ? { pause } : {}),
  })
  if (abandoned?.()) return null
  return { index: target, calibration }
}

function isTunable(index: ApproximateVectorIndex): index is ApproximateVectorIndex & TunableVectorIndex {
  return typeof index.setSearchBreadth === 'function' && typeof index.searchBreadth === 'number'
}

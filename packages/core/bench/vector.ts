import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {
  type ClusteredVectorsOptions,
  clusteredVectors,
  paddedLength,
  QuantizedVectorIndex,
  recallAtK,
  seededRandom,
  type VectorHit,
} from '../src/index.ts'
import { TopK } from '../src/vector/top-k.ts'
import type { BenchRow } from './report.ts'

/**
 * Vector search: the exact scan, the int8 scan with exact rescoring, and the HNSW graph, on the
 * same data in the same run, so the HNSW/exact ratio is not skewed by a machine busier in one run
 * than another; and the machine's memory bandwidth, measured in the same run, to say what share
 * of it the scan reaches.
 *
 * Data: `clusteredVectors` defaults (1,000 Gaussian clusters of skewed popularity in a 48-dim
 * subspace mapped to 384 dims, plus noise, normalised), a stand-in for sentence embeddings; full
 * mode adds the hard case at 100k, isotropic Gaussian data (no clusters, no subspace), where graph
 * indexes do worst. Queries are fresh draws from the same distribution, not indexed vectors.
 *
 * Every figure is the median of several repetitions with min–max in the note; each repetition
 * runs a batch of distinct queries after a warm-up.
 */
export async function vectorBenchmarks(options: {
  quick: boolean
  random: () => number
}): Promise<BenchRow[]> {
  const { quick, random } = options
  const rows: BenchRow[] = []
  const bandwidth = measureBandwidth(quick, rows)
  const sizes = quick ? [10_000, 100_000] : [100_000, 1_000_000]
  // One seed per data set, drawn up front: a set stays the same when another set's query count
  // changes, so its cached graph (below) stays valid.
  const seeds = [...sizes, 0].map(() => Math.floor(random() * 2 ** 32))
  for (const [i, size] of sizes.entries())
    await benchSize(size, {}, 'clustered', { quick, seed: seeds[i] as number, rows, bandwidth })
  if (!quick)
    await benchSize(100_000, { latentDimensions: 0, clusters: 1 }, 'isotropic', {
      quick,
      seed: seeds[sizes.length] as number,
      rows,
      bandwidth,
      hnswOnly: true,
    })
  return rows
}

const DIMENSIONS = 384
const TOP_K = 10
const EF_SWEEP = [16, 32, 64, 128]

interface Context {
  quick: boolean
  seed: number
  rows: BenchRow[]
  /** Sequential read bandwidth, bytes/s. */
  bandwidth: number
  hnswOnly?: boolean
}

async function benchSize(
  size: number,
  shape: Partial<ClusteredVectorsOptions>,
  label: string,
  { quick, seed, rows, bandwidth, hnswOnly }: Context,
): Promise<void> {
  const name = `${(size / 1_000).toLocaleString('en-US')}k × ${DIMENSIONS} ${label}`
  const source = clusteredVectors(seededRandom(seed), { dimensions: DIMENSIONS, ...shape })
  // Data first: it then depends on the seed alone, whatever is drawn after it for queries.
  const data = source.many(size)
  const vectorAt = (i: number) => data.subarray(i * DIMENSIONS, (i + 1) * DIMENSIONS)
  const index = new QuantizedVectorIndex()
  for (let i = 0; i < size; i++) index.upsert(String(i), vectorAt(i))

  // The exact scan's queries are also the recall queries, its answers the ground truth.
  const large = size >= 1_000_000
  const exactQueries = Array.from({ length: large ? 15 : size >= 100_000 ? 30 : 200 }, () => source.next())
  const repetitions = quick ? 3 : 5
  const exact = repeat(repetitions, () => queriesPerSecond(exactQueries, (q) => index.searchExact(q, TOP_K)))
  const truth = exactQueries.map((q) => index.searchExact(q, TOP_K))
  const scanBytes = size * paddedLength(DIMENSIONS) * 4
  if (!hnswOnly) {
    rows.push(row(`exact scan ${name}`, exact, 'queries/s'))
    rows.push({
      name: `exact scan ${name}: bytes scanned`,
      value: (median(exact) * scanBytes) / 1e9,
      unit: 'GB/s',
      note: `${percent((median(exact) * scanBytes) / bandwidth)} of the measured read bandwidth`,
    })
    const int8 = repeat(repetitions, () => queriesPerSecond(exactQueries, (q) => index.search(q, TOP_K)))
    const found = exactQueries.map((q) => index.search(q, TOP_K))
    const int8Bytes = size * paddedLength(DIMENSIONS)
    rows.push(row(`int8 scan + rescoring ${name}`, int8, 'queries/s', `${ratio(int8, exact)} the exact scan`))
    rows.push({
      name: `int8 scan ${name}: recall@10 vs exact`,
      value: recallAtK(truth, found, TOP_K),
      unit: 'recall',
      note: `rescoring ${TOP_K * 4} candidates; int8 bytes scanned ${((median(int8) * int8Bytes) / 1e9).toFixed(2)} GB/s`,
    })
  }

  if (!hnswOnly) {
    // The scan before this change, for the gain: a dot-product helper called per slot, with a
    // remainder loop for dimensions not a multiple of 4 (what cost most, in isolation).
    const baseline = repeat(repetitions, () =>
      queriesPerSecond(exactQueries, (q) => baselineScan(data, size, q, TOP_K)),
    )
    rows.push(
      row(
        `previous exact scan ${name}`,
        baseline,
        'queries/s',
        `current scan is ${ratio(exact, baseline)} this`,
      ),
    )
  }
  await benchHnsw(name, size, data, exactQueries, truth, exact, quick, rows, source)
}

async function benchHnsw(
  name: string,
  size: number,
  data: Float32Array,
  exactQueries: Float32Array[],
  truth: VectorHit[][],
  exact: number[],
  quick: boolean,
  rows: BenchRow[],
  source: ReturnType<typeof clusteredVectors>,
): Promise<void> {
  // The HNSW adapter lives in the API (native code, files); the bench reaches for it by path so
  // exact and approximate search are measured on the same data in the same process.
  const { HnswVectorIndex, DEFAULT_HNSW_CONFIG } = await import('../../../apps/api/src/vector/hnsw-index.ts')
  const config = DEFAULT_HNSW_CONFIG
  // A 1M graph takes tens of minutes to build on one core: it is kept between runs in a cache
  // folder, keyed by the data and graph parameters, which also measures loading a saved index.
  const cacheDir = path.join(os.tmpdir(), 'engram-bench-vector')
  const key = `${size}-${DIMENSIONS}-${fingerprint(data)}-m${config.m}-efc${config.efConstruction}`
  const file = path.join(cacheDir, `${key}.hnsw`)
  const buildNote = path.join(cacheDir, `${key}.build.json`)
  const loadStart = performance.now()
  let hnsw = fs.existsSync(buildNote) ? await HnswVectorIndex.load(file, {}, DIMENSIONS) : null
  const loadSeconds = (performance.now() - loadStart) / 1_000
  let buildSeconds: number
  let buildOrigin: string
  if (hnsw && hnsw.size === size) {
    const saved = JSON.parse(fs.readFileSync(buildNote, 'utf8')) as { seconds: number; at: string }
    buildSeconds = saved.seconds
    buildOrigin = `built ${saved.at} (same data and parameters), loaded from its file in ${loadSeconds.toFixed(1)} s`
  } else {
    hnsw = new HnswVectorIndex({ initialCapacity: size })
    const start = performance.now()
    for (let i = 0; i < size; i++) hnsw.upsert(String(i), data.subarray(i * DIMENSIONS, (i + 1) * DIMENSIONS))
    buildSeconds = (performance.now() - start) / 1_000
    buildOrigin = 'built in this run'
    const saveStart = performance.now()
    hnsw.save(file)
    const saveSeconds = (performance.now() - saveStart) / 1_000
    fs.writeFileSync(buildNote, JSON.stringify({ seconds: buildSeconds, at: new Date().toISOString() }))
    const reloadStart = performance.now()
    await HnswVectorIndex.load(file, {}, DIMENSIONS)
    const reloadSeconds = (performance.now() - reloadStart) / 1_000
    buildOrigin += `; save ${saveSeconds.toFixed(1)} s, load ${reloadSeconds.toFixed(1)} s`
  }
  if (!hnsw) throw new Error('HNSW index failed to load')
  rows.push({
    name: `HNSW build ${name}`,
    value: buildSeconds,
    unit: 's',
    note: `M ${config.m}, efConstruction ${config.efConstruction}, one core; ${buildOrigin}`,
  })

  // Many more queries than the exact scan: each takes well under a millisecond.
  const queries = Array.from({ length: quick ? 500 : 2_000 }, () => source.next())
  const repetitions = quick ? 3 : 5
  for (const ef of EF_SWEEP) {
    hnsw.setEfSearch(ef)
    const qps = repeat(repetitions, () => queriesPerSecond(queries, (q) => hnsw.search(q, TOP_K)))
    const found = exactQueries.map((q) => hnsw.search(q, TOP_K))
    const recall = recallAtK(truth, found, TOP_K)
    const times = median(qps) / median(exact)
    const target = recall >= 0.95 && times >= 50 ? 'meets' : 'misses'
    rows.push(row(`HNSW efSearch ${ef} ${name}`, qps, 'queries/s', `${times.toFixed(0)}x the exact scan`))
    rows.push({
      name: `HNSW efSearch ${ef} ${name}: recall@10 vs exact`,
      value: recall,
      unit: 'recall',
      note: `${target} the target (recall@10 ≥ 0.95 at ≥ 50x exact): ${times.toFixed(0)}x`,
    })
  }
  hnsw.setEfSearch(config.efSearch)
}

/**
 * Sequential read bandwidth: Buffer.compare of two equal 512 MB buffers is a native memcmp over
 * both (1 GB read), far larger than any cache; a copy (read + write) is reported beside it. These
 * are what a scan over vectors in memory could reach at best.
 */
function measureBandwidth(quick: boolean, rows: BenchRow[]): number {
  const bytes = 512 * 1024 * 1024
  const a = Buffer.alloc(bytes, 7)
  const b = Buffer.alloc(bytes, 7)
  const repetitions = quick ? 3 : 7
  const read = repeat(repetitions, () => {
    const start = performance.now()
    if (Buffer.compare(a, b) !== 0) throw new Error('buffers differ')
    return (2 * bytes) / ((performance.now() - start) / 1_000) / 1e9
  })
  const copy = repeat(repetitions, () => {
    const start = performance.now()
    b.set(a)
    return (2 * bytes) / ((performance.now() - start) / 1_000) / 1e9
  })
  rows.push(
    row('memory bandwidth, sequential read (memcmp)', read, 'GB/s', `${(2 * bytes) / 2 ** 30} GiB read`),
  )
  rows.push(row('memory bandwidth, copy (read + write)', copy, 'GB/s', `${bytes / 2 ** 30} GiB copied`))
  return median(read) * 1e9
}

function baselineDot(data: Float32Array, offset: number, query: Float32Array, dims: number): number {
  let a = 0
  let b = 0
  let c = 0
  let d = 0
  let i = 0
  for (; i + 3 < dims; i += 4) {
    const o = offset + i
    a += (data[o] as number) * (query[i] as number)
    b += (data[o + 1] as number) * (query[i + 1] as number)
    c += (data[o + 2] as number) * (query[i + 2] as number)
    d += (data[o + 3] as number) * (query[i + 3] as number)
  }
  for (; i < dims; i++) a += (data[offset + i] as number) * (query[i] as number)
  return a + b + c + d
}

function baselineScan(data: Float32Array, size: number, query: Float32Array, k: number): number {
  const top = new TopK(k)
  for (let slot = 0; slot < size; slot++) {
    const score = baselineDot(data, slot * DIMENSIONS, query, DIMENSIONS)
    if (score > top.threshold) top.push(score, slot)
  }
  return top.size
}

/**
 * Queries per second over one pass of `queries`, after a warm-up (at least 200 ms and 3 queries)
 * that lets V8 optimise the search before the clock starts.
 */
function queriesPerSecond(queries: Float32Array[], search: (query: Float32Array) => unknown): number {
  const warmUp = performance.now()
  for (let i = 0; i < 3 || performance.now() - warmUp < 200; i++)
    search(queries[i % queries.length] as Float32Array)
  const start = performance.now()
  for (const q of queries) search(q)
  return queries.length / ((performance.now() - start) / 1_000)
}

function repeat(times: number, measure: () => number): number[] {
  return Array.from({ length: times }, measure)
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}

function row(name: string, values: number[], unit: string, note?: string): BenchRow {
  const spread = `${format(Math.min(...values))}–${format(Math.max(...values))} over ${values.length} runs`
  return { name, value: median(values), unit, note: note ? `${note}; ${spread}` : spread }
}

function ratio(values: number[], base: number[]): string {
  return `${(median(values) / median(base)).toFixed(2)}x`
}

function percent(share: number): string {
  return `${(share * 100).toFixed(0)}%`
}

function format(n: number): string {
  return Math.abs(n) >= 100 ? Math.round(n).toLocaleString('en-US') : n.toPrecision(3)
}

/** FNV-1a over a sample of the data: names the cached graph after the vectors it indexes. */
function fingerprint(data: Float32Array): string {
  const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
  let hash = 0x811c9dc5
  const step = Math.max(1, Math.floor(bytes.length / 65_536))
  for (let i = 0; i < bytes.length; i += step) {
    hash ^= bytes[i] as number
    hash = Math.imul(hash, 0x01000193)
  }
  return (hash >>> 0).toString(16)
}

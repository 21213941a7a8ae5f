import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
// The HNSW adapter lives in the API (native code, files); the bench reaches for it by path so
// exact and approximate search are measured on the same data in the same process.
import { DEFAULT_HNSW_CONFIG, HnswVectorIndex } from '../../store-sqlite/src/vector/hnsw-index.ts'
import {
  AdaptiveIndexConfigSchema,
  type ClusteredVectorsOptions,
  calibrateSearchBreadth,
  clusteredVectors,
  paddedLength,
  QuantizedVectorIndex,
  recallAtK,
  seededRandom,
} from '../src/index.ts'
import { TopK } from '../src/vector/top-k.ts'
import type { BenchRow } from './report.ts'
import { offlineEmbedderBenchmarks } from './vector-offline.ts'
import { vectorScanBenchmarks } from './vector-scan.ts'

/**
 * Vector search: the exact scan, the int8 scan with exact rescoring, and the HNSW graph, on the
 * same data in the same run, so the HNSW/exact ratio is not skewed by a machine busier in one run
 * than another; and the machine's memory bandwidth, measured in the same run, to say what share
 * of it the scan reaches.
 *
 * Data: `clusteredVectors` defaults (1,000 Gaussian clusters of skewed popularity in a 48-dim
 * subspace mapped to 384 dims, plus noise, normalised), a stand-in for sentence embeddings; full
 * mode adds a hard case at 100k: isotropic Gaussian data (no clusters, no subspace), where graph
 * indexes do worst. Queries are fresh draws from the same distribution, not indexed vectors. The
 * offline hashing embedder's vectors (the server's default) are measured in vector-offline.ts.
 * Each set also reports the efSearch the server's calibration picks for it.
 *
 * Every figure is the median of several repetitions with min–max in the note; each repetition
 * runs a batch of distinct queries after a warm-up. Rates and durations are per CPU-second of this
 * process (process.cpuUsage), the wall-clock median beside them in the note: every method measured
 * runs on this one thread, and on a shared machine wall time also counts the time other processes
 * held the core, which swung single runs by 2-3x here.
 */
export async function vectorBenchmarks(options: {
  quick: boolean
  random: () => number
  /** A LoCoMo-format file: its words head the offline embedder set's vocabulary. */
  dataset?: string | null
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
  if (!quick) {
    await benchSize(100_000, { latentDimensions: 0, clusters: 1 }, 'isotropic', {
      quick,
      seed: seeds[sizes.length] as number,
      rows,
      bandwidth,
      hnswOnly: true,
    })
  }
  // The server's default embedder (hashing, with WordNet) on text shaped like an agent's history,
  // searched with short queries: slot postings beside HNSW, both against the exact scan.
  rows.push(
    ...(await offlineEmbedderBenchmarks({
      quick,
      seed: seeds[sizes.length] as number,
      dataset: options.dataset,
    })),
  )
  // The SIMD kernel against the JavaScript scans, on data of its own seed (so the sets above, and
  // their cached graphs, stay as they were).
  rows.push(...vectorScanBenchmarks({ quick, random: seededRandom(18) }))
  return rows
}

const DIMENSIONS = 384
const ADAPTIVE_DEFAULTS = AdaptiveIndexConfigSchema.parse({})
const TOP_K = 10
/** efSearch values measured: the default (64) with one step each way, and more for hard data. */
const EF_SWEEP = [16, 32, 64, 128]
const EF_SWEEP_HARD = [64, 128, 256, 512]

interface Context {
  quick: boolean
  seed: number
  rows: BenchRow[]
  /** Sequential read bandwidth, bytes/s. */
  bandwidth: number
  /** Only HNSW rows (the exact scan is still measured: the ratio needs it). */
  hnswOnly?: boolean
}

/**
 * One data set. Everything is built first; then each repetition measures every method in turn
 * (exact, int8, the previous scan, HNSW at each efSearch), so a busier moment of the machine slows
 * all of them alike instead of skewing one ratio.
 */
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
  const index = new QuantizedVectorIndex()
  for (let i = 0; i < size; i++) index.upsert(String(i), data.subarray(i * DIMENSIONS, (i + 1) * DIMENSIONS))
  const { hnsw, buildRow } = await hnswFor(name, size, data)
  rows.push(buildRow)

  // Recall queries and their exact answers; the scans are timed on the first few of them (a
  // 1M scan takes ~0.4 s), HNSW on many more (each takes well under a millisecond).
  const large = size >= 1_000_000
  const recallQueries = Array.from({ length: large ? 50 : 100 }, () => source.next())
  const truth = recallQueries.map((q) => index.searchExact(q, TOP_K))
  const scanQueries = recallQueries.slice(0, large ? 12 : size >= 100_000 ? 30 : 100)
  const hnswQueries = Array.from({ length: quick ? 500 : 2_000 }, () => source.next())
  // What the server would pick for this data (AdaptiveVectorIndex's defaults), measured with the rest.
  const calibration = await calibrateSearchBreadth({
    exact: {
      idList: () => index.idList(),
      vectorOf: (id) => index.vectorOf(id),
      search: (q, k) => index.searchExact(q, k),
    },
    approximate: hnsw,
    targetRecall: ADAPTIVE_DEFAULTS.targetRecall,
    sample: ADAPTIVE_DEFAULTS.calibrationQueries,
  })
  const sweep = [...new Set([...(hnswOnly ? EF_SWEEP_HARD : EF_SWEEP), calibration.breadth])].sort(
    (a, b) => a - b,
  )

  const exact = new Rates()
  const int8 = new Rates()
  const previous = new Rates()
  const approximate = new Map(sweep.map((ef) => [ef, new Rates()]))
  for (let rep = 0; rep < (quick ? 3 : 5); rep++) {
    exact.add(queriesPerSecond(scanQueries, (q) => index.searchExact(q, TOP_K)))
    if (!hnswOnly) {
      int8.add(queriesPerSecond(scanQueries, (q) => index.search(q, TOP_K)))
      previous.add(queriesPerSecond(scanQueries, (q) => previousScan(data, size, q, TOP_K)))
    }
    for (const ef of sweep) {
      hnsw.setEfSearch(ef)
      approximate.get(ef)?.add(queriesPerSecond(hnswQueries, (q) => hnsw.search(q, TOP_K)))
    }
  }

  if (!hnswOnly) {
    const scanBytes = size * paddedLength(DIMENSIONS) * 4
    rows.push(row(`exact scan ${name}`, exact, 'queries/s'))
    rows.push({
      name: `exact scan ${name}: bytes scanned`,
      value: (median(exact.cpu) * scanBytes) / 1e9,
      unit: 'GB/s',
      note: `${percent((median(exact.cpu) * scanBytes) / bandwidth)} of the measured read bandwidth`,
    })
    rows.push(
      row(
        `previous exact scan ${name}`,
        previous,
        'queries/s',
        `the current scan: ${ratio(exact, previous)} this`,
      ),
    )
    const int8Bytes = size * paddedLength(DIMENSIONS)
    rows.push(row(`int8 scan + rescoring ${name}`, int8, 'queries/s', `${ratio(int8, exact)} the exact scan`))
    rows.push({
      name: `int8 scan ${name}: recall@10 vs exact`,
      value: recallAtK(
        truth,
        recallQueries.map((q) => index.search(q, TOP_K)),
        TOP_K,
      ),
      unit: 'recall',
      note: `${recallQueries.length} queries, ${TOP_K * 4} candidates rescored; int8 bytes scanned ${((median(int8.cpu) * int8Bytes) / 1e9).toFixed(2)} GB/s`,
    })
  }
  const calibratedTimes = median(
    (approximate.get(calibration.breadth) as Rates).cpu.map(
      (value, rep) => value / (exact.cpu[rep] as number),
    ),
  )
  hnsw.setEfSearch(calibration.breadth)
  rows.push({
    name: `HNSW calibrated efSearch ${name}`,
    value: calibration.breadth,
    unit: 'efSearch',
    note: `recall@10 ${calibration.recall.toFixed(3)} on ${calibration.queries} stored vectors (leave-one-out, target ${ADAPTIVE_DEFAULTS.targetRecall}); on fresh queries ${recallAtK(
      truth,
      recallQueries.map((q) => hnsw.search(q, TOP_K)),
      TOP_K,
    ).toFixed(3)} at ${calibratedTimes.toFixed(0)}x the exact scan`,
  })
  for (const ef of sweep) {
    hnsw.setEfSearch(ef)
    const qps = approximate.get(ef) as Rates
    const recall = recallAtK(
      truth,
      recallQueries.map((q) => hnsw.search(q, TOP_K)),
      TOP_K,
    )
    // Each repetition's ratio against the exact scan measured just before it.
    const times = qps.cpu.map((value, rep) => value / (exact.cpu[rep] as number))
    const wallTimes = qps.wall.map((value, rep) => value / (exact.wall[rep] as number))
    const verdict = recall >= 0.95 && median(times) >= 50 ? 'meets' : 'misses'
    rows.push(row(`HNSW efSearch ${ef} ${name}`, qps, 'queries/s'))
    rows.push(row(`HNSW efSearch ${ef} ${name}: speed-up over exact`, { cpu: times, wall: wallTimes }, 'x'))
    rows.push({
      name: `HNSW efSearch ${ef} ${name}: recall@10 vs exact`,
      value: recall,
      unit: 'recall',
      note: `${recallQueries.length} queries; ${verdict} the target (recall@10 ≥ 0.95 at ≥ 50x exact)`,
    })
  }
  hnsw.setEfSearch(DEFAULT_HNSW_CONFIG.efSearch)
}

/**
 * The HNSW graph of `data`, with a row for its build time. A 1M graph takes ~10 min to build on
 * one core, so graphs are kept between runs in a cache folder, keyed by the data and the graph
 * parameters; a cached one is loaded (which measures loading a saved index) and the row names the
 * run that built it.
 */
export async function hnswFor(name: string, size: number, data: Float32Array) {
  const config = DEFAULT_HNSW_CONFIG
  const cacheDir = path.join(os.tmpdir(), 'engram-bench-vector')
  const key = `${size}-${DIMENSIONS}-${fingerprint(data)}-m${config.m}-efc${config.efConstruction}`
  const file = path.join(cacheDir, `${key}.hnsw`)
  const buildNote = path.join(cacheDir, `${key}.build.json`)
  const loadStart = performance.now()
  const cached = fs.existsSync(buildNote) ? await HnswVectorIndex.load(file, {}, DIMENSIONS) : null
  // Wall time: the read runs on libuv's thread pool, not this thread.
  const loadSeconds = (performance.now() - loadStart) / 1_000
  const settings = `M ${config.m}, efConstruction ${config.efConstruction}, one core`
  if (cached && cached.size === size) {
    // Notes written before CPU time was recorded hold the wall-clock seconds only.
    const saved = JSON.parse(fs.readFileSync(buildNote, 'utf8')) as {
      cpuSeconds?: number
      wallSeconds?: number
      seconds?: number
      at: string
    }
    const wall = saved.wallSeconds ?? saved.seconds ?? Number.NaN
    const time =
      saved.cpuSeconds === undefined ? 'wall clock, CPU time not recorded' : `wall ${wall.toFixed(0)} s`
    return {
      hnsw: cached,
      buildRow: {
        name: `HNSW build ${name}`,
        value: saved.cpuSeconds ?? wall,
        unit: 's',
        note: `${settings}; ${time}; built ${saved.at} (same data and parameters), loaded from its file in ${loadSeconds.toFixed(1)} s`,
      },
    }
  }
  const hnsw = new HnswVectorIndex({ initialCapacity: size })
  const start = performance.now()
  const startCpu = cpuMilliseconds()
  for (let i = 0; i < size; i++) hnsw.upsert(String(i), data.subarray(i * DIMENSIONS, (i + 1) * DIMENSIONS))
  const seconds = (cpuMilliseconds() - startCpu) / 1_000
  const wall = (performance.now() - start) / 1_000
  const saveStart = performance.now()
  hnsw.save(file)
  const saveSeconds = (performance.now() - saveStart) / 1_000
  fs.writeFileSync(
    buildNote,
    JSON.stringify({ cpuSeconds: seconds, wallSeconds: wall, at: new Date().toISOString() }),
  )
  const reloadStart = performance.now()
  await HnswVectorIndex.load(file, {}, DIMENSIONS)
  const reloadSeconds = (performance.now() - reloadStart) / 1_000
  return {
    hnsw,
    buildRow: {
      name: `HNSW build ${name}`,
      value: seconds,
      unit: 's',
      note: `${settings}; wall ${wall.toFixed(0)} s; built in this run; save ${saveSeconds.toFixed(1)} s, load ${reloadSeconds.toFixed(1)} s`,
    },
  }
}

/**
 * Sequential read bandwidth: Buffer.compare of two equal 512 MB buffers is a native memcmp over
 * both (1 GB read), far larger than any cache; a copy (read + write) is reported beside it. These
 * are what one core scanning vectors in memory could reach at best.
 */
function measureBandwidth(quick: boolean, rows: BenchRow[]): number {
  const bytes = 512 * 1024 * 1024
  const a = Buffer.alloc(bytes, 7)
  const b = Buffer.alloc(bytes, 7)
  const read = new Rates()
  const copy = new Rates()
  for (let rep = 0; rep < (quick ? 3 : 7); rep++) {
    read.add(
      timed(
        () => {
          if (Buffer.compare(a, b) !== 0) throw new Error('buffers differ')
        },
        (2 * bytes) / 1e9,
      ),
    )
    copy.add(timed(() => b.set(a), (2 * bytes) / 1e9))
  }
  rows.push(
    row('memory bandwidth, sequential read (memcmp)', read, 'GB/s', `${(2 * bytes) / 2 ** 30} GiB read`),
  )
  rows.push(row('memory bandwidth, copy (read + write)', copy, 'GB/s', `${bytes / 2 ** 30} GiB copied`))
  return median(read.cpu) * 1e9
}

/**
 * The scan before this change, for the gain: a dot-product helper called per slot, with a
 * remainder loop for dimensions not a multiple of 4 (the remainder loop cost most, in isolation).
 */
function previousDot(data: Float32Array, offset: number, query: Float32Array, dims: number): number {
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

function previousScan(data: Float32Array, size: number, query: Float32Array, k: number): number {
  const top = new TopK(k)
  for (let slot = 0; slot < size; slot++) {
    const score = previousDot(data, slot * DIMENSIONS, query, DIMENSIONS)
    if (score > top.threshold) top.push(score, slot)
  }
  return top.size
}

/** Repeated measurements of one rate: per CPU-second and per wall-clock second. */
export class Rates {
  readonly cpu: number[] = []
  readonly wall: number[] = []
  add(rate: { cpu: number; wall: number }): void {
    this.cpu.push(rate.cpu)
    this.wall.push(rate.wall)
  }
}

export function cpuMilliseconds(): number {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1_000
}

/** `work` units per second of CPU time and of wall time, for one run of `run`. */
function timed(run: () => void, work: number): { cpu: number; wall: number } {
  const wallStart = performance.now()
  const cpuStart = cpuMilliseconds()
  run()
  const cpu = cpuMilliseconds() - cpuStart
  const wall = performance.now() - wallStart
  // CPU time is counted in microseconds: a run too short to register falls back to wall time.
  return { cpu: (work / Math.max(cpu, 1e-3 * wall, 1e-3)) * 1_000, wall: (work / wall) * 1_000 }
}

/**
 * Queries per second over one pass of `queries`, after a warm-up (at least 200 ms and 3 queries)
 * that lets V8 optimise the search before the clock starts.
 */
export function queriesPerSecond(
  queries: Float32Array[],
  search: (query: Float32Array) => unknown,
): { cpu: number; wall: number } {
  const warmUp = performance.now()
  for (let i = 0; i < 3 || performance.now() - warmUp < 200; i++)
    search(queries[i % queries.length] as Float32Array)
  return timed(() => {
    for (const q of queries) search(q)
  }, queries.length)
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}

export function row(
  name: string,
  rates: { cpu: number[]; wall: number[] },
  unit: string,
  note?: string,
): BenchRow {
  const { cpu, wall } = rates
  const spread = `${format(Math.min(...cpu))}–${format(Math.max(...cpu))} over ${cpu.length} runs; wall clock ${format(median(wall))}`
  return { name, value: median(cpu), unit, note: note ? `${note}; ${spread}` : spread }
}

function ratio(values: Rates, base: Rates): string {
  return `${(median(values.cpu) / median(base.cpu)).toFixed(2)}x`
}

function percent(share: number): string {
  return `${(share * 100).toFixed(0)}%`
}

export function format(n: number): string {
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

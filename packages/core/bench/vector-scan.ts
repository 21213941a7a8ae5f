import {
  clusteredVectors,
  int8Stride,
  paddedLength,
  QuantizedVectorIndex,
  ScanKernel,
  seededRandom,
} from '../src/index.ts'
import type { BenchRow } from './report.ts'

/**
 * The exact and int8 scans on the WebAssembly SIMD kernel against the same scans in JavaScript,
 * as bytes read per second and as a share of the machine's read bandwidth, all measured in this
 * run. The bandwidth is the kernel's own `read_bandwidth` (the scans' v128 loads with one xor per
 * 16 bytes) over 512 MiB, far past the caches: what a scan of vectors in memory could reach on
 * this core at best. Each repetition measures the bandwidth and then every scan in turn, so a
 * busier moment of the shared machine slows them alike; ratios are the median of per-repetition
 * ratios. Rates are per CPU-second of this thread (process.cpuUsage), wall clock in the note.
 */
export function vectorScanBenchmarks(options: { quick: boolean; random: () => number }): BenchRow[] {
  const { quick, random } = options
  const rows: BenchRow[] = []
  const sizes = quick ? [10_000, 100_000] : [100_000, 1_000_000]
  const bandwidth = new BandwidthProbe()
  for (const size of sizes) benchScans(size, Math.floor(random() * 2 ** 32), quick, bandwidth, rows)
  rows.unshift(
    row('memory bandwidth, SIMD read (scan kernel)', bandwidth.rates.scaled(1e-9), 'GB/s', {
      note: `${BANDWIDTH_BYTES / 2 ** 20} MiB read with v128 loads, best of 3 passes before each repetition of the scans below`,
    }),
  )
  return rows
}

const DIMENSIONS = 384
const TOP_K = 10
const BANDWIDTH_BYTES = 512 * 2 ** 20
/** The target: the exact scan at ≥ 50% of the read bandwidth measured in the same run. */
const TARGET_SHARE = 50

class BandwidthProbe {
  readonly rates = new Rates()
  private readonly kernel: ScanKernel

  constructor() {
    const kernel = ScanKernel.create()
    if (kernel === null || !kernel.reserve(BANDWIDTH_BYTES)) throw new Error('no SIMD kernel on this engine')
    // Touch every page so the first measurement does not count page faults.
    new Uint8Array(kernel.buffer, 0, BANDWIDTH_BYTES).fill(1)
    this.kernel = kernel
  }

  /**
   * One measurement (bytes/s), kept for the row: the best of three passes. A pass takes ~25 ms,
   * and process CPU time also counts V8's background threads (a GC marking the 1M index's heap
   * cut single passes to a tenth); noise only ever lowers a pass's rate.
   */
  measure(): { cpu: number; wall: number } {
    const passes = Array.from({ length: 3 }, () =>
      timed(() => this.kernel.readBandwidth(0, BANDWIDTH_BYTES), BANDWIDTH_BYTES),
    )
    const rate = {
      cpu: Math.max(...passes.map((pass) => pass.cpu)),
      wall: Math.max(...passes.map((pass) => pass.wall)),
    }
    this.rates.add(rate)
    return rate
  }
}

function benchScans(size: number, seed: number, quick: boolean, probe: BandwidthProbe, rows: BenchRow[]) {
  const name = `${(size / 1_000).toLocaleString('en-US')}k × ${DIMENSIONS}`
  const source = clusteredVectors(seededRandom(seed), { dimensions: DIMENSIONS })
  const kernel = new QuantizedVectorIndex()
  const javascript = new QuantizedVectorIndex({ kernel: 'javascript' })
  // Filled in chunks so the source data is never held whole next to two indexes (1M: 1.5 GB each).
  for (let start = 0; start < size; start += 10_000) {
    const chunk = source.many(Math.min(10_000, size - start))
    for (let i = 0; i * DIMENSIONS < chunk.length; i++) {
      const vector = chunk.subarray(i * DIMENSIONS, (i + 1) * DIMENSIONS)
      kernel.upsert(String(start + i), vector)
      javascript.upsert(String(start + i), vector)
    }
  }
  if (!kernel.usesKernel) throw new Error('the index did not move to the SIMD kernel')
  const queries = Array.from({ length: size >= 1_000_000 ? 8 : quick ? 10 : 30 }, () => source.next())
  const scans = {
    exactKernel: (q: Float32Array) => kernel.searchExact(q, TOP_K),
    exactJavascript: (q: Float32Array) => javascript.searchExact(q, TOP_K),
    int8Kernel: (q: Float32Array) => kernel.search(q, TOP_K),
    int8Javascript: (q: Float32Array) => javascript.search(q, TOP_K),
  }
  const rates = Object.fromEntries(Object.keys(scans).map((key) => [key, new Rates()])) as Record<
    keyof typeof scans,
    Rates
  >
  const bandwidths = new Rates()
  for (let rep = 0; rep < (quick ? 3 : 5); rep++) {
    bandwidths.add(probe.measure())
    for (const [key, search] of Object.entries(scans)) {
      rates[key as keyof typeof scans].add(queriesPerSecond(queries, search))
    }
  }
  // The same answers, or the speed means nothing: int8 hits are exactly equal, exact ones within
  // f32 rounding (the kernel sums in f32, JavaScript in f64).
  for (const query of queries) {
    const a = scans.int8Kernel(query)
    const b = scans.int8Javascript(query)
    if (JSON.stringify(a) !== JSON.stringify(b)) throw new Error(`int8 scans differ at ${name}`)
    const exactA = scans.exactKernel(query)
    const exactB = scans.exactJavascript(query)
    if (exactA.some((hit, i) => Math.abs(hit.similarity - (exactB[i]?.similarity ?? Number.NaN)) > 1e-5))
      throw new Error(`exact scans differ beyond rounding at ${name}`)
  }

  const floatBytes = size * paddedLength(DIMENSIONS) * 4
  const codeBytes = size * int8Stride(DIMENSIONS)
  const scanRows = (label: string, key: 'exact' | 'int8', bytes: number, rescored: string) => {
    const simd = rates[`${key}Kernel`]
    const plain = rates[`${key}Javascript`]
    const simdName = `${label} ${name}, SIMD kernel`
    const plainName = `${label} ${name}, JavaScript`
    const gbs = (r: Rates) => r.scaled(bytes / 1e9)
    const share = (r: Rates) =>
      r.perRep((value, rep, clock) => (100 * value * bytes) / (bandwidths[clock][rep] as number))
    rows.push(row(plainName, plain, 'queries/s', { note: rescored }))
    rows.push(row(simdName, simd, 'queries/s', { note: rescored, baseline: plainName }))
    rows.push(row(`${plainName}: bytes read`, gbs(plain), 'GB/s'))
    rows.push(row(`${simdName}: bytes read`, gbs(simd), 'GB/s', { baseline: `${plainName}: bytes read` }))
    rows.push(
      row(`${plainName}: share of read bandwidth`, share(plain), '%', {
        note: 'of the SIMD read bandwidth measured just before, per repetition',
      }),
    )
    rows.push(
      row(`${simdName}: share of read bandwidth`, share(simd), '%', {
        note: 'of the SIMD read bandwidth measured just before, per repetition',
        // The target is for data in memory: at 10k the vectors (15 MB) fit in the caches.
        ...(key === 'exact' && size >= 100_000 ? { target: { op: '>=' as const, value: TARGET_SHARE } } : {}),
      }),
    )
  }
  scanRows('exact scan', 'exact', floatBytes, `top-${TOP_K}, ${queries.length} queries per repetition`)
  scanRows(
    'int8 scan + rescoring',
    'int8',
    codeBytes,
    `top-${TOP_K} from ${TOP_K * 4} int8 candidates rescored exactly; int8 codes ${int8Stride(DIMENSIONS)} bytes a vector`,
  )
}

/** Repeated measurements of one rate: per CPU-second and per wall-clock second. */
class Rates {
  readonly cpu: number[] = []
  readonly wall: number[] = []
  add(rate: { cpu: number; wall: number }): void {
    this.cpu.push(rate.cpu)
    this.wall.push(rate.wall)
  }
  scaled(factor: number): Rates {
    return this.perRep((value) => value * factor)
  }
  perRep(map: (value: number, rep: number, clock: 'cpu' | 'wall') => number): Rates {
    const out = new Rates()
    for (const [rep, cpu] of this.cpu.entries())
      out.add({ cpu: map(cpu, rep, 'cpu'), wall: map(this.wall[rep] as number, rep, 'wall') })
    return out
  }
}

function cpuMilliseconds(): number {
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
  return { cpu: (work / Math.max(cpu, 1e-3 * wall, 1e-3)) * 1_000, wall: (work / wall) * 1_000 }
}

/** Queries per second over `queries`, after a warm-up (≥ 100 ms and 2 queries) for V8's tiers. */
function queriesPerSecond(queries: Float32Array[], search: (query: Float32Array) => unknown) {
  const warmUp = performance.now()
  for (let i = 0; i < 2 || performance.now() - warmUp < 100; i++)
    search(queries[i % queries.length] as Float32Array)
  return timed(() => {
    for (const q of queries) search(q)
  }, queries.length)
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2
}

function row(
  name: string,
  rates: Rates,
  unit: string,
  extra: { note?: string; baseline?: string; target?: BenchRow['target'] } = {},
): BenchRow {
  const format = (n: number) =>
    Math.abs(n) >= 100 ? Math.round(n).toLocaleString('en-US') : n.toPrecision(3)
  const spread = `${format(Math.min(...rates.cpu))}–${format(Math.max(...rates.cpu))} over ${rates.cpu.length} runs; wall clock ${format(median(rates.wall))}`
  return {
    name,
    value: median(rates.cpu),
    unit,
    better: 'higher',
    note: extra.note ? `${extra.note}; ${spread}` : spread,
    ...(extra.baseline ? { baseline: extra.baseline } : {}),
    ...(extra.target ? { target: extra.target } : {}),
  }
}

import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

// ENGRAM_BENCH_RESULTS_DIR: elsewhere than the repository's (the CLI's `eval --json` reads its
// report from a temporary folder, so a run does not overwrite a developer's figures).
export const RESULTS_DIR =
  process.env.ENGRAM_BENCH_RESULTS_DIR ??
  path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../bench/results')

/**
 * One figure. A suite returns `name`, `value`, `unit` (and a `note`); the harness (bench/harness)
 * runs the suite several times and fills in the rest. A suite that repeats a measurement itself
 * (the load test's autocannon runs) may give `samples`; `value` is then their median.
 */
export interface BenchRow {
  name: string
  value: number
  unit: string
  note?: string
  /** Every repetition's value, in run order. */
  samples?: number[]
  /** Half the range of the samples, in `unit` (0 with one sample). */
  spread?: number
  /** Whether a larger value is better: what "met" means for a target and how a ratio reads. */
  better?: 'higher' | 'lower'
  /** The name of a row measured in the same run (a peer, a baseline): the harness adds `ratio`. */
  baseline?: string
  /** value / baseline's value, the median of the per-repetition ratios. */
  ratio?: number
  /** The target for this figure; `met` is filled in by the harness from the median. */
  target?: { op: '<=' | '>='; value: number; met?: boolean }
}

/** What every suite is called with: the same seed every repetition, so inputs are identical. */
export interface BenchOptions {
  quick: boolean
  random: () => number
}

/** Writes `<name>.json` and `<name>.md` under bench/results and prints the table. */
export function writeReport(
  name: string,
  title: string,
  rows: BenchRow[],
  context: Record<string, unknown> = {},
): void {
  fs.mkdirSync(RESULTS_DIR, { recursive: true })
  const machine = {
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    at: new Date().toISOString(),
  }
  fs.writeFileSync(
    path.join(RESULTS_DIR, `${name}.json`),
    `${JSON.stringify({ title, machine, context, rows }, null, 2)}\n`,
  )
  const format = (n: number) =>
    Math.abs(n) >= 100 ? Math.round(n).toLocaleString('en-US') : n.toPrecision(3)
  const lines = [
    `## ${title}`,
    '',
    `Node ${machine.node}, ${machine.platform}, ${machine.at}`,
    '',
    '| measure | value | unit | note |',
    '|---|---:|---|---|',
    ...rows.map((r) => `| ${r.name} | ${format(r.value)} | ${r.unit} | ${r.note ?? ''} |`),
    '',
  ]
  fs.writeFileSync(path.join(RESULTS_DIR, `${name}.md`), lines.join('\n'))
  console.info(lines.join('\n'))
}

/** Runs `fn` repeatedly for at least `minMs` after a warm-up; returns operations per second. */
export function opsPerSecond(fn: () => void, minMs = 1_000): number {
  for (let i = 0; i < 3; i++) fn()
  let runs = 0
  const start = performance.now()
  let elapsed = 0
  while (elapsed < minMs) {
    fn()
    runs++
    elapsed = performance.now() - start
  }
  return (runs / elapsed) * 1_000
}

/** The p-th percentile (0-100) by nearest rank over a copy of `values`; NaN for none. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[rank] as number
}

export const median = (values: readonly number[]): number => {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2
}

/** Benchmarks draw their inputs from the same seeded generator as the tests. */
export { seededRandom } from '../src/random.ts'

import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

export const RESULTS_DIR = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../../bench/results',
)

export interface BenchRow {
  name: string
  value: number
  unit: string
  note?: string
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

/** A small deterministic generator: benchmarks must be repeatable. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}

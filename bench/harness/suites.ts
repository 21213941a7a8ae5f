import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import type { BenchOptions, BenchRow } from '../../packages/core/bench/report.ts'

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')

export interface SuiteContext extends BenchOptions {
  /** A LoCoMo-format file when one was given or found, else null. */
  dataset: string | null
  /** 0-based; every repetition gets a fresh generator with the suite's seed. */
  repetition: number
  /** An OpenAI-compatible model to measure too (--llm-url URL --llm-model M), else null. */
  llm?: { url: string; model: string; apiKey?: string } | null
}

export interface Suite {
  id: string
  title: string
  /** The seed of the suite's random generator: the same inputs every repetition and every run. */
  seed: number
  /**
   * Runs of the whole suite. A suite that repeats inside (the load test repeats each autocannon
   * run and returns `samples`) or whose figures are counts (recall) runs once.
   */
  repetitions: { full: number; quick: number }
  /** One run first whose figures are thrown away (JIT, caches, page cache). */
  warmup?: boolean
  /** Why the suite cannot run here (a missing dataset, a file not on this branch), or null. */
  unavailable?(context: SuiteContext): string | null
  run(context: SuiteContext): Promise<BenchRow[]>
}

const fromRoot = (file: string) => path.join(REPO_ROOT, file)

/**
 * A suite that lives on another branch until merged: active as soon as its file exists, so the
 * merge needs no change here. `exportName` is a function `(options) => Promise<BenchRow[]>`.
 */
function optionalSuite(
  suite: Omit<Suite, 'run' | 'unavailable'>,
  file: string,
  exportName: string,
  options: (context: SuiteContext) => Record<string, unknown> = (c) => ({ quick: c.quick, random: c.random }),
): Suite {
  return {
    ...suite,
    unavailable: () => (fs.existsSync(fromRoot(file)) ? null : `${file} is not on this branch`),
    async run(context) {
      const module = (await import(pathToFileURL(fromRoot(file)).href)) as Record<string, unknown>
      const run = module[exportName]
      if (typeof run !== 'function') throw new Error(`${file} does not export ${exportName}()`)
      return (run as (options: Record<string, unknown>) => Promise<BenchRow[]>)(options(context))
    },
  }
}

/** The entry file of a workspace package (its package.json "exports" or "main"). */
function packageEntry(directory: string): string {
  const manifest = fromRoot(`${directory}/package.json`)
  if (!fs.existsSync(manifest)) return `${directory}/index.ts`
  const json = JSON.parse(fs.readFileSync(manifest, 'utf8')) as { exports?: unknown; main?: unknown }
  const pick = (value: unknown): string | undefined => {
    if (typeof value === 'string') return value
    if (value && typeof value === 'object') {
      const record = value as Record<string, unknown>
      return pick(record['.'] ?? record.import ?? record.default)
    }
    return undefined
  }
  return path.posix.join(directory, pick(json.exports) ?? pick(json.main) ?? 'index.ts')
}

/**
 * Every benchmark, in the order they run. To add one: export `async function xBenchmarks(options)`
 * returning BenchRow[] from a file of its package, and add an entry here. Suites run one after
 * another, never in parallel: they would measure each other.
 */
export const SUITES: Suite[] = [
  {
    id: 'core',
    title: 'Core engine (packages/core)',
    seed: 7,
    repetitions: { full: 5, quick: 2 },
    warmup: true,
    run: async (c) => (await import('../../packages/core/bench/run.ts')).coreBenchmarks(c),
  },
  // Vector search (HNSW adapter) and the redundancy join: packages/core/bench/{vector,redundancy}.ts.
  optionalSuite(
    {
      id: 'vector',
      title: 'Vector search (packages/core/src/vector)',
      seed: 17,
      repetitions: { full: 3, quick: 1 },
    },
    'packages/core/bench/vector.ts',
    'vectorBenchmarks',
    (c) => ({ quick: c.quick, random: c.random, dataset: c.dataset }),
  ),
  optionalSuite(
    {
      id: 'redundancy',
      title: 'Redundancy join (packages/core/src/analyzer)',
      seed: 19,
      repetitions: { full: 3, quick: 1 },
    },
    'packages/core/bench/redundancy.ts',
    'redundancyBenchmarks',
  ),
  optionalSuite(
    {
      id: 'lexical',
      title: 'In-process lexical index: pruned top-k vs exhaustive BM25 (packages/core/src/retrieval)',
      seed: 41,
      repetitions: { full: 1, quick: 1 },
    },
    'packages/core/bench/lexical-index.ts',
    'lexicalIndexBenchmarks',
  ),
  optionalSuite(
    {
      id: 'append-statements',
      title:
        "An append's statements on SQLite (issue 18): one INSERT per group commit and plain VALUES for new rows' jobs vs each append's own statements, alternating in one run",
      seed: 59,
      // Each row alternates the two databases round by round inside one run.
      repetitions: { full: 1, quick: 1 },
    },
    'packages/store-sqlite/bench/append-statements.ts',
    'appendStatementBenchmarks',
  ),
  {
    id: 'api',
    title: 'API over SQLite (apps/api, yoga.fetch, no network)',
    seed: 11,
    repetitions: { full: 3, quick: 1 },
    run: async (c) => (await import('../../apps/api/bench/run.ts')).apiBenchmarks(c),
  },
  {
    id: 'context-window',
    title:
      "contextWindow and memoryContext's conversation with token counts kept (issue 18) vs counted afresh (ENGRAM_MESSAGE_TOKEN_COUNTS=0), alternating in one run",
    seed: 53,
    repetitions: { full: 3, quick: 1 },
    run: async (c) =>
      (await import('../../apps/api/bench/context-window-counts.ts')).contextWindowCountBenchmarks(c),
  },
  {
    id: 'backends',
    title: 'SQLite vs Postgres (apps/api, yoga.fetch; Postgres: a local postgresql-15)',
    seed: 29,
    repetitions: { full: 3, quick: 1 },
    run: async (c) => (await import('../../apps/api/bench/backends.ts')).backendBenchmarks(c),
  },
  {
    id: 'backends-scale',
    title:
      'Search at scale on SQLite and Postgres side by side (issue 18: 100K messages and 10K memories, quick 10K and 2K; the same queries alternating between the backends)',
    seed: 47,
    // The latency rows are hundreds of searches inside one run; seeding 100K messages twice is enough.
    repetitions: { full: 1, quick: 1 },
    run: async (c) =>
      (await import('../../apps/api/bench/backends-scale.ts')).backendScaleBenchmarks({ quick: c.quick }),
  },
  {
    id: 'replicas',
    title:
      'API replicas on one Postgres + Redis (1, 2, 3 processes over HTTP; req/s and server CPU per request)',
    seed: 31,
    // Each run starts its replicas and warms them up; the figures are rates over a fixed window.
    repetitions: { full: 1, quick: 1 },
    run: async (c) => (await import('../../apps/api/bench/replicas.ts')).replicaBenchmarks(c),
  },
  {
    id: 'trajectories',
    title:
      'Trajectory memory (issue 16): reference hit rate and precision on a spec 004-shaped workload, context tokens with and without memory, runContext p50/p95 at 10K trajectories per domain per backend',
    seed: 41,
    // Hit rate and precision are counts; the latency rows repeat 200 queries inside one run.
    repetitions: { full: 1, quick: 1 },
    run: async (c) => (await import('../../apps/api/bench/trajectories.ts')).trajectoryBenchmarks(c),
  },
  {
    id: 'load',
    title: 'Server under load (apps/api over HTTP on 127.0.0.1, autocannon)',
    seed: 23,
    // Each measurement is repeated inside (samples); seeding 100K entries once is enough.
    repetitions: { full: 1, quick: 1 },
    run: async (c) => (await import('../../apps/api/bench/load.ts')).loadBenchmarks(c),
  },
  {
    id: 'quality',
    title:
      'Retrieval quality (LoCoMo-format dataset: recall@k per conversation vs BM25, cross-validated changes, search p95)',
    seed: 29,
    // Recall is a count, not a timing: one run gives the same figures as five.
    repetitions: { full: 1, quick: 1 },
    unavailable: (c) =>
      c.dataset ? null : 'no dataset: pass --dataset PATH or put one at ../shared/datasets/locomo-dev.json',
    run: async (c) =>
      (await import('../../apps/api/bench/quality.ts')).qualityBenchmarks({
        dataset: c.dataset as string,
        quick: c.quick,
      }),
  },
  {
    id: 'quality-scale',
    title:
      'Recall at scale (issue 18): the LoCoMo conversations planted inside a synthetic history of the same agent (100K turns; quick 10K) beside the conversations alone, same run',
    seed: 43,
    // Recall is a count; the latency rows are every question's search on both sides, alternating.
    repetitions: { full: 1, quick: 1 },
    unavailable: (c) =>
      c.dataset ? null : 'no dataset: pass --dataset PATH or put one at ../shared/datasets/locomo-dev.json',
    run: async (c) =>
      (await import('../../apps/api/bench/quality-scale.ts')).qualityScaleBenchmarks({
        dataset: c.dataset as string,
        quick: c.quick,
      }),
  },
  {
    id: 'formation',
    title:
      'Memory formation (LoCoMo-format dataset: observations covered, question recall through memories, summaries, router, writes with extraction on/off)',
    seed: 37,
    // Coverage and recall are counts; the write timings alternate sides inside one run.
    repetitions: { full: 1, quick: 1 },
    unavailable: (c) =>
      c.dataset ? null : 'no dataset: pass --dataset PATH or put one at ../shared/datasets/locomo-dev.json',
    run: async (c) =>
      (await import('../../apps/api/bench/formation.ts')).formationBenchmarks({
        dataset: c.dataset as string,
        quick: c.quick,
        llm: c.llm ?? null,
      }),
  },
  // Peers (other memory servers, same data): the bench/peers package's peerBenchmarks().
  optionalSuite(
    { id: 'peers', title: 'Peers on the same data', seed: 31, repetitions: { full: 1, quick: 1 } },
    packageEntry('bench/peers'),
    'peerBenchmarks',
    (c) => ({ quick: c.quick, dataset: c.dataset }),
  ),
]

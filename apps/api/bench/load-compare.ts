// Writes beside a baseline in one run (issue 18): ENGRAM_LOAD_COMPARE="NAME=VALUE[,NAME=VALUE]"
// starts a second server process on the same database with those settings (the code path of
// before a change, e.g. ENGRAM_DEBOUNCE_GRANULARITY_MS=0 for every turn rewriting its jobs) and
// drives both in turn, sample by sample, so the machine's noise falls on both sides alike.
// ENGRAM_LOAD_COMPARE_TREE=DIR runs the baseline from another checkout of the repository instead
// (a worktree of the commit before a change, installed; same schema), with those settings if any.
// ENGRAM_LOAD_COMPARE_WORKERS=N (default 1: none) adds the open loop against N processes
// (ENGRAM_WORKERS) of each side, also side by side.
import path from 'node:path'
import type { BenchRow } from '../../../packages/core/bench/report.ts'
import { median, percentile } from '../../../packages/core/bench/report.ts'
import { hammer, openLoop, type RunResult, type Server, startServer } from './load-client.ts'

/** The baseline's settings from ENGRAM_LOAD_COMPARE; null when no comparison was asked for. */
export function comparedSettings(
  spec = process.env.ENGRAM_LOAD_COMPARE,
  tree = process.env.ENGRAM_LOAD_COMPARE_TREE,
): Record<string, string> | null {
  if (!spec && !tree) return null
  const settings: Record<string, string> = {}
  for (const pair of spec ? spec.split(',') : []) {
    const [name, value] = pair.split('=')
    if (!name || value === undefined) throw new Error(`ENGRAM_LOAD_COMPARE: "${pair}" is not NAME=VALUE`)
    settings[name.trim()] = value.trim()
  }
  return settings
}

interface Side {
  label: string
  server: Server
  /** The same side's code as N processes (ENGRAM_LOAD_COMPARE_WORKERS), when asked for. */
  cluster: Server | null
  c1: Measured
  c16: Measured
  open: Measured
  openCluster: Measured
  batches: Measured
}

/** A kind of run's samples: results, server CPU per request, appends per group commit (when counted). */
interface Measured {
  runs: RunResult[]
  cpu: number[]
  appendsPerCommit: number[]
  /** Times a group commit found another process holding the write lock, per commit. */
  lockRefusalsPerCommit: number[]
}

/** The group commits' counts a load server reports with its CPU (absent in a tree from before them). */
interface Committed {
  commits: number
  appends: number
  lockRefusals?: number
}

/** Processes of each side's second server (ENGRAM_LOAD_COMPARE_WORKERS); 1: no second server. */
function comparedWorkers(value = process.env.ENGRAM_LOAD_COMPARE_WORKERS): number {
  const workers = Number(value ?? 1)
  if (!Number.isInteger(workers) || workers < 1 || workers > 64)
    throw new Error(`ENGRAM_LOAD_COMPARE_WORKERS: "${value}" is not an integer from 1 to 64`)
  return workers
}

/**
 * addMessage at concurrency 1 (closed loop) and at 2,000/s offered (open loop) on this server and
 * on a baseline server, alternating; rows name the side ("as configured" / "baseline NAME=VALUE").
 */
export async function compareWrites(options: {
  file: string
  server: Server
  settings: Record<string, string>
  key: string
  seconds: number
  samples: number
  addMessage: () => unknown
  /** addMessages of a batch (at concurrency 1), as the suite's batch rows send them. */
  addMessages: () => unknown
}): Promise<BenchRow[]> {
  const { file, server, settings, key, seconds, samples, addMessage, addMessages } = options
  const tree = process.env.ENGRAM_LOAD_COMPARE_TREE
  const named = [
    ...(tree ? [path.basename(tree)] : []),
    ...Object.entries(settings).map(([name, value]) => `${name}=${value}`),
  ].join(' ')
  const baseline = await startServer(
    file,
    1,
    settings,
    tree ? path.join(path.resolve(tree), 'apps/api/bench') : undefined,
  )

  const workers = comparedWorkers()
  const baselineDirectory = tree ? path.join(path.resolve(tree), 'apps/api/bench') : undefined
  const clusters =
    workers > 1
      ? [await startServer(file, workers), await startServer(file, workers, settings, baselineDirectory)]
      : [null, null]
  const rows: BenchRow[] = []
  try {
    const sideOf = (label: string, on: Server, cluster: Server | null): Side => ({
      label,
      server: on,
      cluster,
      c1: { runs: [], cpu: [], appendsPerCommit: [], lockRefusalsPerCommit: [] },
      c16: { runs: [], cpu: [], appendsPerCommit: [], lockRefusalsPerCommit: [] },
      open: { runs: [], cpu: [], appendsPerCommit: [], lockRefusalsPerCommit: [] },
      openCluster: { runs: [], cpu: [], appendsPerCommit: [], lockRefusalsPerCommit: [] },
      batches: { runs: [], cpu: [], appendsPerCommit: [], lockRefusalsPerCommit: [] },
    })
    const sides = [
      sideOf('as configured', server, clusters[0] ?? null),
      sideOf(`baseline ${named}`, baseline, clusters[1] ?? null),
    ]
    // Warm both (JIT, statement caches) before anything counts.
    for (const each of sides) {
      await openLoop(each.server.port, key, 2_000, 1, addMessage, 64)
      if (each.cluster) await openLoop(each.cluster.port, key, 2_000, 1, addMessage, 64)
    }
    const cpuOf = async (side: Side, run: () => Promise<RunResult>, into: Side['c1'], on = side.server) => {
      type Reply = { usage: NodeJS.CpuUsage; committed?: Committed }
      const before = await on.call<Reply>({ cmd: 'cpu' })
      const result = await run()
      const after = await on.call<Reply>({ cmd: 'cpu' })
      const used = after.usage.user - before.usage.user + after.usage.system - before.usage.system
      into.runs.push(result)
      into.cpu.push(used / 1_000 / result.requests)
      const commits = (after.committed?.commits ?? 0) - (before.committed?.commits ?? 0)
      if (commits > 0) {
        into.appendsPerCommit.push(
          ((after.committed?.appends ?? 0) - (before.committed?.appends ?? 0)) / commits,
        )
        const refusals = (after.committed?.lockRefusals ?? 0) - (before.committed?.lockRefusals ?? 0)
        into.lockRefusalsPerCommit.push(refusals / commits)
      }
    }
    for (let i = 0; i < samples; i++) {
      // Alternate which side goes first, so neither always runs right after the other's writes.
      for (const side of i % 2 === 0 ? sides : [...sides].reverse()) {
        await cpuOf(side, () => hammer(side.server.port, key, 1, seconds, addMessage), side.c1)
        await cpuOf(side, () => hammer(side.server.port, key, 16, seconds, addMessage), side.c16)
        await cpuOf(side, () => openLoop(side.server.port, key, 2_000, seconds, addMessage, 64), side.open)
        const cluster = side.cluster
        if (cluster)
          await cpuOf(
            side,
            () => openLoop(cluster.port, key, 2_000, seconds, addMessage, 64),
            side.openCluster,
            cluster,
          )
        await cpuOf(side, () => hammer(side.server.port, key, 1, seconds, addMessages), side.batches)
      }
    }
    for (const side of sides) {
      const row = (name: string, values: number[], unit: string, target?: BenchRow['target']) =>
        rows.push({
          name: `${name}, ${side.label}, same run`,
          value: median(values),
          samples: values,
          unit,
          better: unit === 'req/s' || unit === 'appends' ? 'higher' : 'lower',
          ...(target ? { target } : {}),
        })
      row('addMessage c=1 compared: server CPU per request', side.c1.cpu, 'ms')
      row(
        'addMessage c=1 compared: p50',
        side.c1.runs.map((r) => percentile(r.latencies, 50)),
        'ms',
      )
      const open = 'addMessage at 2,000 req/s offered compared'
      row(
        `${open}: throughput`,
        side.open.runs.map((r) => r.requests / r.seconds),
        'req/s',
      )
      row(
        `${open}: p95`,
        side.open.runs.map((r) => percentile(r.latencies, 95)),
        'ms',
        { op: '<=', value: 10 },
      )
      row(`${open}: server CPU per request`, side.open.cpu, 'ms')
      // Appends per group commit (every process of the server together; none from an older tree).
      const perCommit = (name: string, measured: Measured) => {
        if (measured.appendsPerCommit.length > 0)
          row(`${name}: appends per group commit`, measured.appendsPerCommit, 'appends')
      }
      perCommit(open, side.open)
      perCommit('addMessage c=16 compared', side.c16)
      row('addMessage c=16 compared: server CPU per request', side.c16.cpu, 'ms')
      row(
        'addMessage c=16 compared: throughput',
        side.c16.runs.map((r) => r.requests / r.seconds),
        'req/s',
      )
      if (side.cluster) {
        const name = `addMessage at 2,000 req/s offered compared, ${workers} processes`
        row(
          `${name}: throughput`,
          side.openCluster.runs.map((r) => r.requests / r.seconds),
          'req/s',
        )
        row(
          `${name}: p95`,
          side.openCluster.runs.map((r) => percentile(r.latencies, 95)),
          'ms',
          { op: '<=', value: 10 },
        )
        row(`${name}: server CPU per request (all processes)`, side.openCluster.cpu, 'ms')
        perCommit(name, side.openCluster)
        if (side.openCluster.lockRefusalsPerCommit.length > 0)
          row(
            `${name}: write lock refusals per group commit`,
            side.openCluster.lockRefusalsPerCommit,
            'refusals',
          )
      }
      row('addMessages (a batch) c=1 compared: server CPU per request', side.batches.cpu, 'ms')
    }
  } finally {
    for (const each of [baseline, ...clusters])
      if (each) await each.call({ cmd: 'stop' }).catch(() => each.child.kill())
  }
  return rows
}

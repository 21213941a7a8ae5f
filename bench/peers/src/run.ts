// `pnpm --filter @engram/bench-peers bench:peers -- [--dataset PATH] [--quick] [--only NAME]`
// runs the peers alone; `pnpm bench` runs them as one suite of the harness (bench/harness). The
// dataset comes from --dataset, else ENGRAM_LOCOMO, else the shared development set beside the
// repository (../shared/datasets/locomo-dev.json) when it is there; without one the benchmark
// says so and exits 0, so it works in a fresh clone.
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { writeReport } from '../../../packages/core/bench/report.ts'
import { peerBenchmarks } from './peers.ts'

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..')
const DEFAULT_DATASET = path.resolve(REPO_ROOT, '../shared/datasets/locomo-dev.json')

const option = (name: string) => {
  const index = process.argv.indexOf(name)
  return index >= 0 ? process.argv[index + 1] : undefined
}

function datasetPath(): string | null {
  const given = option('--dataset') ?? process.env.ENGRAM_LOCOMO
  if (given) {
    // pnpm (and turbo) run the script in bench/peers: a relative path is taken from where the
    // command was typed when pnpm says so (INIT_CWD), else from here, else from the repo root.
    const bases = [process.env.INIT_CWD, process.cwd(), REPO_ROOT].filter((b): b is string => Boolean(b))
    const resolved = bases.map((base) => path.resolve(base, given)).find((file) => fs.existsSync(file))
    if (!resolved) {
      console.error(`peers: dataset ${given} not found (looked from ${bases.join(', ')})`)
      process.exit(2)
    }
    return resolved
  }
  return fs.existsSync(DEFAULT_DATASET) ? DEFAULT_DATASET : null
}

const dataset = datasetPath()
const quick = process.argv.includes('--quick')
const only = option('--only')
const rows = await peerBenchmarks({ quick, dataset, ...(only ? { only } : {}) })
if (rows.length > 0) {
  writeReport('peers', `Engram vs mem0, LangGraph, Orama on LoCoMo${quick ? ' (quick subset)' : ''}`, rows, {
    dataset,
    quick,
    ...(only ? { only } : {}),
  })
}

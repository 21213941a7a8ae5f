import path from 'node:path'
import { seededRandom, writeReport } from './report.ts'
import { offlineEmbedderBenchmarks } from './vector-offline.ts'

// The offline embedder's ANN rows alone: `npx tsx bench/vector-offline-run.ts [--quick] [--dataset FILE]`.
const quick = process.argv.includes('--quick')
const at = process.argv.indexOf('--dataset')
const dataset =
  at > 0
    ? (process.argv[at + 1] ?? null)
    : path.resolve(import.meta.dirname, '../../../../shared/datasets/locomo-dev.json')
const rows = await offlineEmbedderBenchmarks({
  quick,
  seed: Math.floor(seededRandom(17)() * 2 ** 32),
  dataset,
})
writeReport('vector-offline', 'ANN on the offline embedder: slot postings and HNSW against exact', rows, {
  quick,
  seed: 17,
})

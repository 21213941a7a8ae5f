import { seededRandom, writeReport } from './report.ts'
import { vectorBenchmarks } from './vector.ts'

// Runs the vector benchmarks alone: `npx tsx bench/vector-run.ts [--quick]`.
const quick = process.argv.includes('--quick')
const rows = await vectorBenchmarks({ quick, random: seededRandom(42) })
writeReport('vector', 'Vector search: exact, int8 and HNSW', rows, { quick, seed: 42 })

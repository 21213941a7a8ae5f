import { seededRandom, writeReport } from './report.ts'
import { vectorScanBenchmarks } from './vector-scan.ts'

// The scan kernel's rows alone (no HNSW builds): `npx tsx bench/vector-scan-run.ts [--quick]`.
const quick = process.argv.includes('--quick')
const rows = vectorScanBenchmarks({ quick, random: seededRandom(18) })
writeReport('vector-scan', 'Vector scans: SIMD kernel and JavaScript', rows, { quick, seed: 18 })

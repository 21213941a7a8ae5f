import os from 'node:os'
import { redundancyBenchmarks } from './redundancy.ts'
import { seededRandom, writeReport } from './report.ts'

// `tsx bench/redundancy-run.ts [--quick]`: the redundancy figures alone, without the whole suite.
const quick = process.argv.includes('--quick')
const rows = await redundancyBenchmarks({ quick, random: seededRandom(5) })
writeReport('redundancy', 'Redundancy detection: exact set-similarity join vs all pairs', rows, {
  quick,
  threshold: 0.9,
  cpus: os.cpus().length,
  // Wall times on a shared machine: the load says how shared it was.
  loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))),
})

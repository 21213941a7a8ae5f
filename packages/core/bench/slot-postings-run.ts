import path from 'node:path'
import { pathToFileURL } from 'node:url'
// The WordNet lexicon is file I/O (the providers package); the server's default embedder uses it.
import { loadWordNetLexicon } from '../../providers/src/wordnet-lexicon.ts'
import { QuantizedVectorIndex, recallAtK, SlotPostingsIndex, seededRandom } from '../src/index.ts'
import type { VectorHit } from '../src/vector/vector.ts'
import { offlineEmbedder, offlineTextCorpus } from './offline-text.ts'
import { type BenchRow, writeReport } from './report.ts'
import { cpuMilliseconds, median, queriesPerSecond, Rates, row } from './vector.ts'

/**
 * Slot postings per query, this build against another in one process:
 * `npx tsx bench/slot-postings-run.ts [--quick] [--before /other/checkout/packages/core/src/index.ts]`.
 *
 * The offline embedder's vectors of the ANN rows (vector-offline.ts: same corpus, same seed),
 * searched for 10 hits (the ANN row) and for 150 and 225 (the vector leg of a hybrid
 * search: limit 25 × MMR's fetch multiplier × 3, with `candidatesPerHit` 4 that is 600-900
 * candidates). Each repetition times the SIMD exact scan, then every index, in turn, so a busy
 * moment of the shared machine slows all alike; speed-ups are medians of per-repetition ratios
 * (CPU time). Recall against the exact scan on 200 queries. `--before` loads SlotPostingsIndex from
 * another checkout (e.g. main's), so before and after run side by side on the same vectors.
 */
interface SearchIndex {
  upsert(id: string, vector: Float32Array): void
  search(query: Float32Array, limit: number): VectorHit[]
  trim?(): void
}

const quick = process.argv.includes('--quick')
const beforeAt = process.argv.indexOf('--before')
const beforeModule = beforeAt > 0 ? process.argv[beforeAt + 1] : undefined
const DIMENSIONS = 384
const size = quick ? 10_000 : 100_000
const dataset = path.resolve(import.meta.dirname, '../../../../shared/datasets/locomo-dev.json')

const random = seededRandom(Math.floor(seededRandom(17)() * 2 ** 32))
const corpus = offlineTextCorpus(random, { locomoFile: dataset })
const embedder = offlineEmbedder(DIMENSIONS, loadWordNetLexicon())
const vectors = Array.from({ length: size }, () => embedder.embedOne(corpus.turn()))
const recallQueries = Array.from({ length: 200 }, () => embedder.embedOne(corpus.query()))
const timedQueries = Array.from({ length: quick ? 300 : 1_000 }, () => embedder.embedOne(corpus.query()))

const exact = new QuantizedVectorIndex()
for (const [i, vector] of vectors.entries()) exact.upsert(String(i), vector)

const indexes: { label: string; index: SearchIndex; build: number }[] = []
const add = (label: string, create: () => SearchIndex) => {
  const start = cpuMilliseconds()
  const index = create()
  for (const [i, vector] of vectors.entries()) index.upsert(String(i), vector)
  index.trim?.()
  indexes.push({ label, index, build: (cpuMilliseconds() - start) / 1_000 })
}
if (beforeModule) {
  const before = (await import(pathToFileURL(path.resolve(beforeModule)).href)) as {
    SlotPostingsIndex: new () => SearchIndex
  }
  add('before (--before build)', () => new before.SlotPostingsIndex())
}
add('after, on the kernel', () => new SlotPostingsIndex())
add('after, kernel off (JavaScript)', () => new SlotPostingsIndex({}, { kernel: 'javascript' }))

const name = `${size / 1_000}k × ${DIMENSIONS} offline embedder`
const rows: BenchRow[] = []
for (const hits of [10, 150, 225]) {
  const truth = recallQueries.map((q) => exact.searchExact(q, hits))
  const exactRates = new Rates()
  const rates = indexes.map(() => new Rates())
  const scanQueries = timedQueries.slice(0, quick ? 50 : 20)
  for (let rep = 0; rep < (quick ? 3 : 5); rep++) {
    exactRates.add(queriesPerSecond(scanQueries, (q) => exact.searchExact(q, hits)))
    for (const [m, { index }] of indexes.entries())
      rates[m]?.add(queriesPerSecond(timedQueries, (q) => index.search(q, hits)))
  }
  rows.push(row(`exact scan (SIMD kernel) ${name}, ${hits} hits`, exactRates, 'queries/s'))
  for (const [m, { label, index, build }] of indexes.entries()) {
    const qps = rates[m] as Rates
    const recall = recallAtK(
      truth,
      recallQueries.map((q) => index.search(q, hits)),
      hits,
    )
    rows.push(row(`slot postings ${label} ${name}, ${hits} hits`, qps, 'queries/s'))
    rows.push({
      ...row(
        `slot postings ${label} ${name}, ${hits} hits: speed-up over the SIMD exact scan`,
        {
          cpu: qps.cpu.map((value, rep) => value / (exactRates.cpu[rep] as number)),
          wall: qps.wall.map((value, rep) => value / (exactRates.wall[rep] as number)),
        },
        'x',
      ),
      ...(hits === 10 && label.includes('kernel')
        ? { target: { op: '>=' as const, value: 50 }, better: 'higher' as const }
        : {}),
    })
    rows.push({
      name: `slot postings ${label} ${name}, ${hits} hits: recall@${hits} vs exact`,
      value: recall,
      unit: 'recall',
      note: `${recallQueries.length} short queries; build ${build.toFixed(2)} s CPU`,
    })
    if (m > 0)
      rows.push({
        name: `slot postings ${label} ${name}, ${hits} hits: speed over ${indexes[0]?.label}`,
        value: median(qps.cpu.map((value, rep) => value / (rates[0]?.cpu[rep] as number))),
        unit: 'x',
        note: 'median of per-repetition ratios, CPU time',
      })
  }
}
writeReport('slot-postings', 'Slot postings per query: kernel, JavaScript and a build before', rows, {
  quick,
  before: beforeModule ?? null,
})

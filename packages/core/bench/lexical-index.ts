import {
  type LexicalDocument,
  LexicalIndex,
  type LexicalTopKQuery,
  planLexicalQuery,
  seededRandom,
} from '../src/index.ts'
import { type BenchRow, percentile } from './report.ts'

/**
 * The in-process lexical index of issue 18 on a Zipfian corpus (100K documents, 10K with
 * --quick): the pruned top-k (block-max MaxScore) against exhaustive scoring of every match (core's
 * bm25Scores over the matching documents, what search did per query before), on the same queries
 * in the same run, alternating per query so a busier moment of the shared machine hits both. Every
 * pruned answer is checked against the exhaustive one (a mismatch is reported, and must be 0).
 *
 * Corpus: 20-token documents (5-60), words drawn from a Zipf(1) vocabulary of 50K words, so a few
 * words are in most documents and most are rare, as in conversation. Queries: 2-4 words from the
 * same law; "raw" keeps every word (the query planner below 20K documents does), "planned" is what
 * planLexicalQuery leaves at this size (common terms dropped unless all are common).
 */
export async function lexicalIndexBenchmarks(options: {
  quick: boolean
  random?: () => number
}): Promise<BenchRow[]> {
  const random = seededRandom(41)
  const documents = options.quick ? 10_000 : 100_000
  const vocabulary = 50_000
  // Zipf(1) by inverse CDF over the harmonic numbers.
  const harmonic = new Float64Array(vocabulary)
  let sum = 0
  for (let i = 0; i < vocabulary; i++) harmonic[i] = sum += 1 / (i + 1)
  const word = () => {
    const target = random() * sum
    let low = 0
    let high = vocabulary - 1
    while (low < high) {
      const middle = (low + high) >>> 1
      if ((harmonic[middle] as number) < target) low = middle + 1
      else high = middle
    }
    return `w${low}`
  }
  const index = new LexicalIndex()
  const started = performance.now()
  for (let id = 1; id <= documents; id++) {
    const length = 5 + Math.floor(random() * random() * 56)
    const document: LexicalDocument = {
      id: String(id),
      sessionId: `s${id % 50}`,
      summary: id % 97 === 0,
      terms: Array.from({ length }, word),
    }
    index.add(document)
  }
  index.trim()
  const buildMs = performance.now() - started
  const queries = Array.from({ length: options.quick ? 150 : 300 }, () =>
    Array.from({ length: 2 + Math.floor(random() * 3) }, word),
  )
  const rows: BenchRow[] = []
  const corpus = index.corpus('messages')
  for (const mode of ['raw', 'planned'] as const) {
    const pruned: number[] = []
    const exhaustive: number[] = []
    let mismatches = 0
    for (const words of queries) {
      const plan = planLexicalQuery(words, (t) => index.documentFrequency(t, 'messages'), corpus.documents)
      const terms = mode === 'raw' || !plan ? words : plan.selective
      const query: LexicalTopKQuery = {
        terms,
        set: 'messages',
        every: mode === 'planned' && plan?.mode === 'all-common',
        sessionId: null,
        limit: 30,
      }
      // Alternating which goes first: neither always meets a warm cache.
      const first = random() < 0.5
      let a: [string, number][] = []
      let b: [string, number][] = []
      for (const which of first ? [0, 1] : [1, 0]) {
        const t0 = performance.now()
        if (which === 0) a = index.topK(query)
        else b = index.exhaustiveTopK(query)
        ;(which === 0 ? pruned : exhaustive).push(performance.now() - t0)
      }
      if (JSON.stringify(a) !== JSON.stringify(b)) mismatches++
    }
    const p50 = (values: number[]) => percentile(values, 50)
    const p95 = (values: number[]) => percentile(values, 95)
    const label = `${documents / 1000}K docs, ${mode} queries, top 30`
    rows.push(
      {
        name: `lexical top-k pruned (block-max MaxScore), ${label}: p95`,
        value: p95(pruned),
        unit: 'ms',
        better: 'lower',
        note: `p50 ${p50(pruned).toFixed(3)} ms; exhaustive p95 ${p95(exhaustive).toFixed(3)} ms, p50 ${p50(exhaustive).toFixed(3)} ms (same queries, alternating)`,
      },
      {
        name: `lexical top-k exhaustive / pruned, ${label}: p95 ratio`,
        value: p95(exhaustive) / p95(pruned),
        unit: '×',
        better: 'higher',
      },
      {
        name: `lexical top-k answers differing from exhaustive, ${label}`,
        value: mismatches,
        unit: 'queries',
        better: 'lower',
        target: { op: '<=', value: 0 },
      },
    )
  }
  rows.push(
    {
      name: `lexical index build, ${documents / 1000}K docs`,
      value: buildMs,
      unit: 'ms',
      better: 'lower',
    },
    {
      name: `lexical index memory per posting, ${documents / 1000}K docs`,
      value: index.bytes() / index.postingsHeld,
      unit: 'B',
      better: 'lower',
      note: `${(index.bytes() / 1e6).toFixed(1)} MB for ${index.postingsHeld} postings (postings, block bounds, per-document arrays, forward lists, vocabulary)`,
    },
  )
  return rows
}

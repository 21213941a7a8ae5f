// Retrieval quality on a LoCoMo-format dataset: `pnpm bench:quality -- --dataset PATH`.
// Ingests every conversation through the public API (one addMessage per turn, with its session's
// real time and the turn id in metadata), asks every question through `search` over MESSAGES and
// reports recall@k per category, next to a plain BM25 baseline computed in the same run.
import fs from 'node:fs'
import path from 'node:path'
import { createHashingEmbedder, queryTerms } from '@engram/core'
import { loadLocomo } from '../../../packages/core/bench/locomo.ts'
import { type BenchRow, writeReport } from '../../../packages/core/bench/report.ts'
import { loadWordNetLexicon, type WordNetPart } from '../src/embedding/wordnet-lexicon.ts'
import { createAgentKey, createTestApp } from '../test/helpers.ts'

const KS = [5, 10, 25] as const
const CATEGORY_NAMES: Record<number, string> = {
  1: 'multi-hop',
  2: 'temporal',
  3: 'open-domain',
  4: 'single-hop',
  5: 'adversarial',
}

function datasetPath(): string {
  const index = process.argv.indexOf('--dataset')
  const given = index >= 0 ? process.argv[index + 1] : undefined
  // pnpm runs the script in apps/api; a relative path means relative to where it was typed.
  const value = given ? path.resolve(process.env.INIT_CWD ?? process.cwd(), given) : undefined
  if (!value || !fs.existsSync(value)) {
    console.error('usage: pnpm bench:quality -- --dataset PATH   (e.g. ../shared/datasets/locomo-dev.json)')
    process.exit(2)
  }
  return value
}

/** The dataset README's baseline: BM25 over `Speaker said, "text"`, lowercase words, no stop words. */
function bm25Baseline(docs: { id: string; text: string }[]) {
  const k1 = 1.2
  const b = 0.75
  const tokenised = docs.map((d) => ({
    id: d.id,
    terms:
      d.text
        .toLowerCase()
        .match(/[\p{L}\p{N}]+/gu)
        ?.filter((w) => queryTerms(w).length) ?? [],
  }))
  const avg = tokenised.reduce((s, d) => s + d.terms.length, 0) / Math.max(1, tokenised.length)
  const df = new Map<string, number>()
  for (const d of tokenised) for (const t of new Set(d.terms)) df.set(t, (df.get(t) ?? 0) + 1)
  const tf = tokenised.map((d) => {
    const counts = new Map<string, number>()
    for (const t of d.terms) counts.set(t, (counts.get(t) ?? 0) + 1)
    return { id: d.id, counts, length: d.terms.length }
  })
  return (query: string, limit: number): string[] => {
    const terms = queryTerms(query)
    const scored = tf.map((d) => {
      let score = 0
      for (const t of terms) {
        const f = d.counts.get(t)
        if (!f) continue
        const n = df.get(t) ?? 0
        const idf = Math.log(1 + (tokenised.length - n + 0.5) / (n + 0.5))
        score += (idf * f * (k1 + 1)) / (f + k1 * (1 - b + (b * d.length) / avg))
      }
      return { id: d.id, score }
    })
    return scored
      .filter((s) => s.score > 0)
      .sort((x, y) => y.score - x.score)
      .slice(0, limit)
      .map((s) => s.id)
  }
}

const recall = (retrieved: string[], evidence: string[], k: number) =>
  evidence.filter((id) => retrieved.slice(0, k).includes(id)).length / evidence.length

export interface QualityOptions {
  /** A LoCoMo-format JSON file. */
  dataset: string
  /** CI smoke: the first conversation only. */
  quick?: boolean
  strategy?: string | null
  weights?: { bm25?: number; vector?: number; context?: number } | null
  mmrLambda?: number | null
  decay?: boolean | null
  /** 'none' turns the WordNet lexicon off; senses, parts and synonymWeight vary it. */
  lexicon?: 'wordnet' | 'none'
  senses?: string
  parts?: WordNetPart[]
  synonymWeight?: number
}

/** Options to compare settings side by side: --strategy LEXICAL|HYBRID, --weights BM25,VECTOR,CONTEXT, --mmr LAMBDA (1 turns MMR off), --decay on|off, --lexicon none, --senses N|all, --synonym-weight W, --parts noun,verb,adj,adv. */
function cliOptions(): QualityOptions {
  const option = (name: string) => {
    const index = process.argv.indexOf(name)
    return index >= 0 ? process.argv[index + 1] : undefined
  }
  const weightsArg = option('--weights')?.split(',').map(Number)
  const mmrArg = option('--mmr')
  const decayArg = option('--decay')
  return {
    dataset: datasetPath(),
    quick: process.argv.includes('--quick'),
    strategy: option('--strategy') ?? null,
    weights: weightsArg ? { bm25: weightsArg[0], vector: weightsArg[1], context: weightsArg[2] } : null,
    mmrLambda: mmrArg == null ? null : Number(mmrArg),
    decay: decayArg == null ? null : decayArg === 'on',
    lexicon: option('--lexicon') === 'none' ? 'none' : 'wordnet',
    senses: option('--senses'),
    parts: option('--parts')?.split(',') as WordNetPart[] | undefined,
    synonymWeight: option('--synonym-weight') ? Number(option('--synonym-weight')) : undefined,
  }
}

/** Recall@k per category through the real API, beside a BM25 baseline computed in the same run. */
export async function qualityBenchmarks(options: QualityOptions): Promise<BenchRow[]> {
  const strategy = options.strategy ?? null
  const weights = options.weights ?? null
  const mmrLambda = options.mmrLambda ?? null
  const decay = options.decay ?? null
  const senses = options.senses
  const synonymWeight = options.synonymWeight
  const lexiconStarted = performance.now()
  const lexicon =
    options.lexicon === 'none'
      ? undefined
      : loadWordNetLexicon({
          ...(senses
            ? { maxSensesPerWord: senses === 'all' ? Number.POSITIVE_INFINITY : Number(senses) }
            : {}),
          ...(options.parts ? { parts: options.parts } : {}),
        })
  lexicon?.groupsOf('car') // the files are read on first use: time that here, not in the first search
  const lexiconLoadMs = performance.now() - lexiconStarted
  const embedder = createHashingEmbedder({
    lexicon,
    ...(synonymWeight ? { synonymWeight } : {}),
  })

  const all = loadLocomo(options.dataset)
  const samples = options.quick ? all.slice(0, 1) : all
  const t = await createTestApp({ embedder })
  type Scores = Record<string, { n: number; product: number[]; baseline: number[] }>
  const scores: Scores = {}
  const add = (bucket: string, product: number[], baseline: number[]) => {
    scores[bucket] ??= { n: 0, product: KS.map(() => 0), baseline: KS.map(() => 0) }
    const s = scores[bucket]
    s.n++
    KS.forEach((_, i) => {
      s.product[i] = (s.product[i] as number) + (product[i] as number)
      s.baseline[i] = (s.baseline[i] as number) + (baseline[i] as number)
    })
  }
  const started = performance.now()
  let turnsIngested = 0
  let questions = 0

  for (const sample of samples) {
    const agentId = sample.id
    const key = await createAgentKey(t, agentId)
    const docs: { id: string; text: string }[] = []
    for (const turn of sample.turns) {
      docs.push({ id: turn.diaId, text: turn.said })
      const result = await t.gql(
        `mutation($input: AddMessageInput!) { addMessage(input: $input) { __typename } }`,
        {
          input: {
            conversationId: agentId,
            role: 'USER',
            content: turn.content,
            timestamp: turn.timestamp.toISOString(),
            metadata: { dia_id: turn.diaId, speaker: turn.speaker },
          },
        },
        key,
      )
      if (result.data?.addMessage?.__typename !== 'Message')
        throw new Error(`ingest failed: ${JSON.stringify(result)}`)
      turnsIngested++
    }
    const baseline = bm25Baseline(docs)
    for (const { question, evidence, category } of sample.questions) {
      const result = await t.gql(
        `query($q: String!, $s: SearchStrategy, $w: SearchWeightsInput, $l: Float, $d: Boolean) { search(input: { query: $q, scopes: [MESSAGES], limit: 25, strategy: $s, weights: $w, mmrLambda: $l, decay: $d }) { ... on SearchResult { hits { message { metadata } } } } }`,
        { q: question, s: strategy, w: weights, l: mmrLambda, d: decay },
        key,
      )
      const retrieved = (result.data.search.hits as { message: { metadata: { dia_id?: string } } }[]).map(
        (h) => String(h.message.metadata.dia_id),
      )
      const base = baseline(question, 25)
      const product = KS.map((k) => recall(retrieved, evidence, k))
      const reference = KS.map((k) => recall(base, evidence, k))
      add(`${category} ${CATEGORY_NAMES[category] ?? ''}`.trim(), product, reference)
      add('overall', product, reference)
      questions++
    }
  }
  await t.close()

  const rows: BenchRow[] = []
  for (const [bucket, s] of Object.entries(scores).sort(([a], [b]) =>
    a === 'overall' ? 1 : b === 'overall' ? -1 : a.localeCompare(b),
  )) {
    KS.forEach((k, i) => {
      const product = ((s.product[i] as number) / s.n) * 100
      const baseline = ((s.baseline[i] as number) / s.n) * 100
      // The overall figures also as rows of their own, so the harness reports the ratio to BM25.
      const baselineName = `${bucket} R@${k}, plain BM25 (same run)`
      rows.push({
        name: `${bucket} R@${k}`,
        value: product,
        unit: '%',
        better: 'higher',
        note: `baseline BM25 ${baseline.toFixed(1)}%, ${product >= baseline ? '+' : ''}${(product - baseline).toFixed(1)} pts, n=${s.n}`,
        ...(bucket === 'overall' ? { baseline: baselineName } : {}),
      })
      if (bucket === 'overall')
        rows.push({ name: baselineName, value: baseline, unit: '%', better: 'higher' })
    })
  }
  rows.push({ name: 'turns ingested through addMessage', value: turnsIngested, unit: 'turns' })
  rows.push({ name: 'questions asked through search', value: questions, unit: 'questions' })
  rows.push({
    name: 'wall time (ingest + questions)',
    value: (performance.now() - started) / 1_000,
    unit: 's',
  })
  if (lexicon) rows.push({ name: `lexicon ${lexicon.id} load`, value: lexiconLoadMs, unit: 'ms' })
  return rows
}

/** The title and context the standalone run writes beside its rows. */
export function qualityTitle(options: QualityOptions): string {
  const ids = loadLocomo(options.dataset).map((conversation) => conversation.id)
  return `Retrieval quality: ${(options.quick ? ids.slice(0, 1) : ids).join(', ')}`
}

// `pnpm bench:quality -- --dataset PATH [options]` (the harness imports the function).
if (import.meta.url === `file://${process.argv[1]}`) {
  const options = cliOptions()
  const rows = await qualityBenchmarks(options)
  writeReport('quality', qualityTitle(options), rows, {
    dataset: options.dataset,
    strategy: options.strategy ?? 'HYBRID (default)',
    weights: options.weights ?? 'default',
  })
}

import {
  analyzeEntries,
  createTokenCounter,
  DEFAULT_OPTIMIZER_PARAMETERS,
  ExactVectorIndex,
  findRedundantEntries,
  heuristicTokenCount,
  type MemoryEntry,
  partitionMessages,
  planContextWindow,
  runOptimizerStep,
} from '../src/index.ts'
import { type BenchOptions, type BenchRow, opsPerSecond, seededRandom, writeReport } from './report.ts'

/**
 * The pure engine's figures: tokenizers, the budget partition, the analyzer and the optimizer
 * step, exact vector search. Quick mode measures each for a tenth of the time (CI smoke); the inputs stay the same.
 */
export async function coreBenchmarks({ quick, random }: BenchOptions): Promise<BenchRow[]> {
  const ms = (full: number) => (quick ? Math.max(50, full / 10) : full)
  const WORDS =
    'the agent opened a page and found the login form then clicked submit while waiting for the network to settle before reading the title of each result carefully'.split(
      ' ',
    )
  const sentence = (n: number) =>
    Array.from({ length: n }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ')
  const prose = Array.from({ length: 400 }, () => `${sentence(18)}.`).join(' ')
  const json = JSON.stringify(
    Array.from({ length: 300 }, (_, i) => ({
      id: i,
      url: `https://example.com/item/${i}`,
      price: Math.round(random() * 10_000) / 100,
      tags: ['a', 'b'],
    })),
  )

  const rows: BenchRow[] = []

  // Tokenizers side by side on the same text: throughput, and the heuristic's error against BPE.
  const o200k = createTokenCounter('o200k_base')
  const cl100k = createTokenCounter('cl100k_base')
  for (const [label, text] of [
    ['prose', prose],
    ['JSON', json],
  ] as const) {
    const truth = o200k.count(text)
    for (const counter of [o200k, cl100k, createTokenCounter('heuristic')]) {
      const perSecond = opsPerSecond(() => counter.count(text), ms(500))
      rows.push({
        name: `${counter.name} on ${label}`,
        value: (perSecond * counter.count(text)) / 1e6,
        unit: 'M tokens/s',
      })
    }
    rows.push({
      name: `ceil(len/4) error vs o200k on ${label}`,
      value: ((heuristicTokenCount(text) - truth) / truth) * 100,
      unit: '%',
      note: `${truth} BPE tokens`,
    })
  }

  // Budget partition over a long conversation.
  const messages = Array.from({ length: 10_000 }, (_, i) => ({
    id: String(i),
    tokenCount: 20 + Math.floor(random() * 400),
  }))
  rows.push({
    name: 'partitionMessages, 10k messages',
    value: opsPerSecond(() => partitionMessages(messages), ms(500)),
    unit: 'partitions/s',
  })
  // The context window as served: every message counted with o200k and older ones compressed for
  // real until the 95% band is full (the partition above only does arithmetic on stored counts).
  const conversation = Array.from({ length: 10_000 }, (_, i) => ({
    id: String(i),
    role: i % 2 ? ('assistant' as const) : ('user' as const),
    content: sentence(10 + Math.floor(random() * 80)),
  }))
  for (const maxContextTokens of [200_000, 9_800]) {
    rows.push({
      name: `planContextWindow, 10k messages, maxContextTokens ${maxContextTokens}`,
      value: opsPerSecond(
        () =>
          planContextWindow(conversation, { maxContextTokens }, { countTokens: (text) => o200k.count(text) }),
        ms(1_000),
      ),
      unit: 'windows/s',
    })
  }

  // Analyzer: the spec's all-pairs redundancy is O(n^2) pairs; prefix filtering skips most of them on
  // real text. Entries draw from a Zipf-like 5,000-word vocabulary (a few words common, most rare),
  // and one in ten repeats an earlier entry with one word changed, so there are real duplicates.
  const now = new Date('2026-01-15T12:00:00.000Z')
  const vocabulary = Array.from({ length: 5_000 }, (_, i) => `w${i.toString(36)}`)
  const zipfWord = () => vocabulary[Math.floor(vocabulary.length ** random()) - 1] as string
  const contents: string[] = []
  for (let i = 0; i < 10_000; i++) {
    if (i > 0 && i % 10 === 0) {
      const words = (contents[Math.floor(random() * i)] as string).split(' ')
      words[Math.floor(random() * words.length)] = zipfWord()
      contents.push(words.join(' '))
    } else contents.push(Array.from({ length: 10 + Math.floor(random() * 30) }, zipfWord).join(' '))
  }
  const allEntries: MemoryEntry[] = contents.map((content, i) => ({
    id: String(i),
    type: 'short_term',
    role: i % 3 === 0 ? 'tool' : 'assistant',
    content,
    tokenCount: 50,
    relevance: 0.5,
    isCompressed: false,
    timestamp: new Date(now.getTime() - Math.floor(random() * 3 * 86_400_000)),
    sessionId: 's',
  }))
  const entries = allEntries.slice(0, 2_000)
  // The same entries over a 30-word vocabulary: every set shares common words, the worst case.
  const narrowEntries = entries.map((e) => ({ ...e, content: sentence(10 + Math.floor(random() * 30)) }))
  rows.push({
    name: 'findRedundantEntries, 2k entries, 5k-word vocabulary',
    value: 1_000 / opsPerSecond(() => findRedundantEntries(entries, 0.9), ms(1_000)),
    unit: 'ms/run',
    note: `${findRedundantEntries(entries, 0.9).length} redundant of 2,000; all pairs would be 1,999,000`,
  })
  rows.push({
    name: 'findRedundantEntries, 10k entries, 5k-word vocabulary',
    value: 1_000 / opsPerSecond(() => findRedundantEntries(allEntries, 0.9), ms(1_000)),
    unit: 'ms/run',
    note: 'all pairs would be 49,995,000',
  })
  rows.push({
    name: 'findRedundantEntries, 2k entries, 30-word vocabulary',
    value: 1_000 / opsPerSecond(() => findRedundantEntries(narrowEntries, 0.9), ms(1_000)),
    unit: 'ms/run',
    note: 'worst case: little for prefix filtering to skip',
  })
  rows.push({
    name: 'analyzeEntries, 2k entries, 5k-word vocabulary',
    value: 1_000 / opsPerSecond(() => analyzeEntries(entries, now), ms(1_000)),
    unit: 'ms/run',
  })
  rows.push({
    name: 'runOptimizerStep, 2k entries',
    value:
      1_000 /
      opsPerSecond(
        () =>
          runOptimizerStep({ entries, parameters: DEFAULT_OPTIMIZER_PARAMETERS, now, tokenCounter: o200k }),
        ms(1_000),
      ),
    unit: 'ms/run',
  })

  // Exact vector search, 384 dimensions.
  for (const size of [1_000, 10_000]) {
    const index = new ExactVectorIndex()
    for (let i = 0; i < size; i++)
      index.upsert(
        String(i),
        Float32Array.from({ length: 384 }, () => random() - 0.5),
      )
    const query = Float32Array.from({ length: 384 }, () => random() - 0.5)
    rows.push({
      name: `ExactVectorIndex top-10, ${size.toLocaleString('en-US')} x 384`,
      value: opsPerSecond(() => index.search(query, 10), ms(1_000)),
      unit: 'queries/s',
    })
  }
  return rows
}

// Run on its own: `tsx packages/core/bench/run.ts [--quick]` (the harness imports the function).
if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await coreBenchmarks({ quick: process.argv.includes('--quick'), random: seededRandom(7) })
  writeReport('core', 'Core engine (packages/core)', rows)
}

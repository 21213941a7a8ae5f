// What the quality suite reports: rows for the report writer (stable names, one figure each) and a
// markdown summary for people (recall per conversation, the cross-validation, the latency budget)
// that a reviewer can paste into a closing note.
import type { BenchRow } from '../../../packages/core/bench/report.ts'
import { type Configuration, formatKnobValue, type Ingest, type RetrievalChange } from './quality-changes.ts'
import {
  BUCKETS,
  type HeldOutResult,
  inBucket,
  KS,
  type LatencySummary,
  meanRecall,
  P95_BUDGET,
  type QuestionOutcome,
  type Verdict,
} from './quality-crossval.ts'

export interface ChangeResult {
  change: RetrievalChange
  /** Why this build cannot run the change (the schema lacks its knob), or null. */
  unavailable: string | null
  results: HeldOutResult[]
  verdict: Verdict | null
}

type Outcomes = Map<string, QuestionOutcome[]>

export interface QualityRun {
  quick: boolean
  conversations: { id: string; turns: number; questions: number }[]
  /** Per conversation id, one outcome per question. */
  ranking: { bm25: Outcomes; before: Outcomes; defaults: Outcomes }
  configurations: { before: Configuration; defaults: Configuration }
  changes: ChangeResult[]
  latency: LatencySummary
  speakerAsField: boolean
  ingestSeconds: Partial<Record<Ingest, number>>
  configurationsAsked: number
  searches: number
  notes: string[]
  lexicon: { id: string; loadMs: number } | null
  seconds: number
}

/** Every conversation's id, then `all` (the questions of every conversation together). */
function scopes(run: QualityRun): { name: string; outcomes: (side: Outcomes) => QuestionOutcome[] }[] {
  const one = run.conversations.map((c) => ({
    name: c.id,
    outcomes: (side: Outcomes) => side.get(c.id) ?? [],
  }))
  if (run.conversations.length < 2) return one
  return [...one, { name: 'all', outcomes: (side: Outcomes) => [...side.values()].flat() }]
}

const points = (n: number) => `${n > 0 ? '+' : n < 0 ? '−' : '±'}${Math.abs(n).toFixed(1)}`
const percent = (n: number) => (Number.isNaN(n) ? '–' : n.toFixed(1))

export function qualityRows(run: QualityRun): BenchRow[] {
  const rows: BenchRow[] = []
  const all = scopes(run)
  for (const scope of all) {
    for (const bucket of BUCKETS) {
      const bm25 = inBucket(scope.outcomes(run.ranking.bm25), bucket)
      if (bm25.length === 0) continue
      const before = inBucket(scope.outcomes(run.ranking.before), bucket)
      const defaults = inBucket(scope.outcomes(run.ranking.defaults), bucket)
      for (const k of KS) {
        const name = `${scope.name} ${bucket} R@${k}`
        const reference = meanRecall(bm25, k)
        const was = meanRecall(before, k)
        const now = meanRecall(defaults, k)
        // The overall figures get a BM25 row of their own; the defaults over every conversation are
        // compared to it, so the harness's summary (every row with a ratio) carries one line per k.
        const compared = bucket === 'overall' && scope === all.at(-1)
        rows.push({
          name: `${name} before`,
          value: was,
          unit: '%',
          better: 'higher',
          note: `BM25 ${percent(reference)}%, ${points(was - reference)} pts, n=${bm25.length}`,
        })
        rows.push({
          name: `${name} defaults`,
          value: now,
          unit: '%',
          better: 'higher',
          note: `before ${percent(was)}%, ${points(now - was)} pts; BM25 ${percent(reference)}%; n=${bm25.length}`,
          ...(compared ? { baseline: `${name} BM25` } : {}),
        })
        if (bucket === 'overall')
          rows.push({ name: `${name} BM25`, value: reference, unit: '%', better: 'higher' })
      }
    }
  }

  for (const { change, unavailable, results, verdict } of run.changes) {
    if (unavailable) {
      rows.push({
        name: `verdict ${change.name}`,
        value: 0,
        unit: 'pts',
        note: `not available in this build (${unavailable})`,
      })
      continue
    }
    for (const r of results) {
      const tuned = `(tuned on ${r.tunedOn} at ${formatKnobValue(r.value)})`
      rows.push({
        name: `change ${change.name}: in-sample ${r.tunedOn} ${tuned}`,
        value: r.inSample,
        unit: 'pts',
        better: 'higher',
        note: `R@10 gain over ${change.knob}=${formatKnobValue(change.off)} where it was tuned`,
      })
      rows.push({
        name: `change ${change.name}: held-out ${r.heldOut} ${tuned}`,
        value: r.heldOutDelta,
        unit: 'pts',
        better: 'higher',
        note: `R@10 gain over ${change.knob}=${formatKnobValue(change.off)} on the conversation it was not tuned on`,
      })
    }
    const mean = results.reduce((s, r) => s + r.heldOutDelta, 0) / Math.max(1, results.length)
    const offEverywhere = results.every((r) => r.value === change.off)
      ? ', off was best wherever it was tuned'
      : ''

    rows.push({
      name: `verdict ${change.name}`,
      value: mean,
      unit: 'pts',
      better: 'higher',
      note: `${verdict}${verdict === 'helps on both held-out' ? ': may land as a default' : `: does not land as a default${offEverywhere}`} (value: mean held-out R@10 gain)`,
    })
  }

  const { latency } = run
  for (const side of ['before', 'defaults'] as const) {
    rows.push({ name: `search p50 ${side}`, value: latency[side].p50, unit: 'ms', better: 'lower' })
    rows.push({
      name: `search p95 ${side}`,
      value: latency[side].p95,
      unit: 'ms',
      better: 'lower',
      note: `${latency[side].calls} calls, interleaved with the other side`,
      ...(side === 'defaults' ? { baseline: 'search p95 before' } : {}),
    })
  }
  rows.push({
    name: 'search p95 defaults / before',
    value: latency.p95Ratio,
    unit: '×',
    better: 'lower',
    note: `p95 budget +${Math.round((P95_BUDGET - 1) * 100)}%: ${latency.withinBudget ? 'within' : 'over'}`,
    target: { op: '<=', value: P95_BUDGET },
  })

  for (const [ingest, seconds] of Object.entries(run.ingestSeconds))
    rows.push({
      name: `ingest ${ingest} (${run.conversations.reduce((s, c) => s + c.turns, 0)} turns through addMessage)`,
      value: seconds,
      unit: 's',
    })
  rows.push({ name: 'configurations asked', value: run.configurationsAsked, unit: 'configurations' })
  rows.push({ name: 'searches', value: run.searches, unit: 'calls' })
  rows.push({ name: 'wall time', value: run.seconds, unit: 's' })
  if (run.lexicon)
    rows.push({ name: `lexicon ${run.lexicon.id} load`, value: run.lexicon.loadMs, unit: 'ms' })
  return rows
}

function describe(configuration: Configuration): string {
  const input = JSON.stringify(configuration.input)
  return `ingest \`${configuration.ingest}\`, search input ${input === '{}' ? 'without overrides' : `\`${input}\``}`
}

/** The readable summary printed to stdout. */
export function qualityTable(run: QualityRun): string {
  const lines: string[] = []
  const row = (cells: (string | number)[]) => lines.push(`| ${cells.join(' | ')} |`)
  const recalls = (outcomes: QuestionOutcome[]) => KS.map((k) => percent(meanRecall(outcomes, k))).join(' / ')

  lines.push(`## Retrieval quality${run.quick ? ' (quick: one conversation, no cross-validation)' : ''}`, '')
  lines.push(`- before issue 11: ${describe(run.configurations.before)}`)
  lines.push(`- defaults: ${describe(run.configurations.defaults)}`, '')
  for (const scope of scopes(run)) {
    const info = run.conversations.find((c) => c.id === scope.name)
    const bm25All = scope.outcomes(run.ranking.bm25)
    lines.push(
      `### ${scope.name === 'all' ? 'All conversations' : scope.name} (${info ? `${info.turns} turns, ` : ''}${bm25All.length} questions): R@5 / R@10 / R@25 %`,
      '',
    )
    row(['category', 'n', 'plain BM25', 'before issue 11', 'defaults', 'Δ R@10 (pts)'])
    row(['---', '---:', '---:', '---:', '---:', '---:'])
    for (const bucket of BUCKETS) {
      const bm25 = inBucket(bm25All, bucket)
      if (bm25.length === 0) continue
      const before = inBucket(scope.outcomes(run.ranking.before), bucket)
      const defaults = inBucket(scope.outcomes(run.ranking.defaults), bucket)
      const name = bucket === 'overall' ? '**overall**' : bucket
      const delta = meanRecall(defaults, 10) - meanRecall(before, 10)
      row([name, bm25.length, recalls(bm25), recalls(before), recalls(defaults), points(delta)])
    }
    lines.push('')
  }

  if (run.changes.length > 0) {
    lines.push(
      '### Cross-validation (R@10 gain in points over the off value, all other knobs at defaults)',
      '',
    )
    row(['change', 'knob: off → tried', 'tuned on', 'value', 'in-sample', 'held out', 'held-out', 'verdict'])
    row(['---', '---', '---', '---:', '---:', '---', '---:', '---'])
    for (const { change, unavailable, results, verdict } of run.changes) {
      const knob = `${change.knob}: ${formatKnobValue(change.off)} → ${change.values.map(formatKnobValue).join(', ')}`
      const title = `${change.title} (\`${change.name}\`)`
      if (unavailable) {
        row([title, knob, '', '', '', '', '', `not available in this build (${unavailable})`])
        continue
      }
      for (const [index, r] of results.entries())
        row([
          index === 0 ? title : '',
          index === 0 ? knob : '',
          r.tunedOn,
          formatKnobValue(r.value),
          points(r.inSample),
          r.heldOut,
          points(r.heldOutDelta),
          index === 0
            ? `**${verdict}**${results.every((x) => x.value === change.off) ? ' (off best everywhere)' : ''}`
            : '',
        ])
    }
    const landing = run.changes
      .filter((c) => c.verdict === 'helps on both held-out')
      .map((c) => c.change.name)
    lines.push(
      '',
      `A change lands as a default only if it helps on the conversation it was not tuned on: ${landing.length > 0 ? landing.join(', ') : 'none of these'}.`,
      '',
    )
  }

  const { latency } = run
  lines.push('### Search latency (in-process GraphQL, both sides interleaved in this run)', '')
  row(['configuration', 'p50 ms', 'p95 ms', 'calls'])
  row(['---', '---:', '---:', '---:'])
  row(['before issue 11', latency.before.p50.toFixed(1), latency.before.p95.toFixed(1), latency.before.calls])
  row(['defaults', latency.defaults.p50.toFixed(1), latency.defaults.p95.toFixed(1), latency.defaults.calls])
  lines.push(
    '',
    `p95 defaults / before: ${latency.p95Ratio.toFixed(2)}× (p95 budget +${Math.round((P95_BUDGET - 1) * 100)}%: ${latency.withinBudget ? 'within' : 'over'})`,
    '',
  )
  const ingest = Object.entries(run.ingestSeconds)
    .map(([mode, s]) => `${mode} ${s.toFixed(0)} s`)
    .join(', ')
  lines.push(
    `${run.configurationsAsked} configurations, ${run.searches} searches; ingest ${ingest}; wall time ${run.seconds.toFixed(0)} s.` +
      (run.ingestSeconds.structured === undefined
        ? ''
        : ` Structured ingest sends the speaker ${run.speakerAsField ? 'as AddMessageInput.speaker' : 'as metadata.speaker only'}.`),
  )
  for (const note of run.notes) lines.push('', `Note: ${note}`)
  return lines.join('\n')
}

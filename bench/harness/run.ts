// `pnpm bench` (full sizes) or `pnpm bench -- --quick` (CI smoke): every suite in bench/harness/suites.ts,
// one after another, each repeated with the same seed, folded into bench/results/latest.{json,md}
// (latest-quick.* in quick mode, so a smoke run never replaces the full figures).
// Options: --only core,load  --reps N  --dataset PATH  --readme (copy the summary into docs/performance.md)
//   --llm-url URL --llm-model M (an OpenAI-compatible model the formation suite measures too; the
//   key, if any, from ENGRAM_LLM_API_KEY).
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { type BenchRow, seededRandom } from '../../packages/core/bench/report.ts'
import { aggregateRepetitions, formatNumber, formatSpread, formatTarget } from './aggregate.ts'
import { describeMachine, type Machine } from './machine.ts'
import { REPO_ROOT, SUITES, type SuiteContext } from './suites.ts'

const RESULTS_DIR = path.join(REPO_ROOT, 'bench/results')
const DEFAULT_DATASET = path.resolve(REPO_ROOT, '../shared/datasets/locomo-dev.json')
const README_START = '<!-- bench:summary:start -->'
const README_END = '<!-- bench:summary:end -->'

interface SuiteResult {
  id: string
  title: string
  repetitions: number
  seconds: number
  rows: BenchRow[]
  /** Set on a suite kept from an earlier run by an `--only` run: when and at which commit it ran. */
  from?: { startedAt: string; commit: string | null }
}

interface Report {
  mode: 'full' | 'quick'
  startedAt: string
  seconds: number
  machine: Machine
  suites: SuiteResult[]
  skipped: { id: string; reason: string }[]
}

const args = process.argv.slice(2)
const option = (name: string) => {
  const index = args.indexOf(name)
  return index >= 0 ? args[index + 1] : undefined
}
const quick = args.includes('--quick')
const only = option('--only')?.split(',')
const repsOverride = option('--reps') ? Number(option('--reps')) : undefined
if (
  repsOverride !== undefined &&
  !(Number.isInteger(repsOverride) && repsOverride >= 1 && repsOverride <= 100)
) {
  console.error(`--reps must be a whole number from 1 to 100 (got ${option('--reps')})`)
  process.exit(2)
}
// pnpm runs this in bench/harness: a relative path means relative to where it was typed.
const datasetArg = option('--dataset')
const dataset = datasetArg
  ? path.resolve(process.env.INIT_CWD ?? process.cwd(), datasetArg)
  : fs.existsSync(DEFAULT_DATASET)
    ? DEFAULT_DATASET
    : null
if (dataset && !fs.existsSync(dataset)) {
  console.error(`--dataset ${dataset}: no such file`)
  process.exit(2)
}
const llmUrl = option('--llm-url')
const llmModel = option('--llm-model')
if (Boolean(llmUrl) !== Boolean(llmModel)) {
  console.error('--llm-url and --llm-model go together')
  process.exit(2)
}
const llmApiKey = process.env.ENGRAM_LLM_API_KEY
const llm =
  llmUrl && llmModel ? { url: llmUrl, model: llmModel, ...(llmApiKey ? { apiKey: llmApiKey } : {}) } : null
const unknown = only?.filter((id) => !SUITES.some((s) => s.id === id)) ?? []
if (unknown.length > 0) {
  console.error(`unknown suite(s) ${unknown.join(', ')}; known: ${SUITES.map((s) => s.id).join(', ')}`)
  process.exit(2)
}

const machine = describeMachine()
const started = performance.now()
const report: Report = {
  mode: quick ? 'quick' : 'full',
  startedAt: new Date().toISOString(),
  seconds: 0,
  machine,
  suites: [],
  skipped: [],
}
console.info(
  `[bench] ${report.mode} run on ${machine.cores} cores (${machine.cpu}), Node ${machine.node}, commit ${machine.commit ?? '?'}${machine.dirty ? ' (dirty)' : ''}`,
)

for (const suite of SUITES) {
  if (only && !only.includes(suite.id)) continue
  const context = (repetition: number): SuiteContext => ({
    quick,
    random: seededRandom(suite.seed),
    dataset,
    repetition,
    llm,
  })
  const reason = suite.unavailable?.(context(0)) ?? null
  if (reason) {
    console.info(`[bench] ${suite.id}: skipped (${reason})`)
    report.skipped.push({ id: suite.id, reason })
    continue
  }
  const repetitions = repsOverride ?? (quick ? suite.repetitions.quick : suite.repetitions.full)
  const suiteStarted = performance.now()
  if (suite.warmup && !quick) {
    console.info(`[bench] ${suite.id}: warm-up run`)
    await suite.run(context(-1))
  }
  const runs: BenchRow[][] = []
  for (let i = 0; i < repetitions; i++) {
    console.info(`[bench] ${suite.id}: repetition ${i + 1} of ${repetitions}`)
    runs.push(await suite.run(context(i)))
    // Leftovers of one repetition must not be collected during the next one's timings.
    globalThis.gc?.()
  }
  const result: SuiteResult = {
    id: suite.id,
    title: suite.title,
    repetitions,
    seconds: (performance.now() - suiteStarted) / 1_000,
    rows: aggregateRepetitions(runs),
  }
  report.suites.push(result)
  console.info(suiteMarkdown(result).join('\n'))
}
report.seconds = (performance.now() - started) / 1_000

// --only reruns some suites: the others keep their figures from the last run of the same mode,
// marked with when and where they ran, so one slow suite can be redone without the rest.
const base = path.join(RESULTS_DIR, quick ? 'latest-quick' : 'latest')
if (only && fs.existsSync(`${base}.json`)) {
  const previous = JSON.parse(fs.readFileSync(`${base}.json`, 'utf8')) as Report
  const rerun = new Set(report.suites.map((s) => s.id))
  const kept = previous.suites
    .filter((s) => !rerun.has(s.id))
    .map((s) => ({
      ...s,
      from: s.from ?? { startedAt: previous.startedAt, commit: previous.machine.commit },
    }))
  const order = (id: string) => SUITES.findIndex((s) => s.id === id)
  report.suites = [...kept, ...report.suites].sort((a, b) => order(a.id) - order(b.id))
  report.skipped = [
    ...previous.skipped.filter((s) => !rerun.has(s.id) && !only.includes(s.id)),
    ...report.skipped,
  ]
}

function suiteMarkdown(suite: SuiteResult): string[] {
  const hasRatio = suite.rows.some((r) => r.ratio !== undefined)
  const hasTarget = suite.rows.some((r) => r.target)
  const head = [
    'measure',
    'median',
    'spread',
    'unit',
    ...(hasRatio ? ['ratio'] : []),
    ...(hasTarget ? ['target'] : []),
    'note',
  ]
  const align = [
    '---',
    '---:',
    '---:',
    '---',
    ...(hasRatio ? ['---:'] : []),
    ...(hasTarget ? ['---'] : []),
    '---',
  ]
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`
  return [
    `### ${suite.title}`,
    '',
    `${suite.repetitions} repetition${suite.repetitions === 1 ? '' : 's'}, ${Math.round(suite.seconds)} s${suite.from ? ` (from the run of ${suite.from.startedAt}, commit ${suite.from.commit ?? '?'})` : ''}`,
    '',
    line(head),
    line(align),
    ...suite.rows.map((r) =>
      line([
        r.name,
        formatNumber(r.value),
        formatSpread(r),
        r.unit,
        ...(hasRatio
          ? [r.ratio === undefined ? '' : `${formatNumber(r.ratio)}× ${r.baseline ?? ''}`.trim()]
          : []),
        ...(hasTarget ? [formatTarget(r)] : []),
        (r.note ?? '').replaceAll('|', '\\|'),
      ]),
    ),
    '',
  ]
}

/** Which suites an `--only` run kept from an earlier one, for the headers. */
function keptNote(r: Report): string {
  const kept = r.suites.filter((s) => s.from)
  if (kept.length === 0) return ''
  const runs = [
    ...new Set(kept.map((s) => `${s.from?.startedAt.slice(0, 16)}Z, commit ${s.from?.commit ?? '?'}`)),
  ]
  return ` Suites ${kept.map((s) => s.id).join(', ')} are from the earlier run of ${runs.join('; ')}; the rest ran on ${r.startedAt.slice(0, 16)}Z at the commit above.`
}

function reportMarkdown(r: Report): string {
  const m = r.machine
  const targets = r.suites.flatMap((s) => s.rows.filter((row) => row.target))
  const met = targets.filter((row) => row.target?.met).length
  return [
    `Measured ${r.startedAt.slice(0, 10)} (${r.mode} run, ${Math.round(r.seconds)} s) on ${m.cores} cores, ${m.cpu}, ${m.memoryGiB} GiB, Node ${m.node}, ${m.platform}, commit ${m.commit ?? '?'}${m.dirty ? ' with uncommitted changes' : ''}. Median of the repetitions; spread is half their range.${targets.length ? ` Targets met: ${met} of ${targets.length}.` : ''}${keptNote(r)}`,
    '',
    ...r.suites.flatMap(suiteMarkdown),
    ...(r.skipped.length ? ['Skipped:', '', ...r.skipped.map((s) => `- ${s.id}: ${s.reason}`), ''] : []),
  ].join('\n')
}

/**
 * The README's part: the machine, every figure that has a target or a ratio to a peer or baseline,
 * and the load test's table (the server's own figures). Everything else is in latest.md.
 */
function readmeMarkdown(r: Report): string {
  const m = r.machine
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`
  const withTargets = r.suites.flatMap((s) => s.rows.filter((row) => row.target).map((row) => ({ s, row })))
  const withRatios = r.suites.flatMap((s) =>
    s.rows.filter((row) => row.ratio !== undefined).map((row) => ({ s, row })),
  )
  const load = r.suites.find((s) => s.id === 'load')
  return [
    `Measured ${r.startedAt.slice(0, 10)} by \`pnpm bench\` (${r.mode} run) on ${m.cores} cores (${m.cpu}), ${m.memoryGiB} GiB, Node ${m.node}, commit ${m.commit ?? '?'}${m.dirty ? ' with uncommitted changes' : ''}. Median of the repetitions, ± half their range.${keptNote(r)}`,
    '',
    ...(withTargets.length
      ? [
          line(['target', 'median', 'spread', 'unit', 'target', 'suite']),
          line(['---', '---:', '---:', '---', '---', '---']),
          ...withTargets.map(({ s, row }) =>
            line([row.name, formatNumber(row.value), formatSpread(row), row.unit, formatTarget(row), s.id]),
          ),
          '',
        ]
      : []),
    ...(withRatios.length
      ? [
          line(['compared', 'median', 'unit', 'ratio', 'to', 'suite']),
          line(['---', '---:', '---', '---:', '---', '---']),
          ...withRatios.map(({ s, row }) =>
            line([
              row.name,
              formatNumber(row.value),
              row.unit,
              `${formatNumber(row.ratio as number)}×`,
              row.baseline ?? '',
              s.id,
            ]),
          ),
          '',
        ]
      : []),
    ...(load ? suiteMarkdown(load) : []),
    `Every other figure (core engine, API in-process, retrieval quality${r.skipped.length ? `; skipped here: ${r.skipped.map((x) => x.id).join(', ')}` : ''}) is in \`bench/results/latest.md\`.`,
  ].join('\n')
}

fs.mkdirSync(RESULTS_DIR, { recursive: true })
const markdown = reportMarkdown(report)
fs.writeFileSync(`${base}.json`, `${JSON.stringify(report, null, 2)}\n`)
fs.writeFileSync(`${base}.md`, `${markdown}\n`)
console.info(
  `[bench] wrote ${path.relative(REPO_ROOT, base)}.json and .md in ${Math.round(report.seconds)} s`,
)

if (args.includes('--readme')) {
  // The full figures live in docs/performance.md; README.md keeps only the headline ones.
  const readme = path.join(REPO_ROOT, 'docs', 'performance.md')
  const text = fs.readFileSync(readme, 'utf8')
  const from = text.indexOf(README_START)
  const to = text.indexOf(README_END)
  if (from < 0 || to < from) {
    console.error(`docs/performance.md has no ${README_START} ... ${README_END} block`)
    process.exit(1)
  }
  fs.writeFileSync(
    readme,
    `${text.slice(0, from + README_START.length)}\n${readmeMarkdown(report)}\n${text.slice(to)}`,
  )
  // The repository's formatter aligns markdown tables: leave the file as `pnpm lint` wants it.
  try {
    execFileSync(
      path.join(REPO_ROOT, 'node_modules/.bin/biome'),
      ['format', '--write', 'docs/performance.md'],
      {
        cwd: REPO_ROOT,
        stdio: 'ignore',
      },
    )
  } catch {
    console.warn('[bench] could not format docs/performance.md: run `pnpm format`')
  }
  console.info('[bench] README.md Performance section updated')
}

import { extractiveSummary, type SummaryStrategy, type SummaryTurn } from './summary.ts'

/** Spec 002's hierarchical chunk: ten turns (or summaries) per first-level summary. */
export const HIERARCHY_CHUNK = 10

/** Map-reduce's chunk: larger than the hierarchy's, so a long history takes few parallel calls. */
export const MAP_REDUCE_CHUNK = 40

/** Calls one summary makes at most: a runaway history costs a bounded number of steps. */
export const MAX_SUMMARY_STEPS = 64

/** One summarising step: some turns (or summaries) in, a summary of at most `maxTokens` out. */
export type SummaryStep = (turns: readonly SummaryTurn[], maxTokens: number) => Promise<string>

export interface SummaryShapeOptions {
  strategy: SummaryStrategy
  maxTokens: number
  countTokens: (text: string) => number
}

/**
 * Spec 002's strategies as shapes around a step (a model's call or the extractive summary):
 * `simple` and `extractive` are one step; `hierarchical` summarises chunks of ten and then the
 * summaries until they fit; `map-reduce` summarises larger chunks side by side and combines them.
 */
export async function shapeSummary(
  turns: readonly SummaryTurn[],
  options: SummaryShapeOptions,
  step: SummaryStep,
): Promise<string> {
  switch (options.strategy) {
    case 'simple':
    case 'extractive':
      return step(turns, options.maxTokens)
    case 'hierarchical':
      return hierarchical(turns, options, step, 0)
    case 'map-reduce': {
      const chunks = chunk(turns, MAP_REDUCE_CHUNK).slice(0, MAX_SUMMARY_STEPS - 1)
      if (chunks.length <= 1) return step(turns, options.maxTokens)
      const mapped = await Promise.all(chunks.map((part) => step(part, options.maxTokens)))
      return step(
        mapped.map((content, i) => ({ speaker: `part ${i + 1}`, content })),
        options.maxTokens,
      )
    }
  }
}

/** Spec 002: summarise chunks of ten; while the summaries together pass the budget, summarise them again. */
async function hierarchical(
  turns: readonly SummaryTurn[],
  options: SummaryShapeOptions,
  step: SummaryStep,
  level: number,
): Promise<string> {
  const chunks = chunk(turns, HIERARCHY_CHUNK)
  if (chunks.length <= 1) return step(turns, options.maxTokens)
  // Each chunk's summary gets its share of the budget, at least a sentence's worth.
  const share = Math.max(40, Math.floor(options.maxTokens / Math.min(chunks.length, HIERARCHY_CHUNK)))
  const summaries = await Promise.all(chunks.map((part) => step(part, share)))
  const joined = summaries.join('\n\n')
  // Past a few levels the budget is what it is: the last level is cut to fit by one more step.
  if (options.countTokens(joined) <= options.maxTokens) return joined
  const next = summaries.map((content, i) => ({ speaker: `summary ${level + 1}.${i + 1}`, content }))
  if (level >= 4) return step(next, options.maxTokens)
  return hierarchical(next, options, step, level + 1)
}

/**
 * The step without a model: core's extractive summary, or, when nothing is informative enough to
 * rank (a few short turns), the turns themselves within the budget.
 */
export function extractiveSummaryStep(countTokens: (text: string) => number): SummaryStep {
  return async (turns, maxTokens) =>
    extractiveSummary(turns, { maxTokens, countTokens }) ||
    fitLines(
      turns.map((turn) => `${turn.speaker}: ${turn.content}`),
      maxTokens,
      countTokens,
    )
}

/**
 * A summary written without a model in the strategy's shape (a hierarchical summary of a long
 * history is still a summary of summaries). `between` runs before every step but the first: the
 * engine yields to waiting requests there, so steps run one at a time with the loop turning
 * between them (a server runs this on a worker thread instead).
 */
export function writeOfflineSummary(
  turns: readonly SummaryTurn[],
  options: SummaryShapeOptions & { between?: () => Promise<void> },
): Promise<string> {
  const extractive = extractiveSummaryStep(options.countTokens)
  const { between } = options
  if (!between) return shapeSummary(turns, options, extractive)
  // Chained, so parallel steps of a shape (map-reduce's chunks) still run one after another.
  let previous: Promise<unknown> | null = null
  const step: SummaryStep = (part, maxTokens) => {
    const run: Promise<string> = (previous ? previous.then(between, between) : Promise.resolve()).then(() =>
      extractive(part, maxTokens),
    )
    previous = run
    return run
  }
  return shapeSummary(turns, options, step)
}

/** Lines in order while they fit the budget. */
export function fitLines(
  lines: readonly string[],
  maxTokens: number,
  countTokens: (text: string) => number,
  separator = '\n',
): string {
  const kept: string[] = []
  let used = 0
  for (const line of lines) {
    const text = line.trim()
    if (!text) continue
    const cost = countTokens(text)
    if (used + cost > maxTokens) break
    kept.push(text)
    used += cost
  }
  return kept.join(separator)
}

function chunk<T>(items: readonly T[], size: number): T[][] {
  const chunks: T[][] = []
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size))
  return chunks
}

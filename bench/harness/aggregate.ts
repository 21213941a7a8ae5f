import { type BenchRow, median } from '../../packages/core/bench/report.ts'

/**
 * Folds the rows of several repetitions of one suite into one row per name: every sample kept,
 * the median as the value, half the range as the spread, the ratio to a baseline row taken
 * repetition by repetition (so both sides of it come from the same run), and targets checked
 * against the median.
 */
export function aggregateRepetitions(repetitions: readonly BenchRow[][]): BenchRow[] {
  const byName = new Map<string, BenchRow[]>()
  for (const rows of repetitions) {
    for (const row of rows) {
      const seen = byName.get(row.name)
      if (seen) seen.push(row)
      else byName.set(row.name, [row])
    }
  }
  const valueIn = (rows: readonly BenchRow[], name: string) => rows.find((r) => r.name === name)?.value
  return [...byName].map(([name, rows]) => {
    const first = rows[0] as BenchRow
    const samples = rows.flatMap((r) => r.samples ?? [r.value])
    const finite = samples.filter(Number.isFinite)
    const value = median(finite)
    const spread = finite.length > 1 ? (Math.max(...finite) - Math.min(...finite)) / 2 : 0
    const out: BenchRow = { ...first, name, value, samples, spread }
    const last = rows.at(-1) as BenchRow
    if (last.note !== undefined) out.note = last.note
    if (first.baseline) {
      const ratios = repetitions.flatMap((repetition) => {
        const mine = valueIn(repetition, name)
        const theirs = valueIn(repetition, first.baseline as string)
        return mine !== undefined && theirs ? [mine / theirs] : []
      })
      if (ratios.length > 0) out.ratio = median(ratios)
    } else {
      const given = rows.flatMap((r) => (r.ratio === undefined ? [] : [r.ratio]))
      if (given.length > 0) out.ratio = median(given)
    }
    if (first.target) {
      const { op, value: goal } = first.target
      out.target = { op, value: goal, met: op === '<=' ? value <= goal : value >= goal }
    }
    return out
  })
}

/** A figure for a table: whole numbers past 100, three significant digits below. */
export function formatNumber(n: number): string {
  if (!Number.isFinite(n)) return String(n)
  return Math.abs(n) >= 100 ? Math.round(n).toLocaleString('en-US') : n.toPrecision(3)
}

/** The spread as ± a share of the median ("±3%"), or in the unit when the median is 0. */
export function formatSpread(row: BenchRow): string {
  if (!row.spread || !row.samples || row.samples.length < 2) return ''
  if (row.value === 0) return `±${formatNumber(row.spread)}`
  const share = (row.spread / Math.abs(row.value)) * 100
  return `±${share < 10 ? share.toFixed(1) : Math.round(share)}%`
}

/**
 * How far a missed target is from the median, in the words of the issue's table: "5.8× over" a
 * ceiling, "2.2× under" a floor, a percentage of the goal below 50% (a 13% gap reads better than "1.1×"), and
 * the difference itself when the goal is 0 (no ratio to it).
 */
export function formatGap(row: BenchRow): string {
  const target = row.target
  if (target?.met !== false) return ''
  const { op, value: goal } = target
  const over = op === '<='
  const word = over ? 'over' : 'under'
  if (goal === 0 || row.value === 0 || Math.sign(goal) !== Math.sign(row.value))
    return `${word} by ${formatNumber(Math.abs(row.value - goal))}`
  const share = Math.abs(row.value - goal) / Math.abs(goal)
  if (share < 0.5) return `${Math.max(1, Math.round(share * 100))}% ${word}`
  return `${(over ? row.value / goal : goal / row.value).toFixed(1)}× ${word}`
}

export function formatTarget(row: BenchRow): string {
  if (!row.target) return ''
  const { op, value, met } = row.target
  const gap = formatGap(row)
  return `${op === '<=' ? '≤' : '≥'} ${formatNumber(value)} ${met ? '✅' : '❌'}${gap ? ` ${gap}` : ''}`
}

/** 1234 → "1.2K", 2500000 → "2.5M": token counts as people read them. */
export function formatCount(value: number): string {
  const abs = Math.abs(value)
  if (abs >= 1e6) return `${trim(value / 1e6)}M`
  if (abs >= 1e3) return `${trim(value / 1e3)}K`
  return String(Math.round(value))
}

function trim(n: number): string {
  return n.toFixed(1).replace(/\.0$/, '')
}

export function formatPercent(ratio: number): string {
  return `${(ratio * 100).toFixed(ratio < 0.1 ? 1 : 0)}%`
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 86_400_000],
  ['month', 30 * 86_400_000],
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
  ['second', 1_000],
]

/** "3 minutes ago", "in 12 days". */
export function relativeTime(date: string | Date, now: Date = new Date()): string {
  const diff = new Date(date).getTime() - now.getTime()
  const format = new Intl.RelativeTimeFormat('en', { numeric: 'auto' })
  for (const [unit, ms] of UNITS)
    if (Math.abs(diff) >= ms || unit === 'second') return format.format(Math.round(diff / ms), unit)
  return ''
}

export function fieldError(
  issues: { field: string; message: string }[] | undefined,
  field: string,
): string | undefined {
  return issues?.find((issue) => issue.field === field || issue.field.endsWith(`.${field}`))?.message
}

/** 512 → "512 B", 6200 → "6.1 KB", 3_500_000 → "3.3 MB" (1 KB = 1024 bytes). */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${Math.round(bytes)} B`
  if (bytes < 1024 * 1024) return `${trim(bytes / 1024)} KB`
  return `${trim(bytes / (1024 * 1024))} MB`
}

/** 1234 → "1.2K", 2500000 → "2.5M": token counts as people read them. */
export function formatCount(value: number): string {
  const abs = Math.abs(value)
  if (abs >= 1e6) return `${trim(value / 1e6)}M`
  if (abs >= 1e3) return `${trim(value / 1e3)}K`
  return String(Math.round(value))
}

/** 1234 → "1,234": the exact figure behind a shortened one (tooltips, titles, tables). */
export function formatExact(value: number): string {
  return value.toLocaleString('en-US', { maximumFractionDigits: 2 })
}

/**
 * An average or other fractional figure: 0.36 stays "0.36" (formatCount would say "0"), 12.5 →
 * "12.5", large values shorten like formatCount.
 */
export function formatAverage(value: number): string {
  const abs = Math.abs(value)
  if (abs >= 1e3) return formatCount(value)
  if (abs === 0) return '0'
  if (abs < 10) return String(Math.round(value * 100) / 100)
  return String(Math.round(value * 10) / 10)
}

/** "1 token", "2 tokens", "1.2K tokens": a count with its noun, singular for exactly one. */
export function formatTokens(value: number): string {
  return `${formatCount(value)} ${value === 1 ? 'token' : 'tokens'}`
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

/** "2026-01-15T10:30" from a datetime-local field, read as UTC; null when empty, undefined when invalid. */
export function parseUtcDateTime(value: string | undefined): Date | null | undefined {
  if (!value?.trim()) return null
  const date = new Date(/Z|[+-]\d\d:\d\d$/.test(value) ? value : `${value}Z`)
  return Number.isNaN(date.getTime()) ? undefined : date
}

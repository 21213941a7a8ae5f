import { formatExact, formatPercent, formatTokens } from '../lib/format'

const PARTS = [
  ['full', 'full'],
  ['compressed', 'compressed'],
  ['dropped', 'dropped'],
] as const

/**
 * The context window against its budget: full, compressed and dropped tokens. A plain meter, not
 * a chart: at a 200K budget a few hundred tokens drew as an unreadable sliver and the chart's
 * "budget" label was clipped. Every non-zero part keeps a visible width, and the figures are
 * written out (exact on hover).
 */
export function ContextWindowBar({
  full,
  compressed,
  dropped,
  budget,
}: {
  full: number
  compressed: number
  dropped: number
  budget: number
}) {
  const values = { full, compressed, dropped }
  const scale = Math.max(budget, full + compressed + dropped, 1)
  const sent = full + compressed
  return (
    <figure
      className="chart"
      data-testid="context-window-bar"
      data-full={full}
      data-compressed={compressed}
      data-dropped={dropped}
      data-budget={budget}
      aria-label={`Context window: ${full} full, ${compressed} compressed, ${dropped} dropped tokens of a ${budget}-token budget`}
    >
      <figcaption>
        Context window: {formatTokens(sent)} sent of a {formatTokens(budget)} budget (
        <span data-testid="window-usage">{formatPercent(budget > 0 ? sent / budget : 0)}</span> used),{' '}
        {formatTokens(dropped)} dropped
      </figcaption>
      <div
        className="window-meter"
        role="img"
        aria-label={`${formatPercent(sent / scale)} of the budget used`}
      >
        {PARTS.map(([key]) => (
          <span
            key={key}
            className={`${key}${values[key] > 0 ? ' nonzero' : ''}`}
            style={{ width: `${(values[key] / scale) * 100}%` }}
            title={`${key}: ${formatExact(values[key])} tokens`}
          />
        ))}
      </div>
      <ul className="window-legend">
        {PARTS.map(([key, label]) => (
          <li key={key} title={`${formatExact(values[key])} tokens`}>
            <span className={`swatch window-meter-${key}`} style={{ background: SWATCH[key] }} />
            {label} {formatTokens(values[key])}
          </li>
        ))}
        <li data-testid="budget-label" title={`${formatExact(budget)} tokens`}>
          budget {formatTokens(budget)}
        </li>
      </ul>
    </figure>
  )
}

const SWATCH = { full: '#16a34a', compressed: '#f59e0b', dropped: '#dc2626' } as const

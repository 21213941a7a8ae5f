'use client'

import { Bar, BarChart, Legend, ReferenceLine, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts'
import { formatCount } from '../lib/format'

/** The context window as one stacked bar: full, compressed and dropped tokens against the budget. */
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
  const data = [{ name: 'tokens', full, compressed, dropped }]
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
        Context window: {formatCount(full + compressed)} of {formatCount(budget)} tokens sent (
        {formatCount(dropped)} dropped)
      </figcaption>
      <ResponsiveContainer width="100%" height={110}>
        <BarChart data={data} layout="vertical" margin={{ top: 8, right: 24, bottom: 0, left: 0 }}>
          <XAxis
            type="number"
            domain={[0, Math.max(budget, full + compressed + dropped)]}
            tickFormatter={formatCount}
          />
          <YAxis type="category" dataKey="name" hide />
          <Tooltip formatter={(v) => formatCount(Number(v))} />
          <Legend />
          <ReferenceLine
            x={budget}
            stroke="#111"
            strokeDasharray="4 2"
            label={{ value: 'budget', position: 'top', fontSize: 11 }}
          />
          <Bar dataKey="full" stackId="w" fill="#16a34a" isAnimationActive={false} />
          <Bar dataKey="compressed" stackId="w" fill="#f59e0b" isAnimationActive={false} />
          <Bar dataKey="dropped" stackId="w" fill="#dc2626" isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </figure>
  )
}

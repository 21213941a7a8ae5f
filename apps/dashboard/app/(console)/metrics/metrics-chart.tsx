'use client'

import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts'
import type { Point } from '../../../lib/metrics'

const COLORS = ['#0891b2', '#db2777', '#65a30d', '#9333ea', '#ea580c', '#475569']

/** One small line chart of the Metrics page: a series per key, over the samples' times. */
export function MetricsChart({
  title,
  testId,
  points,
  keys,
  unit,
}: {
  title: string
  testId: string
  points: Point[]
  keys: readonly string[]
  unit: string
}) {
  return (
    <figure className="chart" data-testid={testId} aria-label={title}>
      <figcaption>{title}</figcaption>
      <ResponsiveContainer width="100%" height={200}>
        <LineChart data={points} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" />
          <XAxis dataKey="time" tick={{ fontSize: 11 }} minTickGap={24} />
          <YAxis width={48} tick={{ fontSize: 11 }} />
          <Tooltip formatter={(value) => (value === null ? '—' : `${value} ${unit}`)} />
          {keys.length > 1 && <Legend />}
          {keys.map((key, i) => (
            <Line
              key={key}
              type="monotone"
              dataKey={key}
              name={key}
              stroke={COLORS[i % COLORS.length]}
              dot={false}
              connectNulls={false}
              isAnimationActive={false}
            />
          ))}
        </LineChart>
      </ResponsiveContainer>
    </figure>
  )
}

'use client'

import {
  CartesianGrid,
  Line,
  LineChart,
  ReferenceArea,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts'

/** One tuned parameter over time, drawn inside its allowed range (shaded). */
export function ParameterChart({
  title,
  data,
  range,
  testId,
}: {
  title: string
  data: { run: string; value: number }[]
  range: { min: number; max: number }
  testId: string
}) {
  const pad = (range.max - range.min) * 0.1
  return (
    <figure
      className="chart small"
      data-testid={testId}
      aria-label={`${title} over time, allowed ${range.min} to ${range.max}`}
    >
      <figcaption>
        {title}{' '}
        <span className="muted">
          (allowed {range.min}–{range.max})
        </span>
      </figcaption>
      <ResponsiveContainer width="100%" height={160}>
        <LineChart data={data} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" />
          <ReferenceArea y1={range.min} y2={range.max} fill="#16a34a" fillOpacity={0.08} />
          <XAxis dataKey="run" tick={{ fontSize: 10 }} />
          <YAxis
            domain={[range.min - pad, range.max + pad]}
            width={48}
            tickFormatter={(v) => String(Math.round(v * 100) / 100)}
          />
          <Tooltip />
          <Line
            type="stepAfter"
            dataKey="value"
            name={title}
            stroke="#ea580c"
            dot={false}
            isAnimationActive={false}
          />
        </LineChart>
      </ResponsiveContainer>
    </figure>
  )
}

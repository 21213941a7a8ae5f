'use client'

import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts'

export function RelevanceHistogram({ buckets }: { buckets: { range: string; count: number }[] }) {
  return (
    <figure
      className="chart"
      data-testid="relevance-histogram"
      aria-label="How many entries have each relevance"
    >
      <figcaption>Relevance of entries</figcaption>
      <ResponsiveContainer width="100%" height={200}>
        <BarChart data={buckets} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" />
          <XAxis dataKey="range" tick={{ fontSize: 11 }} />
          <YAxis allowDecimals={false} width={40} />
          <Tooltip />
          <Bar dataKey="count" fill="#6366f1" isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </figure>
  )
}

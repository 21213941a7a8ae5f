'use client'

import { Bar, BarChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts'

/** Current memories per category: one horizontal bar each, every category listed. */
export function MemoryCategoryChart({ data }: { data: { category: string; count: number }[] }) {
  return (
    <figure className="chart" data-testid="memory-category-chart" aria-label="Current memories per category">
      <figcaption>Current memories per category</figcaption>
      <ResponsiveContainer width="100%" height={Math.max(160, data.length * 26 + 30)}>
        <BarChart data={data} layout="vertical" margin={{ top: 4, right: 16, bottom: 0, left: 8 }}>
          <CartesianGrid strokeDasharray="3 3" horizontal={false} />
          <XAxis type="number" allowDecimals={false} />
          <YAxis type="category" dataKey="category" width={120} tick={{ fontSize: 12 }} interval={0} />
          <Tooltip />
          <Bar dataKey="count" fill="#6366f1" isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </figure>
  )
}

'use client'

import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts'

export function EntriesChart({
  data,
}: {
  data: { run: string; compressed: number; dropped: number; promoted: number }[]
}) {
  return (
    <figure
      className="chart"
      data-testid="entries-chart"
      aria-label="Entries compressed, dropped and promoted per run"
    >
      <figcaption>Entries compressed / dropped / promoted per run</figcaption>
      <ResponsiveContainer width="100%" height={220}>
        <BarChart data={data} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" />
          <XAxis dataKey="run" tick={{ fontSize: 11 }} />
          <YAxis allowDecimals={false} width={40} />
          <Tooltip />
          <Legend />
          <Bar dataKey="compressed" stackId="a" fill="#6366f1" isAnimationActive={false} />
          <Bar dataKey="dropped" stackId="a" fill="#dc2626" isAnimationActive={false} />
          <Bar dataKey="promoted" stackId="a" fill="#16a34a" isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </figure>
  )
}

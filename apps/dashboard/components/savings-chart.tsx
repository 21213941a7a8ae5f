'use client'

import { Area, AreaChart, CartesianGrid, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts'
import { formatCount, formatExact } from '../lib/format'

export function SavingsChart({ data }: { data: { run: string; saved: number }[] }) {
  return (
    <figure className="chart" data-testid="savings-chart" aria-label="Cumulative tokens saved">
      <figcaption>Cumulative tokens saved</figcaption>
      <ResponsiveContainer width="100%" height={220}>
        <AreaChart data={data} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" />
          <XAxis dataKey="run" tick={{ fontSize: 11 }} />
          <YAxis tickFormatter={formatCount} width={48} allowDecimals={false} />
          <Tooltip formatter={(v) => formatExact(Number(v))} />
          <Area
            type="monotone"
            dataKey="saved"
            name="saved"
            stroke="#0891b2"
            fill="#0891b233"
            isAnimationActive={false}
          />
        </AreaChart>
      </ResponsiveContainer>
    </figure>
  )
}

'use client'

import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts'
import { formatCount } from '../lib/format'

export interface TokensPoint {
  run: string
  tokensBefore: number
  tokensAfter: number
}

export function TokensChart({ data }: { data: TokensPoint[] }) {
  return (
    <figure className="chart" data-testid="tokens-chart" aria-label="Tokens before and after each run">
      <figcaption>Tokens before / after each run</figcaption>
      <ResponsiveContainer width="100%" height={220}>
        <LineChart data={data} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" />
          <XAxis dataKey="run" tick={{ fontSize: 11 }} />
          <YAxis tickFormatter={formatCount} width={48} allowDecimals={false} />
          <Tooltip formatter={(v) => formatCount(Number(v))} />
          <Legend />
          <Line
            type="monotone"
            dataKey="tokensBefore"
            name="before"
            stroke="#6366f1"
            dot={false}
            isAnimationActive={false}
          />
          <Line
            type="monotone"
            dataKey="tokensAfter"
            name="after"
            stroke="#16a34a"
            dot={false}
            isAnimationActive={false}
          />
        </LineChart>
      </ResponsiveContainer>
    </figure>
  )
}

'use client'

import { CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts'
import { formatCount, formatExact } from '../lib/format'

export interface TokensPoint {
  run: string
  tokensBefore: number
  tokensAfter: number
}

const AGENT_COLORS = ['#6366f1', '#16a34a', '#ea580c', '#0891b2', '#db2777', '#ca8a04', '#7c3aed', '#475569']

/** One agent: tokens before and after each of its runs. */
export function TokensChart({ data }: { data: TokensPoint[] }) {
  return (
    <figure className="chart" data-testid="tokens-chart" aria-label="Tokens before and after each run">
      <figcaption>Tokens before / after each run</figcaption>
      <ResponsiveContainer width="100%" height={220}>
        <LineChart data={data} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" />
          <XAxis dataKey="run" tick={{ fontSize: 11 }} />
          <YAxis tickFormatter={formatCount} width={48} allowDecimals={false} />
          <Tooltip formatter={(v) => formatExact(Number(v))} />
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

/**
 * Every agent: one line per agent of the tokens left after each of its runs (x: the agent's run
 * number). One line through all agents' snapshots in time order jumped between agents' sizes.
 */
export function AgentTokensChart({
  data,
  agents,
}: {
  /** { run: "#n", [agentId]: tokens after that agent's n-th run } */
  data: Record<string, number | string>[]
  agents: string[]
}) {
  return (
    <figure
      className="chart"
      data-testid="tokens-chart"
      data-series={agents.length}
      aria-label="Tokens after each run, one line per agent"
    >
      <figcaption>Tokens after each run, per agent</figcaption>
      <ResponsiveContainer width="100%" height={220}>
        <LineChart data={data} margin={{ top: 8, right: 16, bottom: 0, left: 0 }}>
          <CartesianGrid strokeDasharray="3 3" />
          <XAxis dataKey="run" tick={{ fontSize: 11 }} />
          <YAxis tickFormatter={formatCount} width={48} allowDecimals={false} />
          <Tooltip formatter={(v) => formatExact(Number(v))} />
          <Legend />
          {agents.map((agent, i) => (
            <Line
              key={agent}
              type="monotone"
              dataKey={agent}
              name={agent}
              stroke={AGENT_COLORS[i % AGENT_COLORS.length]}
              dot={false}
              connectNulls
              isAnimationActive={false}
            />
          ))}
        </LineChart>
      </ResponsiveContainer>
    </figure>
  )
}

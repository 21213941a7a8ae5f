'use client'

import { Bar, BarChart, CartesianGrid, Cell, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts'

/** Below this a fact is left out of the run context (core's factContextMinConfidence). */
const CONTEXT_MIN_CONFIDENCE = 0.5

/**
 * The domain's app facts by confidence, one bar each, so what the run context will offer (at or
 * above 0.5) stands apart from what is fading (below it, pruned under 0.1).
 */
export function ConfidenceChart({ facts }: { facts: { key: string; type: string; confidence: number }[] }) {
  const data = facts.map((f) => ({ name: f.key, confidence: Math.round(f.confidence * 100) / 100 }))
  return (
    <figure className="chart" data-testid="confidence-chart" aria-label="Confidence of each app fact">
      <figcaption>Confidence of app facts (offered to runs from 0.5)</figcaption>
      <ResponsiveContainer width="100%" height={Math.max(120, 28 * data.length + 40)}>
        <BarChart data={data} layout="vertical" margin={{ top: 8, right: 16, bottom: 0, left: 8 }}>
          <CartesianGrid strokeDasharray="3 3" />
          <XAxis type="number" domain={[0, 1]} tick={{ fontSize: 11 }} />
          <YAxis type="category" dataKey="name" width={160} tick={{ fontSize: 11 }} />
          <Tooltip />
          <Bar dataKey="confidence" isAnimationActive={false}>
            {data.map((d) => (
              <Cell key={d.name} fill={d.confidence >= CONTEXT_MIN_CONFIDENCE ? '#6366f1' : '#d1d5db'} />
            ))}
          </Bar>
        </BarChart>
      </ResponsiveContainer>
    </figure>
  )
}

'use client'

import { useCallback, useMemo, useState } from 'react'
import { EntriesChart } from '../../components/entries-chart'
import { LiveStatusLine } from '../../components/live-status-line'
import { ParameterChart } from '../../components/parameter-chart'
import { SavingsChart } from '../../components/savings-chart'
import { AgentTokensChart, TokensChart } from '../../components/tokens-chart'
import { type Snapshot, useLiveSnapshots } from '../../components/use-live-snapshots'
import { formatAverage, formatCount, formatExact } from '../../lib/format'

export interface Report {
  totalOptimizations: number
  totalTokensSaved: number
  parameters: {
    compressionTrigger: number
    fullMessageWindow: number
    minRelevance: number
    targetUsageRatio: number
  } | null
}

const RANGES = {
  compressionTrigger: { min: 0.35, max: 0.85 },
  fullMessageWindow: { min: 10, max: 50 },
  minRelevance: { min: 0.15, max: 0.7 },
}
const MAX_POINTS = 200

/** The efficiency cards and charts, kept current by the snapshot subscription. */
export function LiveOverview({
  agentId,
  initialSnapshots,
  initialReport,
}: {
  agentId: string | null
  initialSnapshots: Snapshot[]
  initialReport: Report
}) {
  const [snapshots, setSnapshots] = useState(initialSnapshots)
  const [report, setReport] = useState(initialReport)
  const onSnapshot = useCallback(
    (snapshot: Snapshot) => {
      setSnapshots((current) =>
        current.some((s) => s.id === snapshot.id) ? current : [...current, snapshot].slice(-MAX_POINTS),
      )
      setReport((current) => ({
        totalOptimizations: current.totalOptimizations + 1,
        totalTokensSaved: current.totalTokensSaved + snapshot.tokensSaved,
        parameters:
          agentId && current.parameters
            ? {
                ...current.parameters,
                compressionTrigger: snapshot.compressionTriggerRatio,
                fullMessageWindow: snapshot.fullMessageWindow,
                minRelevance: snapshot.minRelevanceScore,
              }
            : current.parameters,
      }))
    },
    [agentId],
  )
  const status = useLiveSnapshots(agentId, onSnapshot)

  const series = useMemo(() => {
    let saved = 0
    return snapshots.map((s, i) => {
      saved += s.tokensSaved
      const run = `#${i + 1}`
      return {
        run,
        tokensBefore: s.tokensBefore,
        tokensAfter: s.tokensAfter,
        saved,
        compressed: s.entriesCompressed,
        dropped: s.entriesDropped,
        promoted: s.entriesPromoted,
        compressionTrigger: s.compressionTriggerRatio,
        fullMessageWindow: s.fullMessageWindow,
        minRelevance: s.minRelevanceScore,
      }
    })
  }, [snapshots])

  // All agents: each agent's runs numbered on their own, one series per agent.
  const perAgent = useMemo(() => {
    const agents: string[] = []
    const rows: Record<string, number | string>[] = []
    const runs = new Map<string, number>()
    for (const s of snapshots) {
      if (!runs.has(s.agentId)) agents.push(s.agentId)
      const n = (runs.get(s.agentId) ?? 0) + 1
      runs.set(s.agentId, n)
      const row = rows[n - 1] ?? { run: `#${n}` }
      row[s.agentId] = s.tokensAfter
      rows[n - 1] = row
    }
    return { agents, rows }
  }, [snapshots])

  // Unrounded: 9 tokens over 25 runs is 0.36 per run, not 0.
  const average = report.totalOptimizations === 0 ? 0 : report.totalTokensSaved / report.totalOptimizations
  return (
    <>
      <LiveStatusLine status={status} />
      <section className="cards" aria-label="Efficiency report">
        <div className="card stat">
          <span className="muted">Optimizer runs</span>
          <strong data-testid="stat-runs" title={formatExact(report.totalOptimizations)}>
            {formatCount(report.totalOptimizations)}
          </strong>
        </div>
        <div className="card stat">
          <span className="muted">Tokens saved</span>
          <strong data-testid="stat-saved" title={`${formatExact(report.totalTokensSaved)} tokens`}>
            {formatCount(report.totalTokensSaved)}
          </strong>
        </div>
        <div className="card stat">
          <span className="muted">Average saved per run</span>
          <strong data-testid="stat-average" title={`${formatExact(average)} tokens`}>
            {formatAverage(average)}
          </strong>
        </div>
        <div className="card stat">
          <span className="muted">Current parameters</span>
          {report.parameters ? (
            <strong className="params">
              trigger {report.parameters.compressionTrigger.toFixed(2)} · window{' '}
              {report.parameters.fullMessageWindow} · min relevance{' '}
              {report.parameters.minRelevance.toFixed(2)} · target{' '}
              {report.parameters.targetUsageRatio.toFixed(2)}
            </strong>
          ) : (
            <span className="muted">choose one agent</span>
          )}
        </div>
      </section>
      {snapshots.length === 0 ? (
        <p className="empty" data-testid="no-snapshots">
          No optimizer runs yet. Runs happen on the schedule once an agent has memory entries, or start one
          from the Optimizer page.
        </p>
      ) : (
        <div className="charts" data-points={snapshots.length} data-testid="charts">
          {agentId ? (
            <TokensChart data={series} />
          ) : (
            <AgentTokensChart data={perAgent.rows} agents={perAgent.agents} />
          )}
          <SavingsChart data={series} />
          <EntriesChart data={series} />
          {agentId ? (
            <div className="param-charts">
              <ParameterChart
                testId="param-trigger"
                title="Compression trigger"
                range={RANGES.compressionTrigger}
                data={series.map((p) => ({ run: p.run, value: p.compressionTrigger }))}
              />
              <ParameterChart
                testId="param-window"
                title="Full message window"
                range={RANGES.fullMessageWindow}
                data={series.map((p) => ({ run: p.run, value: p.fullMessageWindow }))}
              />
              <ParameterChart
                testId="param-relevance"
                title="Minimum relevance"
                range={RANGES.minRelevance}
                data={series.map((p) => ({ run: p.run, value: p.minRelevance }))}
              />
            </div>
          ) : (
            <p className="muted">Choose one agent to see how its parameters are being tuned.</p>
          )}
        </div>
      )}
    </>
  )
}

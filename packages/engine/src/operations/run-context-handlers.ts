import type { OperationName, OutputOf } from '@engram/contract'
import type { Engine } from '../engine.ts'
import type { TrajectoryRecord } from '../ports/trajectories.ts'
import type { RunContextResult, TrajectoryMatch } from '../trajectories/run-context.ts'
import type { OperationHandlers } from './handlers.ts'

// The run context and reference matching (issue 16).
export type RunContextHandlerName = 'runContext' | 'matchTrajectories'

type Out<N extends OperationName> = OutputOf<N>

/**
 * A stored trajectory in the catalog's shape (dates as ISO strings, `extra` never sent). The runs
 * part shapes trajectories for its own operations too; this is the narrowest copy the matches need.
 */
export function trajectoryMatchOut(m: TrajectoryMatch): Out<'matchTrajectories'>[number] {
  return { trajectory: trajectoryShape(m.trajectory), similarity: m.similarity, score: m.score }
}

function trajectoryShape(t: TrajectoryRecord): Out<'matchTrajectories'>[number]['trajectory'] {
  return {
    id: t.id,
    scope: t.scope,
    domain: t.domain,
    origin: t.origin,
    goal: t.goal,
    runId: t.runId,
    steps: t.steps.map((s) => ({
      action: s.action,
      selector: s.selector,
      value: s.value,
      url: s.url,
      verified: s.verified,
      durationMs: s.durationMs,
    })),
    stepCount: t.stepCount,
    verifiedCount: t.verifiedCount,
    success: t.success,
    turns: t.turns,
    durationMs: t.durationMs,
    outcome: t.outcome,
    model: t.model,
    recordedAt: t.recordedAt.toISOString(),
  }
}

export function runContextOut(c: RunContextResult): Out<'runContext'> {
  return {
    domain: c.domain,
    scope: c.scope,
    goal: c.goal,
    text: c.text,
    totalTokens: c.totalTokens,
    budgetTokens: c.budgetTokens,
    sections: c.sections.map((s) => ({
      section: s.section,
      priority: s.priority,
      tokens: s.tokens,
      fullTokens: s.fullTokens,
      items: s.items,
      availableItems: s.availableItems,
      included: s.included,
      truncated: s.truncated,
      text: s.text,
    })),
    reference: c.reference ? trajectoryMatchOut(c.reference) : null,
  }
}

export function runContextHandlers(engine: Engine): Pick<OperationHandlers, RunContextHandlerName> {
  return {
    async runContext(call, input) {
      const agentId = await call.agentScope(input.agentId)
      return runContextOut(
        await engine.runContext.build(agentId, {
          runId: input.runId,
          domain: input.domain,
          goal: input.goal,
          scope: input.scope,
          budgetTokens: input.budgetTokens,
          traceScoring: input.traceScoring,
          traceTtlDays: input.traceTtlDays,
          sections: input.sections,
        }),
      )
    },
    async matchTrajectories(call, input) {
      const agentId = await call.agentScope(input.agentId)
      const matches = await engine.runContext.matchTrajectories(agentId, {
        domain: input.domain,
        goal: input.goal,
        scope: input.scope,
        traceScoring: input.traceScoring,
        traceTtlDays: input.traceTtlDays,
        limit: input.limit,
      })
      return matches.map(trajectoryMatchOut)
    },
  }
}

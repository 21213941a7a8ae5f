import type { OperationName, OutputOf } from '@engram/contract'
import type { Engine } from '../engine.ts'
import type { RunContextResult, TrajectoryMatch } from '../trajectories/run-context.ts'
import type { OperationHandlers } from './handlers.ts'
import { trajectoryOut } from './run-wire.ts'

// The run context and reference matching (issue 16).
export type RunContextHandlerName = 'runContext' | 'matchTrajectories'

type Out<N extends OperationName> = OutputOf<N>

export function trajectoryMatchOut(m: TrajectoryMatch): Out<'matchTrajectories'>[number] {
  return { trajectory: trajectoryOut(m.trajectory), similarity: m.similarity, score: m.score }
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

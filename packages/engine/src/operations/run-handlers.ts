import { normalizeRunDomain } from '@engram/core'
import type { Engine } from '../engine.ts'
import type { OperationHandlers } from './handlers.ts'
import { scopeOf } from './principal.ts'
import * as wire from './run-wire.ts'
import { eventStream, shapeEach } from './streams.ts'

// Trajectory memory's handlers (issue 16), one file per part so they are built side by side:
// the run registry and memory records here; the run context and matching in
// run-context-handlers.ts; the `.agent-memory/` migration in agent-memory-handlers.ts.

export type RunHandlerName =
  | 'startRun'
  | 'reportRunProgress'
  | 'completeRun'
  | 'failRun'
  | 'resumeRun'
  | 'forkRun'
  | 'run'
  | 'runs'
  | 'runLineage'
  | 'deleteRun'
  | 'recordTrajectory'
  | 'trajectories'
  | 'trajectory'
  | 'deleteTrajectory'
  | 'runSessions'
  | 'recordKnowledge'
  | 'appFacts'
  | 'deleteAppFact'
  | 'recordSelector'
  | 'knownSelectors'
  | 'deleteKnownSelector'
  | 'runHints'
  | 'addRunHint'
  | 'updateRunHint'
  | 'deleteRunHint'
  | 'runDomains'
  | 'deleteRunDomain'
  | 'clearRunMemoryScope'
  | 'runEvents'

/**
 * The run registry and memory records behind the catalog. No operation is admin-only: an agent
 * key works on its own agent's runs and memory (ids of another agent's records find nothing), an
 * admin key names the agent.
 */
export function runHandlers(engine: Engine): Pick<OperationHandlers, RunHandlerName> {
  const { runs, runMemory } = engine
  const selectorOut = (s: Parameters<typeof wire.knownSelectorOut>[0]) =>
    wire.knownSelectorOut(s, runMemory.rules)
  return {
    // The registry --------------------------------------------------------------------------------
    async startRun(call, input) {
      const { agentId, ...start } = input
      return wire.runOut(await runs.startRun(await call.agentScope(agentId), start))
    },
    async reportRunProgress(call, input) {
      const { agentId, runId, ...progress } = input
      return wire.runOut(await runs.reportProgress(await call.agentScope(agentId), runId, progress))
    },
    async completeRun(call, input) {
      const { agentId, runId, ...end } = input
      return wire.runEndOut(await runs.completeRun(await call.agentScope(agentId), runId, end))
    },
    async failRun(call, input) {
      const { agentId, runId, ...end } = input
      return wire.runEndOut(await runs.failRun(await call.agentScope(agentId), runId, end))
    },
    async resumeRun(call, input) {
      const { agentId, runId, ...resume } = input
      return wire.runOut(await runs.resumeRun(await call.agentScope(agentId), runId, resume))
    },
    async forkRun(call, input) {
      const { agentId, runId, ...fork } = input
      return wire.runOut(await runs.forkRun(await call.agentScope(agentId), runId, fork))
    },
    async run(call, input) {
      const found = await runs.run(await call.agentScope(input.agentId), input.runId)
      return found ? wire.runOut(found) : null
    },
    async runs(call, input) {
      const { agentId, limit, after, ...filter } = input
      const page = await runs.runs(await call.agentScope(agentId), filter, { limit, after })
      return { totalCount: page.totalCount, runs: page.runs.map(wire.runOut), nextCursor: page.nextCursor }
    },
    async runLineage(call, input) {
      const scope = await call.agentScope(input.agentId)
      return wire.runLineageOut(await runs.runLineage(scope, input.runId, input.limit))
    },
    async deleteRun(call, input) {
      return wire.forgetOut(await runs.deleteRun(await call.agentScope(input.agentId), input.runId))
    },

    // Trajectories and session history -------------------------------------------------------------
    async recordTrajectory(call, input) {
      const { agentId, ...trajectory } = input
      return wire.trajectoryOut(await runMemory.recordTrajectory(await call.agentScope(agentId), trajectory))
    },
    async trajectories(call, input) {
      const { agentId, offset, limit, ...filter } = input
      const page = await runMemory.trajectories(await call.agentScope(agentId), filter, { offset, limit })
      return { totalCount: page.totalCount, trajectories: page.items.map(wire.trajectoryOut) }
    },
    async trajectory(call, input) {
      const found = await runMemory.trajectory(await call.agentScope(input.agentId), input.id)
      return found ? wire.trajectoryOut(found) : null
    },
    async deleteTrajectory(call, input) {
      const deleted = await runMemory.deleteTrajectory(await call.agentScope(input.agentId), input.id)
      return { id: input.id, deleted }
    },
    async runSessions(call, input) {
      const { agentId, ...where } = input
      return (await runMemory.runSessions(await call.agentScope(agentId), where)).map(wire.runSessionOut)
    },

    // App knowledge and selectors ------------------------------------------------------------------
    async recordKnowledge(call, input) {
      const { agentId, ...record } = input
      return (await runMemory.recordKnowledge(await call.agentScope(agentId), record)).map(wire.appFactOut)
    },
    async appFacts(call, input) {
      const { agentId, offset, limit, ...filter } = input
      const page = await runMemory.appFacts(await call.agentScope(agentId), filter, { offset, limit })
      return { totalCount: page.totalCount, facts: page.items.map(wire.appFactOut) }
    },
    async deleteAppFact(call, input) {
      const deleted = await runMemory.deleteAppFact(await call.agentScope(input.agentId), input.id)
      return { id: input.id, deleted }
    },
    async recordSelector(call, input) {
      const { agentId, ...record } = input
      return (await runMemory.recordSelector(await call.agentScope(agentId), record)).map(selectorOut)
    },
    async knownSelectors(call, input) {
      const { agentId, offset, limit, ...filter } = input
      const page = await runMemory.knownSelectors(await call.agentScope(agentId), filter, { offset, limit })
      return { totalCount: page.totalCount, selectors: page.items.map(selectorOut) }
    },
    async deleteKnownSelector(call, input) {
      const deleted = await runMemory.deleteKnownSelector(await call.agentScope(input.agentId), input.id)
      return { id: input.id, deleted }
    },

    // Hints ------------------------------------------------------------------------------------
    async runHints(call, input) {
      return (await runMemory.hints.list(await call.agentScope(input.agentId), input.scope)).map(
        wire.runHintOut,
      )
    },
    async addRunHint(call, input) {
      const { agentId, ...hint } = input
      return wire.runHintOut(await runMemory.hints.add(await call.agentScope(agentId), hint))
    },
    async updateRunHint(call, input) {
      const scope = await call.agentScope(input.agentId)
      return wire.runHintOut(await runMemory.hints.update(scope, input.id, input.text))
    },
    async deleteRunHint(call, input) {
      const deleted = await runMemory.hints.delete(await call.agentScope(input.agentId), input.id)
      return { id: input.id, deleted }
    },

    // Domains and scopes -----------------------------------------------------------------------
    async runDomains(call, input) {
      // No scope named: every scope's domains (the dashboard's list).
      return (await runMemory.domains(await call.agentScope(input.agentId), input.scope)).map(
        wire.runDomainOut,
      )
    },
    async deleteRunDomain(call, input) {
      const { agentId, ...where } = input
      return wire.forgetOut(await runMemory.deleteDomain(await call.agentScope(agentId), where))
    },
    async clearRunMemoryScope(call, input) {
      return wire.forgetOut(await runMemory.clearScope(await call.agentScope(input.agentId), input.scope))
    },

    // The subscription ---------------------------------------------------------------------------
    runEvents(call, input) {
      const { principal } = call
      // As formationActivityEvents: an agent naming another is refused at once, the operator's
      // named agent checked before the first event, every agent's events when it names none.
      const wanted: Promise<string | null> =
        principal.kind === 'agent'
          ? Promise.resolve(scopeOf(principal, input.agentId))
          : call.listScope(input.agentId)
      const domain = input.domain != null ? normalizeRunDomain(input.domain) : null
      const events = eventStream(engine, 'run:event', wanted, (event, agentId) =>
        (agentId === null || event.agentId === agentId) &&
        (input.runId == null || event.runId === input.runId) &&
        (domain === null || event.domain === domain)
          ? event
          : null,
      )
      // Events carry ids only (they cross Redis): the run is read as stored, from its own agent.
      return shapeEach(events, async (event) => {
        const run = await runs.run(event.agentId, event.runId)
        return run ? { kind: event.kind, run: wire.runOut(run), at: event.at } : null
      })
    },
  }
}

import type { Engine } from '../engine.ts'
import type { OperationHandlers } from './handlers.ts'

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

// FOUNDATION PLACEHOLDER (issue 16, replaced by the run registry's part before the issue closes).
const notBuilt = (name: string) => () => {
  throw new Error(`${name} is being built (issue 16)`)
}

export function runHandlers(_engine: Engine): Pick<OperationHandlers, RunHandlerName> {
  const names: RunHandlerName[] = [
    'startRun',
    'reportRunProgress',
    'completeRun',
    'failRun',
    'resumeRun',
    'forkRun',
    'run',
    'runs',
    'runLineage',
    'deleteRun',
    'recordTrajectory',
    'trajectories',
    'trajectory',
    'deleteTrajectory',
    'runSessions',
    'recordKnowledge',
    'appFacts',
    'deleteAppFact',
    'recordSelector',
    'knownSelectors',
    'deleteKnownSelector',
    'runHints',
    'addRunHint',
    'updateRunHint',
    'deleteRunHint',
    'runDomains',
    'deleteRunDomain',
    'clearRunMemoryScope',
    'runEvents',
  ]
  return Object.fromEntries(names.map((n) => [n, notBuilt(n)])) as unknown as Pick<
    OperationHandlers,
    RunHandlerName
  >
}

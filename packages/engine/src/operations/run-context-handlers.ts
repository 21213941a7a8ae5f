import type { Engine } from '../engine.ts'
import type { OperationHandlers } from './handlers.ts'

// The run context and reference matching (issue 16).
export type RunContextHandlerName = 'runContext' | 'matchTrajectories'

// FOUNDATION PLACEHOLDER (issue 16, replaced by the run context's part before the issue closes).
export function runContextHandlers(_engine: Engine): Pick<OperationHandlers, RunContextHandlerName> {
  return {
    runContext: async () => {
      throw new Error('runContext is being built (issue 16)')
    },
    matchTrajectories: async () => {
      throw new Error('matchTrajectories is being built (issue 16)')
    },
  }
}

import type { Engine } from '../engine.ts'
import type { OperationHandlers } from './handlers.ts'

// The `.agent-memory/` migration (issue 16).
export type AgentMemoryHandlerName = 'importAgentMemory' | 'exportAgentMemory'

// FOUNDATION PLACEHOLDER (issue 16, replaced by the migration's part before the issue closes).
export function agentMemoryHandlers(_engine: Engine): Pick<OperationHandlers, AgentMemoryHandlerName> {
  return {
    importAgentMemory: async () => {
      throw new Error('importAgentMemory is being built (issue 16)')
    },
    exportAgentMemory: async () => {
      throw new Error('exportAgentMemory is being built (issue 16)')
    },
  }
}

import type { Engine } from '../engine.ts'
import type { OperationHandlers } from './handlers.ts'

// The `.agent-memory/` migration (issue 16).
export type AgentMemoryHandlerName = 'importAgentMemory' | 'exportAgentMemory'

export function agentMemoryHandlers(engine: Engine): Pick<OperationHandlers, AgentMemoryHandlerName> {
  return {
    async importAgentMemory(call, input) {
      const agentId = await call.agentScope(input.agentId)
      return engine.agentMemory.importFiles(agentId, input.files, input.scope)
    },
    async exportAgentMemory(call, input) {
      const agentId = await call.agentScope(input.agentId)
      return engine.agentMemory.exportFiles(agentId, input.scope)
    },
  }
}

import type { LlmProvider } from '@engram/core'

/**
 * The server's language model asking for another model by name (an agent's core model): the same
 * adapter, its concurrency slots, retries and circuit breaker, with only the model of each request
 * changed, so one endpoint serves agents on different models.
 */
export function withModel(llm: LlmProvider, model: string): LlmProvider {
  return {
    model,
    get circuitState() {
      return llm.circuitState
    },
    chat: (request) => llm.chat({ ...request, model }),
  }
}

/** Which language model an agent's formation work calls, if any (FormationService answers it). */
export interface AgentLanguageModels {
  languageModel(agentId: string): Promise<LlmProvider | null>
}

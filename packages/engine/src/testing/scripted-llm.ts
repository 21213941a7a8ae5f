import type { ChatRequest, LlmProvider } from '@engram/core'

/**
 * A language model in process, for the engine's unit tests: records each request and answers with
 * what the test scripts (an Error is thrown, e.g. one named CircuitOpenError). Tests through the
 * network use `@engram/providers/testing`'s local chat server instead.
 */
export function scriptedLlm(answer: (request: ChatRequest, call: number) => string | Error) {
  const requests: ChatRequest[] = []
  const llm: LlmProvider = {
    model: 'scripted',
    async chat(request) {
      requests.push(request)
      const content = answer(request, requests.length)
      if (content instanceof Error) throw content
      return { content, model: 'scripted' }
    },
  }
  return { llm, requests }
}

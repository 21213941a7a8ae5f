import { chatReply, loopbackOnlyFetch, type OpenAiServer, startChatServer } from '@engram/providers/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { loadEnv } from '../env.ts'
import { createLlmFromEnv, LlmConfigError } from './provider.ts'

describe('createLlmFromEnv', () => {
  let server: OpenAiServer | undefined
  afterEach(async () => {
    await server?.close()
    server = undefined
  })

  it('returns no model when no URL is set: formation stays offline', () => {
    expect(createLlmFromEnv(loadEnv({}))).toBeNull()
  })

  it('builds the configured provider, which reaches the server with the key and the concurrency bound', async () => {
    server = await startChatServer(async () => {
      await new Promise((resolve) => setTimeout(resolve, 10))
      return chatReply('{"ok":true}')
    })
    const llm = createLlmFromEnv(
      loadEnv({
        ENGRAM_LLM_URL: server.baseUrl,
        ENGRAM_LLM_MODEL: 'qwen2.5:7b',
        ENGRAM_LLM_API_KEY: 'sk-env',
        ENGRAM_LLM_MAX_CONCURRENCY: '1',
      }),
      { fetch: loopbackOnlyFetch },
    )
    expect(llm?.model).toBe('qwen2.5:7b')
    const answers = await Promise.all(
      [1, 2, 3].map(() => llm?.chat({ messages: [{ role: 'user', content: 'hi' }] })),
    )
    expect(answers.map((answer) => answer?.content)).toEqual(['{"ok":true}', '{"ok":true}', '{"ok":true}'])
    expect(server.requests).toHaveLength(3)
    expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-env')
    expect(server.requests[0]?.body.model).toBe('qwen2.5:7b')
    expect(server.maxInFlight).toBe(1)
  })

  it('refuses half a configuration in a hand-built env, naming the variable', () => {
    const defaults = { ENGRAM_LLM_TIMEOUT_MS: 60_000, ENGRAM_LLM_MAX_CONCURRENCY: 4 }
    expect(() => createLlmFromEnv({ ...defaults, ENGRAM_LLM_URL: 'http://127.0.0.1:1/v1' })).toThrow(
      new LlmConfigError('ENGRAM_LLM_MODEL', 'is required when ENGRAM_LLM_URL is set'),
    )
    expect(() => createLlmFromEnv({ ...defaults, ENGRAM_LLM_MODEL: 'm' })).toThrow(
      /ENGRAM_LLM_URL: is required/,
    )
  })
})

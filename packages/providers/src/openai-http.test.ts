import { describe, expect, it } from 'vitest'
import { openAiEndpoint, openAiHeaders } from './openai-http.ts'

describe('openAiEndpoint', () => {
  it('appends the resource to a base URL that has a path, and /v1 to a bare origin', () => {
    expect(openAiEndpoint('http://127.0.0.1:11434/v1', 'chat/completions')).toBe(
      'http://127.0.0.1:11434/v1/chat/completions',
    )
    expect(openAiEndpoint('http://127.0.0.1:11434/v1/', 'embeddings')).toBe(
      'http://127.0.0.1:11434/v1/embeddings',
    )
    expect(openAiEndpoint('http://127.0.0.1:11434', 'chat/completions')).toBe(
      'http://127.0.0.1:11434/v1/chat/completions',
    )
    expect(openAiEndpoint('http://127.0.0.1:11434/', 'embeddings')).toBe(
      'http://127.0.0.1:11434/v1/embeddings',
    )
    // Gateways put the version under their own prefix: taken as given.
    expect(openAiEndpoint('https://gateway.example/openai/v1', 'chat/completions')).toBe(
      'https://gateway.example/openai/v1/chat/completions',
    )
    expect(openAiEndpoint('https://api.example/v1?api-version=2', 'embeddings')).toBe(
      'https://api.example/v1/embeddings?api-version=2',
    )
  })

  it('sends a Bearer key only when there is one', () => {
    expect(openAiHeaders('sk-1').authorization).toBe('Bearer sk-1')
    expect(openAiHeaders(undefined)).not.toHaveProperty('authorization')
  })
})

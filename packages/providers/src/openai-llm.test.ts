import { type ChatRequest, chatForObject, ModelAnswerError, ValidationError } from '@engram/core'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createOpenAiCompatibleLlm, type OpenAiLlmOptions } from './openai-llm.ts'
import { AttemptTimeoutError, CircuitOpenError, ServiceError } from './resilience.ts'
import {
  chatReply,
  eventually,
  loopbackOnlyFetch,
  ManualTimerClock,
  type OpenAiServer,
  type RecordedRequest,
  type Reply,
  rejection,
  startChatServer,
} from './testing/index.ts'

const servers: OpenAiServer[] = []
async function serve(handler: (request: RecordedRequest, count: number) => Reply | Promise<Reply>) {
  const server = await startChatServer(handler)
  servers.push(server)
  return server
}
afterEach(async () => {
  // No request of any test left the loopback interface.
  for (const server of servers) {
    expect(server.requests.every((request) => request.remoteAddress === '127.0.0.1')).toBe(true)
  }
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

function llmFor(server: OpenAiServer, options: Partial<OpenAiLlmOptions> = {}) {
  return createOpenAiCompatibleLlm({
    baseUrl: server.baseUrl,
    model: 'llama3.2',
    fetch: loopbackOnlyFetch,
    ...options,
  })
}

const Person = z.object({ name: z.string().min(1), age: z.number().int().min(0) })
const PERSON_SCHEMA = { name: 'person', schema: z.toJSONSchema(Person) as Record<string, unknown> }
const ask: ChatRequest = {
  messages: [
    { role: 'system', content: 'Extract the person.' },
    { role: 'user', content: 'Dana is 34.' },
  ],
  jsonSchema: PERSON_SCHEMA,
  temperature: 0,
  maxTokens: 200,
}
const DANA = JSON.stringify({ name: 'Dana', age: 34 })

type ResponseFormat = { type?: string } | undefined
const formatOf = (request: RecordedRequest | undefined) =>
  (request?.body.response_format as ResponseFormat)?.type ?? 'none'
const systemOf = (request: RecordedRequest | undefined) =>
  (request?.body.messages as { role: string; content: string }[] | undefined)?.[0]?.content ?? ''

/** A server that refuses the response formats it does not know, as vLLM or an old Ollama does. */
function refusing(supported: string[]) {
  return (request: RecordedRequest): Reply => {
    const format = formatOf(request)
    if (!supported.includes(format)) {
      return {
        status: 400,
        json: {
          error: {
            message: `response_format type "${format}" is not supported`,
            type: 'invalid_request_error',
          },
        },
      }
    }
    return chatReply(DANA)
  }
}

describe('createOpenAiCompatibleLlm', () => {
  it('sends the schema as json_schema (strict) and reports the answer, its model and usage', async () => {
    const server = await serve(() =>
      chatReply(DANA, { model: 'llama3.2:3b', usage: { prompt_tokens: 42, completion_tokens: 9 } }),
    )
    const llm = llmFor(server, { apiKey: 'sk-test-1' })
    const response = await llm.chat(ask)

    expect(response).toEqual({
      content: DANA,
      model: 'llama3.2:3b',
      usage: { promptTokens: 42, completionTokens: 9 },
    })
    const [request] = server.requests
    expect(request?.path).toBe('/v1/chat/completions')
    expect(request?.headers.authorization).toBe('Bearer sk-test-1')
    expect(request?.body).toEqual({
      model: 'llama3.2',
      messages: ask.messages,
      stream: false,
      temperature: 0,
      max_tokens: 200,
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'person', schema: PERSON_SCHEMA.schema, strict: true },
      },
    })
    expect(llm.model).toBe('llama3.2')
    expect(llm.structuredOutput).toBe('json_schema')
  })

  it('sends no response_format and no key without them, and accepts a bare origin as base URL', async () => {
    const server = await serve(() => chatReply('Hello Dana.', { usage: null }))
    const llm = llmFor(server, { baseUrl: server.baseUrl.replace(/\/v1$/, '') })
    const response = await llm.chat({ messages: [{ role: 'user', content: 'Say hello to Dana.' }] })
    expect(response).toEqual({ content: 'Hello Dana.', model: 'test-model' })
    expect(server.requests[0]?.path).toBe('/v1/chat/completions')
    expect(server.requests[0]?.headers.authorization).toBeUndefined()
    expect(server.requests[0]?.body).toEqual({
      model: 'llama3.2',
      messages: [{ role: 'user', content: 'Say hello to Dana.' }],
      stream: false,
    })
  })

  it("asks for the request's model when one is given (an agent's core model), else the configured one", async () => {
    const server = await serve((request) =>
      chatReply('ok', { model: String(request.body.model), usage: null }),
    )
    const llm = llmFor(server)
    const hello = [{ role: 'user' as const, content: 'hello' }]
    expect(await llm.chat({ messages: hello, model: 'qwen2.5:7b' })).toEqual({
      content: 'ok',
      model: 'qwen2.5:7b',
    })
    await llm.chat({ messages: hello })
    expect(server.requests.map((request) => request.body.model)).toEqual(['qwen2.5:7b', 'llama3.2'])
    // The adapter's own name stays the configured model.
    expect(llm.model).toBe('llama3.2')
  })

  it('falls back from json_schema to json_object to a prompt, and remembers what works', async () => {
    const server = await serve(refusing(['none']))
    const llm = llmFor(server)
    expect((await llm.chat(ask)).content).toBe(DANA)
    expect(server.requests.map(formatOf)).toEqual(['json_schema', 'json_object', 'none'])
    // Without server-side enforcement the schema is in the system prompt, after the caller's own.
    for (const request of server.requests.slice(1)) {
      expect(systemOf(request)).toMatch(/^Extract the person\.\n\nAnswer with one JSON object only/)
      expect(systemOf(request)).toContain(JSON.stringify(PERSON_SCHEMA.schema))
    }
    expect(systemOf(server.requests[0])).toBe('Extract the person.')
    expect(llm.structuredOutput).toBe('prompt')

    // The next call goes straight to the prompt: one request.
    await llm.chat(ask)
    expect(server.requests.map(formatOf)).toEqual(['json_schema', 'json_object', 'none', 'none'])
  })

  it('stops at json_object when the server supports it, and adds a system message when there is none', async () => {
    const server = await serve(refusing(['json_object', 'none']))
    const llm = llmFor(server)
    await llm.chat({ messages: [{ role: 'user', content: 'Dana is 34.' }], jsonSchema: PERSON_SCHEMA })
    await llm.chat({ messages: [{ role: 'user', content: 'Dana is 34.' }], jsonSchema: PERSON_SCHEMA })
    expect(server.requests.map(formatOf)).toEqual(['json_schema', 'json_object', 'json_object'])
    const messages = server.requests[1]?.body.messages as { role: string; content: string }[]
    expect(messages[0]?.role).toBe('system')
    expect(messages[0]?.content).toContain('JSON schema ("person")')
    expect(messages[1]).toEqual({ role: 'user', content: 'Dana is 34.' })
    expect(llm.structuredOutput).toBe('json_object')
  })

  it('does not retry or fall back on a 400 that is not about the response format', async () => {
    const server = await serve(() => ({
      status: 400,
      json: { error: { message: 'context length exceeded' } },
    }))
    const clock = new ManualTimerClock()
    const llm = llmFor(server, { clock })
    const error = await rejection(llm.chat(ask))
    expect(error).toBeInstanceOf(ServiceError)
    expect(error.message).toContain('HTTP 400')
    expect(error.message).toContain('context length exceeded')
    expect(server.requests).toHaveLength(1)
    expect(llm.structuredOutput).toBe('json_schema')
    expect(llm.circuitState).toBe('closed')
  })

  it('retries a 429 after the Retry-After the server asks for, on the injected clock', async () => {
    const server = await serve((_, count) =>
      count === 1
        ? { status: 429, headers: { 'retry-after': '3' }, json: { error: 'slow down' } }
        : chatReply(DANA),
    )
    const clock = new ManualTimerClock()
    const llm = llmFor(server, { clock })
    const call = llm.chat(ask)
    // Longer than the 1 s backoff, shorter than the 4 s cap: the server's 3 s it is.
    await clock.waitForTimer(3_000)
    expect(server.requests).toHaveLength(1)
    clock.advance(2_999)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(server.requests).toHaveLength(1)
    clock.advance(1)
    expect((await call).content).toBe(DANA)
    expect(server.requests).toHaveLength(2)
  })

  it('caps a long Retry-After at the longest backoff instead of stalling', async () => {
    const server = await serve((_, count) =>
      count === 1 ? { status: 503, headers: { 'retry-after': '3600' } } : chatReply(DANA),
    )
    const clock = new ManualTimerClock()
    const call = llmFor(server, { clock }).chat(ask)
    await clock.waitForTimer(4_000)
    clock.advance(4_000)
    expect((await call).content).toBe(DANA)
  })

  it('times out a slow answer on the injected clock and retries it after the backoff', async () => {
    const server = await serve((_, count) => (count === 1 ? 'hang' : chatReply(DANA)))
    const clock = new ManualTimerClock()
    const llm = llmFor(server, { clock })
    const call = llm.chat(ask)
    await eventually(() => server.requests.length === 1, 'the first request')
    await clock.waitForTimer(60_000)
    clock.advance(59_999)
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(clock.pendingDelays()).toEqual([60_000])
    clock.advance(1) // spec 003: 60 s per attempt
    await clock.waitForTimer(1_000)
    clock.advance(1_000)
    expect((await call).content).toBe(DANA)
    expect(server.requests).toHaveLength(2)
  })

  it('reports the timeout by its limit when every attempt is slow', async () => {
    const server = await serve(() => 'hang')
    const clock = new ManualTimerClock()
    const llm = llmFor(server, { clock, timeoutMs: 5_000, retryDelaysMs: [] })
    const call = rejection(llm.chat(ask))
    await eventually(() => server.requests.length === 1, 'the request')
    await clock.waitForTimer(5_000)
    clock.advance(5_000)
    const error = await call
    expect(error).toBeInstanceOf(AttemptTimeoutError)
    expect(error.message).toContain('no answer within 5000 ms')
  })

  it.each([
    ['mid-answer', 'drop' as const],
    ['before answering', 'reset' as const],
  ])('retries a connection dropped %s', async (_, drop) => {
    const server = await serve((_request, count) => (count === 1 ? drop : chatReply(DANA)))
    const clock = new ManualTimerClock()
    const call = llmFor(server, { clock }).chat(ask)
    await clock.waitForTimer(1_000)
    expect(server.requests).toHaveLength(1)
    clock.advance(1_000)
    expect((await call).content).toBe(DANA)
    expect(server.requests).toHaveLength(2)
  })

  it.each([
    ['drop' as const, 'dropped the connection mid-answer'],
    ['reset' as const, 'is unreachable'],
  ])('names a connection lost (%s) in the error once the retries are spent', async (drop, message) => {
    const server = await serve(() => drop)
    const error = await rejection(llmFor(server, { retryDelaysMs: [] }).chat(ask))
    expect(error).toBeInstanceOf(ServiceError)
    expect((error as ServiceError).retryable).toBe(true)
    expect(error.message).toContain(message)
  })

  it('opens the circuit after 5 consecutive failures, refuses at once, and half-opens after the cooldown', async () => {
    let healthy = false
    const server = await serve(() => (healthy ? chatReply(DANA) : { status: 503, text: 'model loading' }))
    const clock = new ManualTimerClock()
    const llm = llmFor(server, { clock })

    // First call: four attempts, with the 1, 2, 4 s backoff on the clock between them.
    const first = rejection(llm.chat(ask))
    for (const backoff of [1_000, 2_000, 4_000]) {
      await clock.waitForTimer(backoff)
      clock.advance(backoff)
    }
    expect((await first).message).toContain('gave up after 4 attempts')
    expect(server.requests).toHaveLength(4)

    // Second call: the fifth failure opens the circuit, and the retry after it is refused.
    const second = rejection(llm.chat(ask))
    await clock.waitForTimer(1_000)
    clock.advance(1_000)
    expect(await second).toBeInstanceOf(CircuitOpenError)
    expect(server.requests).toHaveLength(5)
    expect(llm.circuitState).toBe('open')

    // Open: refused at once, no request reaches the server.
    const refused = await rejection(llm.chat(ask))
    expect(refused).toBeInstanceOf(CircuitOpenError)
    expect(refused.message).toContain('circuit open after 5 consecutive failures')
    expect(server.requests).toHaveLength(5)

    // Cooldown over (60 s from the fifth failure, 1 s of which passed already): one trial passes.
    clock.advance(58_999)
    expect(llm.circuitState).toBe('open')
    clock.advance(1)
    expect(llm.circuitState).toBe('half-open')
    healthy = true
    expect((await llm.chat(ask)).content).toBe(DANA)
    expect(llm.circuitState).toBe('closed')
    expect(server.requests).toHaveLength(6)
  })

  it('holds the number of requests in flight to maxConcurrency', async () => {
    const server = await serve(async () => {
      await new Promise((resolve) => setTimeout(resolve, 15))
      return chatReply(DANA)
    })
    const llm = llmFor(server, { maxConcurrency: 2 })
    const answers = await Promise.all(Array.from({ length: 8 }, () => llm.chat(ask)))
    expect(answers.every((answer) => answer.content === DANA)).toBe(true)
    expect(server.requests).toHaveLength(8)
    expect(server.maxInFlight).toBe(2)
  })

  it('lets the caller cancel a call', async () => {
    const server = await serve(() => 'hang')
    const controller = new AbortController()
    const call = rejection(llmFor(server).chat({ ...ask, signal: controller.signal }))
    await eventually(() => server.requests.length === 1, 'the request')
    controller.abort(new Error('job cancelled'))
    expect((await call).message).toBe('job cancelled')
    expect(server.requests).toHaveLength(1)
  })

  it('lets a caller waiting for a slot give up at once, sending nothing', async () => {
    const server = await serve(() => 'hang')
    const llm = llmFor(server, { maxConcurrency: 1, retryDelaysMs: [] })
    const first = rejection(llm.chat(ask))
    await eventually(() => server.requests.length === 1, 'the first request')
    const controller = new AbortController()
    const queued = rejection(llm.chat({ ...ask, signal: controller.signal }))
    controller.abort(new Error('shutting down'))
    expect((await queued).message).toBe('shutting down')
    expect(server.requests).toHaveLength(1)
    await server.close()
    await first
  })

  it.each([
    ['no choices', { json: { choices: [] } }, 'no "choices"'],
    [
      'no text',
      { json: { choices: [{ message: { role: 'assistant', content: null } }] } },
      'no text content',
    ],
    ['a body that is not JSON', { text: 'Internal proxy page' }, 'not JSON'],
  ])('rejects an answer with %s without retrying', async (_, reply, message) => {
    const server = await serve(() => reply)
    const error = await rejection(llmFor(server, { clock: new ManualTimerClock() }).chat(ask))
    expect(error.message).toContain(message)
    expect(server.requests).toHaveLength(1)
  })

  it('rejects invalid options, naming the field', () => {
    const options = { baseUrl: 'http://127.0.0.1:1/v1', model: 'm' }
    expect(() => createOpenAiCompatibleLlm({ ...options, baseUrl: 'ftp://x' })).toThrow(/llm\.baseUrl/)
    expect(() => createOpenAiCompatibleLlm({ ...options, model: '' })).toThrow(/llm\.model/)
    const error = (() => {
      try {
        createOpenAiCompatibleLlm({ ...options, maxConcurrency: 65 })
      } catch (e) {
        return e
      }
    })()
    expect(error).toBeInstanceOf(ValidationError)
    expect((error as ValidationError).issues).toEqual([
      expect.objectContaining({ field: 'llm.maxConcurrency', limit: 64 }),
    ])
  })
})

describe('chatForObject over the HTTP provider', () => {
  it('asks again once after a malformed answer, then fails with the fields named', async () => {
    const server = await serve((_, count) =>
      chatReply(count === 1 ? '{"name": "Dana", "age": ' : '```json\n{"name": "Dana", "age": "34"}\n```'),
    )
    const error = await rejection(chatForObject(llmFor(server), ask, Person))
    expect(error).toBeInstanceOf(ModelAnswerError)
    expect((error as ModelAnswerError).issues.map((issue) => issue.field)).toEqual(['answer.age'])
    expect(server.requests).toHaveLength(2)
    const correction = server.requests[1]?.body.messages as { role: string; content: string }[]
    expect(correction.at(-2)).toEqual({ role: 'assistant', content: '{"name": "Dana", "age": ' })
    expect(correction.at(-1)?.content).toContain('answer is not valid JSON')
  })

  it('returns the corrected object when the second answer validates', async () => {
    const server = await serve((_, count) => chatReply(count === 1 ? 'Dana, 34' : DANA))
    const result = await chatForObject(llmFor(server), ask, Person)
    expect(result.value).toEqual({ name: 'Dana', age: 34 })
    expect(result.responses.map((response) => response.usage)).toEqual([
      { promptTokens: 12, completionTokens: 5 },
      { promptTokens: 12, completionTokens: 5 },
    ])
  })
})

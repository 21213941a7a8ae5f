import { CircuitOpenError } from '@engram/providers'
import {
  type EmbeddingServer,
  embeddingsReply,
  eventually,
  ManualTimerClock,
  rejection,
  startEmbeddingServer,
  vectorFor,
} from '@engram/providers/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { createOpenAIEmbedder } from './openai-embedder.ts'

const DIMENSIONS = 8

/** Records the backoff instead of waiting it out. */
function recordingSleep() {
  const waits: number[] = []
  const sleep = async (ms: number) => {
    waits.push(ms)
  }
  return { waits, sleep }
}

const servers: EmbeddingServer[] = []
async function serve(...args: Parameters<typeof startEmbeddingServer>) {
  const server = await startEmbeddingServer(...args)
  servers.push(server)
  return server
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

const inputs = (request: { body: { input?: string[] } }) => request.body.input ?? []

function closeTo(actual: Float32Array, expected: number[]) {
  expect(actual.length).toBe(expected.length)
  actual.forEach((value, i) => {
    expect(value).toBeCloseTo(expected[i] as number, 5)
  })
}

describe('createOpenAIEmbedder', () => {
  it('sends batches of batchSize and keeps input order when the server shuffles its answer', async () => {
    const server = await serve((request) => {
      const reply = embeddingsReply(inputs(request), DIMENSIONS) as { json: { data: unknown[] } }
      reply.json.data.reverse()
      return reply
    })
    const embedder = await createOpenAIEmbedder({
      baseUrl: server.baseUrl,
      model: 'nomic-embed-text',
      dimensions: DIMENSIONS,
    })
    const texts = Array.from({ length: 250 }, (_, i) => `memory number ${i}`)
    const vectors = await embedder.embed(texts)

    expect(server.requests.map((r) => inputs(r).length)).toEqual([100, 100, 50])
    expect(server.requests.flatMap(inputs)).toEqual(texts)
    expect(vectors).toHaveLength(250)
    texts.forEach((text, i) => {
      closeTo(vectors[i] as Float32Array, vectorFor(text, DIMENSIONS))
    })
    expect(embedder.model).toBe('openai:nomic-embed-text')
    expect(embedder.dimensions).toBe(DIMENSIONS)
  })

  it('honours a smaller batchSize and sends nothing for no texts', async () => {
    const server = await serve((request) => embeddingsReply(inputs(request), DIMENSIONS))
    const embedder = await createOpenAIEmbedder({
      baseUrl: `${server.baseUrl}/`,
      model: 'm',
      dimensions: DIMENSIONS,
      batchSize: 2,
    })
    expect(await embedder.embed([])).toEqual([])
    await embedder.embed(['a', 'b', 'c'])
    expect(server.requests.map((r) => inputs(r))).toEqual([['a', 'b'], ['c']])
    expect(server.requests.every((r) => r.path === '/v1/embeddings')).toBe(true)
  })

  it('sends the key as a Bearer token, the model, and the configured dimensions', async () => {
    const server = await serve((request) => embeddingsReply(inputs(request), DIMENSIONS))
    const embedder = await createOpenAIEmbedder({
      baseUrl: server.baseUrl,
      model: 'text-embedding-3-small',
      apiKey: 'sk-test-123',
      dimensions: DIMENSIONS,
    })
    // Configured dimensions need no probe.
    expect(server.requests).toHaveLength(0)
    await embedder.embed(['hello'])
    const [request] = server.requests
    expect(request?.headers.authorization).toBe('Bearer sk-test-123')
    expect(request?.headers['content-type']).toBe('application/json')
    expect(request?.body).toEqual({
      model: 'text-embedding-3-small',
      input: ['hello'],
      dimensions: DIMENSIONS,
    })
  })

  it('sends no authorization header without a key', async () => {
    const server = await serve((request) => embeddingsReply(inputs(request), DIMENSIONS))
    const embedder = await createOpenAIEmbedder({
      baseUrl: server.baseUrl,
      model: 'm',
      dimensions: DIMENSIONS,
    })
    await embedder.embed(['hello'])
    expect(server.requests[0]?.headers.authorization).toBeUndefined()
  })

  it('learns the dimensions from one probe call when none are configured', async () => {
    const server = await serve((request) => embeddingsReply(inputs(request), 13))
    const embedder = await createOpenAIEmbedder({ baseUrl: server.baseUrl, model: 'nomic-embed-text' })
    expect(embedder.dimensions).toBe(13)
    expect(server.requests).toHaveLength(1)
    expect(server.requests[0]?.body).not.toHaveProperty('dimensions')
    const [vector] = await embedder.embed(['later'])
    expect(vector).toHaveLength(13)
  })

  it('retries a 503 with the configured delays, then succeeds', async () => {
    const server = await serve((request, count) =>
      count <= 2 ? { status: 503, text: 'loading model' } : embeddingsReply(inputs(request), DIMENSIONS),
    )
    const { waits, sleep } = recordingSleep()
    const embedder = await createOpenAIEmbedder({
      baseUrl: server.baseUrl,
      model: 'm',
      dimensions: DIMENSIONS,
      sleep,
    })
    const [vector] = await embedder.embed(['hello'])
    closeTo(vector as Float32Array, vectorFor('hello', DIMENSIONS))
    expect(server.requests).toHaveLength(3)
    expect(waits).toEqual([1_000, 2_000])
  })

  it('retries 429 and gives up after four attempts, naming the status', async () => {
    const server = await serve(() => ({ status: 429, json: { error: 'slow down' } }))
    const { waits, sleep } = recordingSleep()
    const embedder = await createOpenAIEmbedder({
      baseUrl: server.baseUrl,
      model: 'm',
      dimensions: DIMENSIONS,
      sleep,
    })
    const error = await rejection(embedder.embed(['hello']))
    expect(error.message).toContain('HTTP 429')
    expect(error.message).toContain('gave up after 4 attempts')
    expect(server.requests).toHaveLength(4)
    expect(waits).toEqual([1_000, 2_000, 4_000])
  })

  it('does not retry a 400 and names the status in the error', async () => {
    const server = await serve(() => ({ status: 400, json: { error: { message: 'input too long' } } }))
    const { waits, sleep } = recordingSleep()
    const embedder = await createOpenAIEmbedder({
      baseUrl: server.baseUrl,
      model: 'm',
      dimensions: DIMENSIONS,
      sleep,
    })
    const error = await rejection(embedder.embed(['hello']))
    expect(error.message).toContain('HTTP 400')
    expect(error.message).toContain('input too long')
    expect(server.requests).toHaveLength(1)
    expect(waits).toEqual([])
  })

  it('retries when the server cannot be reached', async () => {
    const server = await serve(() => ({ status: 500 }))
    const baseUrl = server.baseUrl
    await server.close()
    const { waits, sleep } = recordingSleep()
    const error = await rejection(createOpenAIEmbedder({ baseUrl, model: 'm', sleep, retryDelaysMs: [5, 5] }))
    expect(error.message).toContain('unreachable')
    expect(error.message).toContain('ECONNREFUSED')
    expect(waits).toEqual([5, 5])
  })

  it('times out an attempt that gets no answer, on the injected clock, and retries it', async () => {
    const server = await serve(() => 'hang')
    const clock = new ManualTimerClock()
    const embedder = await createOpenAIEmbedder({
      baseUrl: server.baseUrl,
      model: 'm',
      dimensions: DIMENSIONS,
      timeoutMs: 5_000,
      retryDelaysMs: [1_000],
      clock,
    })
    const call = rejection(embedder.embed(['hello']))
    // Each attempt's timeout is moved past only once its request has reached the server.
    await eventually(() => server.requests.length === 1, 'the first request')
    await clock.waitForTimer(5_000)
    clock.advance(5_000)
    await clock.waitForTimer(1_000)
    clock.advance(1_000)
    await eventually(() => server.requests.length === 2, 'the retry')
    await clock.waitForTimer(5_000)
    clock.advance(5_000)
    const error = await call
    // The configured timeout is the one applied, not the 60 s default.
    expect(error.message).toContain('no answer within 5000 ms')
    expect(error.message).toContain('gave up after 2 attempts')
    expect(server.requests).toHaveLength(2)
  })

  it.each([
    ['too few vectors', () => ({ json: { data: [] } }), '0 embeddings for 1 inputs'],
    [
      'wrong dimensions',
      (input: string[]) => embeddingsReply(input, DIMENSIONS + 1),
      `has ${DIMENSIONS + 1} dimensions, expected ${DIMENSIONS}`,
    ],
    [
      'a non-number',
      (input: string[]) => ({
        json: { data: [{ index: 0, embedding: [...vectorFor(input[0] as string, DIMENSIONS - 1), null] }] },
      }),
      'non-finite value at position 7',
    ],
    ['no data', () => ({ json: { error: 'x' } }), 'no "data" array'],
    ['a bad index', () => ({ json: { data: [{ index: 3, embedding: [1] }] } }), 'index 3 is out of range'],
  ])('rejects an answer with %s, without retrying', async (_, reply, message) => {
    const server = await serve((request) => reply(inputs(request)))
    const { waits, sleep } = recordingSleep()
    const embedder = await createOpenAIEmbedder({
      baseUrl: server.baseUrl,
      model: 'm',
      dimensions: DIMENSIONS,
      sleep,
    })
    const error = await rejection(embedder.embed(['hello']))
    expect(error.message).toContain('invalid embeddings response')
    expect(error.message).toContain(message)
    expect(waits).toEqual([])
  })

  it('opens the circuit after 5 consecutive failures, fails fast, then lets one trial through', async () => {
    let healthy = false
    const server = await serve((request) =>
      healthy ? embeddingsReply(inputs(request), DIMENSIONS) : { status: 502, text: 'bad gateway' },
    )
    const clock = new ManualTimerClock()
    const embedder = await createOpenAIEmbedder({
      baseUrl: server.baseUrl,
      model: 'm',
      dimensions: DIMENSIONS,
      retryDelaysMs: [],
      clock,
    })
    for (let i = 0; i < 5; i++) expect((await rejection(embedder.embed(['x']))).message).toContain('HTTP 502')
    expect(server.requests).toHaveLength(5)

    // Open: no request reaches the server, and the error says why.
    const open = await rejection(embedder.embed(['x']))
    expect(open).toBeInstanceOf(CircuitOpenError)
    expect(open.message).toContain('circuit open after 5 consecutive failures')
    clock.advance(59_999)
    expect(await rejection(embedder.embed(['x']))).toBeInstanceOf(CircuitOpenError)
    expect(server.requests).toHaveLength(5)

    // Half-open: one trial; it fails, so the circuit opens again at once.
    clock.advance(1)
    expect((await rejection(embedder.embed(['x']))).message).toContain('HTTP 502')
    expect(server.requests).toHaveLength(6)
    expect(await rejection(embedder.embed(['x']))).toBeInstanceOf(CircuitOpenError)
    expect(server.requests).toHaveLength(6)

    // Next cooldown: the trial succeeds and the circuit closes.
    clock.advance(60_000)
    healthy = true
    expect(await embedder.embed(['x'])).toHaveLength(1)
    expect(await embedder.embed(['y'])).toHaveLength(1)
    expect(server.requests).toHaveLength(8)
  })

  it('stops retrying once the circuit opens mid-retry', async () => {
    const server = await serve(() => ({ status: 503 }))
    const { waits, sleep } = recordingSleep()
    const embedder = await createOpenAIEmbedder({
      baseUrl: server.baseUrl,
      model: 'm',
      dimensions: DIMENSIONS,
      sleep,
      clock: new ManualTimerClock(),
    })
    await rejection(embedder.embed(['x'])) // 4 attempts
    const error = await rejection(embedder.embed(['x'])) // the fifth attempt opens the circuit
    expect(error).toBeInstanceOf(CircuitOpenError)
    expect(server.requests).toHaveLength(5)
    expect(waits).toEqual([1_000, 2_000, 4_000, 1_000])
  })

  it('rejects invalid options, naming the field', async () => {
    await expect(createOpenAIEmbedder({ baseUrl: 'ftp://x', model: 'm' })).rejects.toThrow(/baseUrl/)
    await expect(
      createOpenAIEmbedder({ baseUrl: 'http://127.0.0.1:1/v1', model: 'm', batchSize: 0 }),
    ).rejects.toThrow(/batchSize/)
  })
})

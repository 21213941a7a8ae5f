import http from 'node:http'
import type { AddressInfo } from 'node:net'

/** One request as the server saw it. */
export interface RecordedRequest {
  method: string
  path: string
  headers: http.IncomingHttpHeaders
  /** Who sent it: the tests assert every request came over the loopback interface. */
  remoteAddress: string | undefined
  body: { model?: string; input?: string[]; dimensions?: number; [key: string]: unknown }
}

/**
 * What the handler wants sent back. `hang` keeps the connection open and never answers; `drop`
 * sends the status line and half a body, then destroys the socket (a server or proxy dying
 * mid-answer); `reset` destroys the socket before any byte of the answer.
 */
export type Reply =
  | { status?: number; json?: unknown; text?: string; headers?: Record<string, string> }
  | 'hang'
  | 'drop'
  | 'reset'

export interface OpenAiServer {
  /** e.g. http://127.0.0.1:41234/v1 */
  baseUrl: string
  requests: RecordedRequest[]
  /** Requests received and not yet answered, now and at the most so far. */
  readonly inFlight: number
  readonly maxInFlight: number
  close(): Promise<void>
}

/** Kept under its first name: the embedder's tests say what they serve. */
export type EmbeddingServer = OpenAiServer

/** A deterministic stand-in vector, so a test can tell which input a returned vector belongs to. */
export function vectorFor(text: string, dimensions: number): number[] {
  let h = 0x811c9dc5
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193)
  return Array.from({ length: dimensions }, (_, i) => ((h >>> (i % 24)) & 0xff) / 255 - 0.5 + i / 1_000)
}

/** The happy path of OpenAI's protocol: one vector per input, in order, with its index. */
export function embeddingsReply(input: readonly string[], dimensions: number, model = 'test-model'): Reply {
  return {
    json: {
      object: 'list',
      model,
      data: input.map((text, index) => ({
        object: 'embedding',
        index,
        embedding: vectorFor(text, dimensions),
      })),
      usage: { prompt_tokens: input.length, total_tokens: input.length },
    },
  }
}

/** A chat completion answering `content`, with the usage a server reports. */
export function chatReply(
  content: string | null,
  options: { model?: string; usage?: { prompt_tokens: number; completion_tokens: number } | null } = {},
): Reply {
  const usage = options.usage === undefined ? { prompt_tokens: 12, completion_tokens: 5 } : options.usage
  return {
    json: {
      id: 'chatcmpl-test',
      object: 'chat.completion',
      model: options.model ?? 'test-model',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      ...(usage ? { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } } : {}),
    },
  }
}

export const EMBEDDINGS_PATH = '/v1/embeddings'
export const CHAT_COMPLETIONS_PATH = '/v1/chat/completions'

/**
 * A real HTTP server on 127.0.0.1 speaking OpenAI's protocol at `path` (`POST /v1/embeddings` or
 * `/v1/chat/completions`): the client under test goes through sockets, headers and JSON exactly
 * as it would against Ollama or OpenAI. Any other path answers 404.
 */
export async function startOpenAiServer(
  path: string,
  handler: (request: RecordedRequest, count: number) => Reply | Promise<Reply>,
): Promise<OpenAiServer> {
  const requests: RecordedRequest[] = []
  let inFlight = 0
  let maxInFlight = 0
  const server = http.createServer(async (req, res) => {
    inFlight++
    maxInFlight = Math.max(maxInFlight, inFlight)
    // A hanging or dropped request leaves the count when its socket closes.
    let counted = true
    const settle = () => {
      if (counted) inFlight--
      counted = false
    }
    res.on('close', settle)
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const raw = Buffer.concat(chunks).toString('utf8')
    const recorded: RecordedRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      remoteAddress: req.socket.remoteAddress,
      body: raw ? JSON.parse(raw) : {},
    }
    requests.push(recorded)
    if (recorded.method !== 'POST' || recorded.path !== path) {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}')
      return
    }
    const reply = await handler(recorded, requests.length)
    if (reply === 'hang') return
    if (reply === 'reset') {
      req.socket.destroy()
      return
    }
    if (reply === 'drop') {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '400' })
      res.write('{"id":"chatcmpl-test","choices":[{"index":0,"message":{"role":"assist', () =>
        req.socket.destroy(),
      )
      return
    }
    const status = reply.status ?? 200
    const headers = reply.headers ?? {}
    if (reply.text !== undefined) {
      res.writeHead(status, { 'content-type': 'text/plain', ...headers }).end(reply.text)
    } else {
      res
        .writeHead(status, { 'content-type': 'application/json', ...headers })
        .end(JSON.stringify(reply.json ?? {}))
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    get inFlight() {
      return inFlight
    },
    get maxInFlight() {
      return maxInFlight
    },
    close: () =>
      new Promise<void>((resolve) => {
        // Hanging requests would keep close() waiting forever.
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

export function startEmbeddingServer(
  handler: (request: RecordedRequest, count: number) => Reply | Promise<Reply>,
): Promise<OpenAiServer> {
  return startOpenAiServer(EMBEDDINGS_PATH, handler)
}

export function startChatServer(
  handler: (request: RecordedRequest, count: number) => Reply | Promise<Reply>,
): Promise<OpenAiServer> {
  return startOpenAiServer(CHAT_COMPLETIONS_PATH, handler)
}

/**
 * A fetch that refuses any host but the loopback interface: a test handing it to a provider
 * proves no request of the test could reach the network, whatever URL a bug builds.
 */
export const loopbackOnlyFetch: typeof fetch = (input, init) => {
  const url = new URL(input instanceof Request ? input.url : String(input))
  if (url.hostname !== '127.0.0.1') {
    return Promise.reject(new Error(`test request to ${url.host} refused: only 127.0.0.1 is allowed`))
  }
  return fetch(input, init)
}

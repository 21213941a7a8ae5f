// Engram's default embedder served as OpenAI's `POST /v1/embeddings` on 127.0.0.1, for systems
// that only take an embedding service (mem0's `openai` provider, Engram's own OpenAI embedder).
// It runs in this process, on the same thread as the systems measured: a request costs the
// embedding itself plus JSON encoding and a loopback round trip, with no extra core to hide it.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Embedder } from '@engram/core'

export const EMBEDDING_SERVER_MODEL = 'engram-hashing-wordnet'

export interface EmbeddingServer {
  /** Up to and including /v1, as OpenAI clients take it. */
  baseUrl: string
  /** Requests served, by path: a chat completion would mean a peer called an LLM. */
  readonly requests: Record<string, number>
  close(): Promise<void>
}

function send(response: http.ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body)
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
  })
  response.end(text)
}

export async function startEmbeddingServer(embedder: Embedder): Promise<EmbeddingServer> {
  const requests: Record<string, number> = {}
  const server = http.createServer((request, response) => {
    const route = `${request.method} ${request.url}`
    requests[route] = (requests[route] ?? 0) + 1
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', async () => {
      if (request.method !== 'POST' || request.url !== '/v1/embeddings') {
        send(response, 404, {
          error: { message: `${route} is not served: embeddings only`, type: 'not_found' },
        })
        return
      }
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          input: string | string[]
          encoding_format?: 'float' | 'base64'
        }
        const input = typeof body.input === 'string' ? [body.input] : body.input
        const vectors = await embedder.embed(input)
        const base64 = body.encoding_format === 'base64'
        send(response, 200, {
          object: 'list',
          model: EMBEDDING_SERVER_MODEL,
          data: vectors.map((vector, index) => ({
            object: 'embedding',
            index,
            embedding: base64
              ? Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64')
              : Array.from(vector),
          })),
          usage: { prompt_tokens: 0, total_tokens: 0 },
        })
      } catch (error) {
        send(response, 400, { error: { message: String(error), type: 'invalid_request_error' } })
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => (error ? reject(error) : resolve()))
      }),
  }
}

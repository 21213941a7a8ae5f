import { timingSafeEqual } from 'node:crypto'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Plugin } from 'graphql-yoga'
import { bearerToken, resolveViewer } from '../auth.ts'
import type { Services } from '../services/services.ts'
import { METRICS_PATH, type MetricsRegistry } from './registry.ts'

const sameSecret = (given: string, expected: string) => {
  const a = Buffer.from(given)
  const b = Buffer.from(expected)
  return a.length === b.length && timingSafeEqual(a, b)
}

/**
 * `GET /metrics` on the main port: only for `Authorization: Bearer <ENGRAM_METRICS_TOKEN>` or the
 * admin key (401 otherwise: the figures describe the whole server). When ENGRAM_METRICS_BIND
 * serves them on a listener of their own, the main port has no /metrics at all (404).
 */
export function metricsRoute(
  metrics: MetricsRegistry,
  services: Services,
  options: { token?: string; servedElsewhere: boolean },
): Plugin {
  return {
    async onRequest({ url, request, endResponse, fetchAPI }) {
      if (url.pathname !== METRICS_PATH) return
      const reply = (status: number, body: string, headers: Record<string, string> = {}) =>
        endResponse(
          new fetchAPI.Response(body, { status, headers: { 'content-type': 'text/plain', ...headers } }),
        )
      if (options.servedElsewhere) return reply(404, 'Not found: /metrics is served on ENGRAM_METRICS_BIND\n')
      if (request.method !== 'GET') return reply(405, 'Only GET is served here\n', { allow: 'GET' })
      const bearer = bearerToken(request.headers.get('authorization'))
      const allowed =
        bearer !== null &&
        ((options.token !== undefined && sameSecret(bearer, options.token)) ||
          (await resolveViewer(services.agents, bearer, services.liveTokens))?.kind === 'admin')
      if (!allowed)
        return reply(
          401,
          'Unauthorized: send "Authorization: Bearer <ENGRAM_METRICS_TOKEN or the admin key>"\n',
          { 'www-authenticate': 'Bearer realm="metrics"' },
        )
      return reply(200, await metrics.registry.metrics(), { 'content-type': metrics.registry.contentType })
    },
  }
}

/** Parses ENGRAM_METRICS_BIND (`host:port`, `[::1]:9464`). */
export function parseBind(bind: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(bind)
  if (!match) throw new Error(`ENGRAM_METRICS_BIND: must be host:port, got "${bind}"`)
  return { host: (match[1] ?? match[2]) as string, port: Number(match[3]) }
}

/**
 * /metrics on a listener of its own (ENGRAM_METRICS_BIND), without a token: whoever can reach
 * that address (a private interface, a sidecar's localhost) may scrape. Anything else is 404.
 */
export async function listenMetrics(
  metrics: MetricsRegistry,
  bind: string,
): Promise<{ server: Server; port: number; close(): Promise<void> }> {
  const { host, port } = parseBind(bind)
  const server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0]
    if (path !== METRICS_PATH || req.method !== 'GET') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found\n')
      return
    }
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      (error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${String(error)}\n`),
    )
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve())
  })
  return {
    server,
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((done) => server.close(() => done())),
  }
}

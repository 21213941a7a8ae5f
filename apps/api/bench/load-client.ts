// The load bench's client side (split from load.ts): the forked server (load-server.ts) and the
// two ways of sending it requests, autocannon's closed loop and an even-rate open loop.
import { type ChildProcess, fork } from 'node:child_process'
import http from 'node:http'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import autocannon from 'autocannon'
import type { LoadServerCommand } from './load-server.ts'

const HERE = path.dirname(fileURLToPath(import.meta.url))
export const ADMIN_KEY = 'bench-admin-key-0123456789abcdef'

/** A command without its id (distributed over the union). */
type CommandBody = LoadServerCommand extends infer C ? (C extends unknown ? Omit<C, 'id'> : never) : never

export interface Server {
  port: number
  child: ChildProcess
  call<T>(command: CommandBody): Promise<T>
}

export function startServer(
  file: string,
  workers = 1,
  /** Settings of this server's environment beside the bench's own (a side of a comparison). */
  env: Record<string, string> = {},
  /** Another checkout's apps/api/bench (the commit before a change, as a side of a comparison). */
  benchDirectory = HERE,
): Promise<Server> {
  const child = fork(path.join(benchDirectory, 'load-server.ts'), [file, ADMIN_KEY, String(workers)], {
    cwd: path.resolve(benchDirectory, '..'),
    // ENGRAM_BENCH_PROFILE=DIR writes the server's CPU profile there (open it in Chrome DevTools).
    execArgv: [
      '--import',
      'tsx',
      '--expose-gc',
      ...(process.env.ENGRAM_BENCH_PROFILE
        ? ['--cpu-prof', `--cpu-prof-dir=${process.env.ENGRAM_BENCH_PROFILE}`]
        : []),
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, ...env },
  })
  let next = 0
  const waiting = new Map<number, (message: Record<string, unknown>) => void>()
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`load server exited with ${code}`)))
    child.on('message', (message: Record<string, unknown>) => {
      if (message.ready) {
        resolve({
          port: message.port as number,
          child,
          call<T>(command: CommandBody) {
            const id = next++
            return new Promise<T>((done, fail) => {
              waiting.set(id, (reply) =>
                reply.error ? fail(new Error(String(reply.error))) : done(reply as T),
              )
              child.send({ ...command, id })
            })
          },
        })
        return
      }
      const id = message.id as number
      waiting.get(id)?.(message)
      waiting.delete(id)
    })
  })
}

export interface RunResult {
  requests: number
  seconds: number
  latencies: number[]
  errors: number
}

/** One bounded autocannon run; every response's time kept for exact percentiles. */
export async function hammer(
  port: number,
  key: string,
  connections: number,
  seconds: number,
  body: () => unknown,
): Promise<RunResult> {
  const latencies: number[] = []
  let errors = 0
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: `http://127.0.0.1:${port}/graphql`,
        connections,
        duration: seconds,
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        requests: [
          {
            setupRequest: (request) => ({ ...request, body: JSON.stringify(body()) }),
            onResponse: (status, responseBody) => {
              // A typed error (a union member no fragment selects) comes back as {}.
              if (status !== 200 || responseBody.includes('"errors"') || responseBody.includes('{}')) errors++
            },
          },
        ],
      },
      (error, finished) => (error ? reject(error) : resolve(finished)),
    )
    instance.on('response', (_client, _status, _bytes, responseTime) => latencies.push(responseTime))
  })
  if (errors > 0 || result.non2xx > 0 || result.errors > 0) {
    throw new Error(
      `${errors} GraphQL errors, ${result.non2xx} non-2xx, ${result.errors} socket errors in ${result.requests.total} requests`,
    )
  }
  return { requests: latencies.length, seconds: result.duration, latencies, errors }
}

/**
 * Requests at an even rate whatever the answers' speed (open loop), as independent clients send
 * them, over up to `sockets` keep-alive connections. autocannon's overallRate is not that: each
 * connection sends its quota for the second as fast as it can, then waits for the next second, so
 * "2,000/s over 64 connections" keeps 64 requests queued for most of each second and measures that
 * queue. Latency counts from when a request was due, so a server falling behind cannot hide its
 * backlog (coordinated omission).
 */
export async function openLoop(
  port: number,
  key: string,
  rate: number,
  seconds: number,
  body: () => unknown,
  sockets: number,
): Promise<RunResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: sockets })
  const latencies: number[] = []
  const failures: string[] = []
  const total = Math.round(rate * seconds)
  const send = (due: number) =>
    new Promise<void>((resolve) => {
      const payload = JSON.stringify(body())
      const request = http.request(
        {
          agent,
          host: '127.0.0.1',
          port,
          path: '/graphql',
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(payload),
            authorization: `Bearer ${key}`,
          },
        },
        (response) => {
          let text = ''
          response.setEncoding('utf8')
          response.on('data', (chunk: string) => {
            text += chunk
          })
          response.on('end', () => {
            latencies.push(performance.now() - due)
            if (response.statusCode !== 200 || text.includes('"errors"') || text.includes('{}'))
              failures.push(`${response.statusCode}: ${text.slice(0, 200)}`)
            resolve()
          })
        },
      )
      request.on('error', (error) => {
        failures.push(String(error))
        resolve()
      })
      request.end(payload)
    })
  const started = performance.now()
  const pending: Promise<void>[] = []
  let sent = 0
  // Every millisecond (the timers' resolution), the requests due by then: 2 at 2,000/s.
  await new Promise<void>((resolve) => {
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - started) / 1_000) * rate))
      for (; sent < due; sent++) pending.push(send(started + (sent / rate) * 1_000))
      if (sent >= total) resolve()
      else setTimeout(tick, 1)
    }
    tick()
  })
  await Promise.all(pending)
  const elapsed = (performance.now() - started) / 1_000
  agent.destroy()
  if (failures.length > 0)
    throw new Error(`${failures.length} failed requests in ${total}, first: ${failures[0]}`)
  return { requests: latencies.length, seconds: elapsed, latencies, errors: 0 }
}

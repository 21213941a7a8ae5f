import { type ChildProcess, spawn } from 'node:child_process'
import fs from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { freePort } from '@engram/test-servers'

const API_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const SERVER_ENTRY = path.join(API_ROOT, 'src', 'server.ts')
// tsx's loader, resolved from the API package (where it is a dependency), not from the cwd.
const TSX_LOADER = pathToFileURL(createRequire(path.join(API_ROOT, 'package.json')).resolve('tsx')).href

/** One API process of the set. */
export interface Replica {
  index: number
  port: number
  pid: number
  url: string
  /** What the process printed (stdout and stderr), for a failing test's message. */
  output: string[]
  /** Whether it still runs (false once killed or exited). */
  alive(): boolean
}

export interface StartReplicasOptions {
  count: number
  /** The one database every replica opens (file: SQLite; postgres:// once that adapter lands). */
  databaseUrl: string
  /** The one Redis every replica connects to. */
  redisUrl: string
  /** ENGRAM_ADMIN_KEY of every replica (registered by the first to start). */
  adminKey: string
  /** More environment (lease TTLs and intervals for tests, ENGRAM_REDIS_PREFIX, ...). */
  env?: Record<string, string>
  /** Longest wait for every /health to answer (ms). */
  startTimeoutMs?: number
}

export interface GraphQLAnswer {
  data?: Record<string, any>
  errors?: { message: string; extensions?: Record<string, unknown> }[]
}

/**
 * N real API processes (`node --import tsx src/server.ts`, the production entry), each on its own
 * port of 127.0.0.1, all on the same DATABASE_URL and REDIS_URL, as replicas behind a load
 * balancer. Test-only: `gql` spreads requests round-robin, `on(i)` targets one replica, `kill(i)`
 * sends SIGKILL (no shutdown hook runs: leases are not released, connections just drop).
 */
export class ReplicaSet {
  private nextIndex = 0

  private constructor(
    readonly replicas: Replica[],
    private readonly children: ChildProcess[],
    private readonly adminKey: string,
  ) {}

  static async start(options: StartReplicasOptions): Promise<ReplicaSet> {
    const ports = await Promise.all(Array.from({ length: options.count }, () => freePort()))
    const children: ChildProcess[] = []
    const replicas = ports.map((port, index) => {
      const child = spawn(process.execPath, ['--import', TSX_LOADER, SERVER_ENTRY], {
        cwd: API_ROOT,
        env: {
          PATH: process.env.PATH ?? '',
          HOME: process.env.HOME ?? '',
          NODE_ENV: 'test',
          DATABASE_URL: options.databaseUrl,
          REDIS_URL: options.redisUrl,
          ENGRAM_ADMIN_KEY: options.adminKey,
          API_HOST: '127.0.0.1',
          API_PORT: String(port),
          // Two cores shared with the other replicas: no extraction threads, no formation load.
          ENGRAM_EXTRACTION_WORKERS: '0',
          ...options.env,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      children.push(child)
      const output: string[] = []
      child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()))
      child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()))
      let exited = false
      child.once('exit', () => {
        exited = true
      })
      return {
        index,
        port,
        pid: child.pid as number,
        url: `http://127.0.0.1:${port}`,
        output,
        alive: () => !exited,
      }
    })
    const set = new ReplicaSet(replicas, children, options.adminKey)
    try {
      await Promise.all(
        replicas.map((replica) => set.waitForHealth(replica, options.startTimeoutMs ?? 180_000)),
      )
    } catch (error) {
      await set.stop()
      throw error
    }
    return set
  }

  /** The next replica in turn (round-robin over those still alive). */
  next(): Replica {
    const alive = this.replicas.filter((replica) => replica.alive())
    if (alive.length === 0) throw new Error('no replica is alive')
    const replica = alive[this.nextIndex % alive.length] as Replica
    this.nextIndex++
    return replica
  }

  /** A GraphQL request to the next replica in turn (the admin key unless another is given). */
  gql(query: string, variables: Record<string, unknown> = {}, key = this.adminKey): Promise<GraphQLAnswer> {
    return this.on(this.next().index, query, variables, key)
  }

  /** A GraphQL request to replica `index`. */
  async on(
    index: number,
    query: string,
    variables: Record<string, unknown> = {},
    key = this.adminKey,
  ): Promise<GraphQLAnswer> {
    const replica = this.replicas[index] as Replica
    const response = await fetch(`${replica.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ query, variables }),
    })
    return (await response.json()) as GraphQLAnswer
  }

  /** kill -9: the process ends at once, with nothing released. Resolves once it has exited. */
  async kill(index: number): Promise<void> {
    const child = this.children[index] as ChildProcess
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
    child.kill('SIGKILL')
    await exited
  }

  /** The replica whose process id is `pid` (lease holders are named `<host>:<pid>:<id>`). */
  byPid(pid: number): Replica | undefined {
    return this.replicas.find((replica) => replica.pid === pid)
  }

  /** Stops every replica still running (SIGTERM, SIGKILL after 5 s). */
  async stop(): Promise<void> {
    await Promise.all(
      this.children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return
        const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
        child.kill('SIGTERM')
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
        await exited
        clearTimeout(timer)
      }),
    )
  }

  private async waitForHealth(replica: Replica, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      if (!replica.alive())
        throw new Error(`replica ${replica.index} exited while starting:\n${replica.output.join('')}`)
      try {
        const response = await fetch(`${replica.url}/health`)
        const body = (await response.json()) as { status?: string; redis?: string }
        if (response.status === 200 && body.redis === 'up') return
      } catch {
        // Not listening yet.
      }
      if (Date.now() > deadline)
        throw new Error(
          `replica ${replica.index} not healthy within ${timeoutMs} ms:\n${replica.output.join('')}`,
        )
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
}

/** A fresh SQLite file for the replicas, unless ENGRAM_REPLICAS_DATABASE_URL names another database. */
export function replicaDatabaseUrl(directory: string): string {
  const given = process.env.ENGRAM_REPLICAS_DATABASE_URL
  if (given) return given
  fs.mkdirSync(directory, { recursive: true })
  return `file:${path.join(directory, 'engram.db')}`
}

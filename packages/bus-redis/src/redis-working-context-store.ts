import { UnavailableError, type WorkingContextState } from '@engram/core'
import type { Logger, WorkingContextStore } from '@engram/engine'
import type { Redis } from 'ioredis'
import { failingFast } from './redis-connection.ts'
import { escapeGlob, workingContextKey } from './redis-keys.ts'

/** A command slower than this fails the operation (UNAVAILABLE); Redis answers in well under 1 ms. */
export const DEFAULT_WORKING_CONTEXT_COMMAND_TIMEOUT_MS = 2_000

export interface RedisWorkingContextStoreOptions {
  url: string
  prefix: string
  log: Logger
  reconnectMaxDelayMs?: number | undefined
  commandTimeoutMs?: number | undefined
}

/**
 * KEYS ctx; ARGV known version: `=` when the held version is the caller's, the version and the
 * context otherwise, nothing when none is held.
 */
const READ = `
local held = redis.call('HMGET', KEYS[1], 'v', 'data')
if not held[1] then return false end
if held[1] == ARGV[1] then return '=' end
return { held[1], held[2] }
`

/**
 * KEYS ctx; ARGV expected version ('' for none held), new version, context JSON, ttl ms: the
 * compare-and-set every change goes through, so a replica writing over a version it did not read
 * is refused (0) and reads again.
 */
const WRITE = `
local held = redis.call('HGET', KEYS[1], 'v')
if (held or '') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'data', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return 1
`

interface WorkingContextCommands {
  engramWcRead(key: string, known: string): Promise<string | [string, string] | null>
  engramWcWrite(key: string, expected: string, version: string, data: string, ttl: number): Promise<number>
}

/**
 * Spec 002's L1 on Redis, shared by the replicas: one hash per agent, `<prefix>:wc:<agent>`, with
 * the context's version and its JSON, expiring `ttlMs` after the last write (PX). Every change is
 * a compare-and-set on the version in one Lua script. This is the working context's only shared
 * copy, not a cache of the database: Redis unreachable fails the call with UNAVAILABLE.
 */
export class RedisWorkingContextStore implements WorkingContextStore {
  private readonly redis: Redis & WorkingContextCommands
  private readonly prefix: string
  private readonly log: Logger
  private outage = false

  constructor(options: RedisWorkingContextStoreOptions) {
    this.prefix = options.prefix
    this.log = options.log
    this.redis = failingFast(options.url, {
      reconnectMaxDelayMs: options.reconnectMaxDelayMs,
      commandTimeoutMs: options.commandTimeoutMs ?? DEFAULT_WORKING_CONTEXT_COMMAND_TIMEOUT_MS,
    }) as Redis & WorkingContextCommands
    this.redis.defineCommand('engramWcRead', { numberOfKeys: 1, lua: READ })
    this.redis.defineCommand('engramWcWrite', { numberOfKeys: 1, lua: WRITE })
    this.redis.on('error', (error) => this.down(error))
  }

  status(): 'up' | 'down' {
    return this.redis.status === 'ready' ? 'up' : 'down'
  }

  close(): void {
    this.redis.disconnect()
  }

  async read(
    agentId: string,
    knownVersion: string | null,
  ): Promise<WorkingContextState | 'unchanged' | null> {
    const held = await this.run(() => this.redis.engramWcRead(this.key(agentId), knownVersion ?? ''))
    if (held === null) return null
    if (held === '=') return 'unchanged'
    const [, data] = held as [string, string]
    return JSON.parse(data) as WorkingContextState
  }

  async write(
    agentId: string,
    expectedVersion: string | null,
    next: WorkingContextState,
    ttlMs: number,
  ): Promise<boolean> {
    const written = await this.run(() =>
      this.redis.engramWcWrite(
        this.key(agentId),
        expectedVersion ?? '',
        next.version ?? '',
        JSON.stringify(next),
        ttlMs,
      ),
    )
    return written === 1
  }

  async remove(agentId: string): Promise<void> {
    await this.run(() => this.redis.unlink(this.key(agentId)))
  }

  async forgetAgent(agentId: string | null): Promise<void> {
    if (agentId !== null) {
      await this.remove(agentId)
      return
    }
    // Every agent's (a restore replaced them all): SCAN, never KEYS, which would block the server.
    await this.run(async () => {
      let cursor = '0'
      do {
        const [next, keys] = await this.redis.scan(
          cursor,
          'MATCH',
          `${escapeGlob(this.prefix)}:wc:*`,
          'COUNT',
          500,
        )
        cursor = next
        if (keys.length > 0) await this.redis.unlink(...keys)
      } while (cursor !== '0')
    })
  }

  async keysOf(agentId: string): Promise<number | null> {
    try {
      return await this.run(() => this.redis.exists(this.key(agentId)))
    } catch {
      return null
    }
  }

  private key(agentId: string): string {
    return workingContextKey(this.prefix, agentId)
  }

  private async run<T>(command: () => Promise<T>): Promise<T> {
    if (this.redis.status !== 'ready') {
      this.down(new Error(`connection ${this.redis.status}`))
      throw new UnavailableError('the working context store (Redis) is unreachable; try again shortly')
    }
    try {
      const result = await command()
      if (this.outage) {
        this.outage = false
        this.log.info('[redis] the working context store answers again')
      }
      return result
    } catch (error) {
      this.down(error)
      throw new UnavailableError('the working context store (Redis) did not answer; try again shortly')
    }
  }

  private down(error: unknown): void {
    if (this.outage) return
    this.outage = true
    this.log.warn(`[redis] the working context store is unreachable: ${(error as Error).message}`)
  }
}

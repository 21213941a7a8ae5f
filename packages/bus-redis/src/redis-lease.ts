import type { Lease } from '@engram/engine'
import type { Redis } from 'ioredis'
import { failingFast } from './redis-connection.ts'

/**
 * Renewal and release compare the holder and act in one step, inside Redis: a GET then a
 * PEXPIRE/DEL from the client could act on a lease that expired and was taken by another replica
 * in between.
 */
const RENEW_SCRIPT = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`
const RELEASE_SCRIPT = `if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0`

export interface RedisLeaseOptions {
  /** `redis://` or `rediss://` (REDIS_URL). */
  url: string
  /** Keys are named under it (ENGRAM_REDIS_PREFIX): `<prefix>:lease:<key>`. */
  prefix: string
  /** The reconnection backoff's ceiling (ms); it doubles from 50 ms up to this. */
  reconnectMaxDelayMs?: number
}

type LeaseCommands = Redis & {
  renewLease(key: string, holder: string, ttlMs: number): Promise<number>
  releaseLease(key: string, holder: string): Promise<number>
}

/** The Redis key of an engine lease key: `<prefix>:lease:<key>`, e.g. `engram:lease:optimizer:agent-1`. */
export function leaseKey(prefix: string, key: string): string {
  return `${prefix}:lease:${key}`
}

/**
 * The engine's Lease port on Redis, shared by every replica: `SET key holder NX PX ttl` takes a
 * free key, and the compare-and-set scripts above renew or release it only for its holder. Expiry
 * is Redis's own (PX), so a holder that dies without releasing loses its keys after the TTL, with
 * no clock of ours involved. While Redis is unreachable every call fails at once (no offline
 * queue): the optimizer then runs nothing rather than risk running what another replica runs.
 */
export class RedisLease implements Lease {
  private readonly redis: LeaseCommands

  constructor(private readonly options: RedisLeaseOptions) {
    this.redis = failingFast(options.url, options) as LeaseCommands
    // Failures are reported by the calls that fail; ioredis would otherwise log each attempt.
    this.redis.on('error', () => {})
    this.redis.defineCommand('renewLease', { numberOfKeys: 1, lua: RENEW_SCRIPT })
    this.redis.defineCommand('releaseLease', { numberOfKeys: 1, lua: RELEASE_SCRIPT })
  }

  async acquire(key: string, holder: string, ttlMs: number): Promise<boolean> {
    await this.ready()
    const taken = await this.redis.set(this.keyOf(key), holder, 'PX', ttlMs, 'NX')
    if (taken === 'OK') return true
    // Held already: granted again (with a fresh TTL) only to its own holder.
    return this.renew(key, holder, ttlMs)
  }

  async renew(key: string, holder: string, ttlMs: number): Promise<boolean> {
    await this.ready()
    return (await this.redis.renewLease(this.keyOf(key), holder, ttlMs)) === 1
  }

  async release(key: string, holder: string): Promise<boolean> {
    await this.ready()
    return (await this.redis.releaseLease(this.keyOf(key), holder)) === 1
  }

  /** The holder of a key now (null: free); for /health-style reports and tests. */
  async holderOf(key: string): Promise<string | null> {
    await this.ready()
    return this.redis.get(this.keyOf(key))
  }

  /** How long the key's lease has left (ms; null: nobody holds it). */
  async remainingMs(key: string): Promise<number | null> {
    await this.ready()
    const left = await this.redis.pttl(this.keyOf(key))
    return left >= 0 ? left : null
  }

  close(): void {
    this.redis.disconnect()
  }

  private keyOf(key: string): string {
    return leaseKey(this.options.prefix, key)
  }

  /**
   * Waits for the first connection only: without an offline queue, a command sent while ioredis
   * is still connecting would fail although Redis is fine. Later outages fail calls at once.
   */
  private async ready(): Promise<void> {
    const status = this.redis.status
    if (status !== 'wait' && status !== 'connecting' && status !== 'connect') return
    await new Promise<void>((resolve) => {
      const done = () => {
        this.redis.off('ready', done)
        this.redis.off('error', done)
        this.redis.off('end', done)
        clearTimeout(timer)
        resolve()
      }
      const timer = setTimeout(done, 5_000)
      timer.unref?.()
      // The first error (refused, unknown host) ends the wait too: the call then fails at once.
      this.redis.once('ready', done)
      this.redis.once('error', done)
      this.redis.once('end', done)
    })
  }
}

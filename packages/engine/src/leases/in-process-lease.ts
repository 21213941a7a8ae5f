import type { Clock } from '../ports/clock.ts'
import type { Lease } from '../ports/lease.ts'

interface Held {
  holder: string
  expiresAt: number
}

/**
 * Leases held in this process, timed by the engine's clock. It is the default: one process has
 * one optimizer, which is then always granted its leases (today's behaviour, a map lookup per
 * agent and cycle). Engines sharing one instance in a process (tests) see real exclusivity,
 * renewal and expiry on a clock moved by hand. Replicas in several processes need a shared
 * lease store (REDIS_URL: @engram/bus-redis's RedisLease).
 */
export class InProcessLease implements Lease {
  private readonly leases = new Map<string, Held>()

  constructor(private readonly clock: Clock) {}

  async acquire(key: string, holder: string, ttlMs: number): Promise<boolean> {
    const held = this.live(key)
    if (held && held.holder !== holder) return false
    this.leases.set(key, { holder, expiresAt: this.clock.now().getTime() + ttlMs })
    return true
  }

  async renew(key: string, holder: string, ttlMs: number): Promise<boolean> {
    const held = this.live(key)
    if (!held || held.holder !== holder) return false
    held.expiresAt = this.clock.now().getTime() + ttlMs
    return true
  }

  async release(key: string, holder: string): Promise<boolean> {
    const held = this.live(key)
    if (!held || held.holder !== holder) return false
    this.leases.delete(key)
    return true
  }

  /** The key's lease unless it lapsed (a lapsed one is gone, as Redis drops an expired key). */
  private live(key: string): Held | undefined {
    const held = this.leases.get(key)
    if (held && held.expiresAt <= this.clock.now().getTime()) {
      this.leases.delete(key)
      return undefined
    }
    return held
  }
}

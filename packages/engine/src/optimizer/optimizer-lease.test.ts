import { createTokenCounter, ManualTimerClock, ValidationError } from '@engram/core'
import { describe, expect, it } from 'vitest'
import { InProcessEventBus } from '../events/in-process-event-bus.ts'
import { InProcessLease } from '../leases/in-process-lease.ts'
import type { Lease } from '../ports/lease.ts'
import type { Logger } from '../ports/logger.ts'
import type { OptimizerRepository } from '../ports/optimizer.ts'
import { optimizerOnMemory } from '../testing/index.ts'
import {
  LEASE_WAIT_POLL_MS,
  OptimizerLeaseError,
  OptimizerService,
  optimizerLeaseKey,
} from './optimizer-service.ts'

const TTL_MS = 30_000
const RENEW_MS = 10_000

/** Holds a replica's next read of an agent's entries until released: a run caught mid-way. */
class Gate {
  private waiting: (() => void) | null = null
  private closed = false
  reached = false
  close() {
    this.closed = true
  }
  open() {
    this.closed = false
    this.waiting?.()
  }
  pass(): Promise<void> {
    if (!this.closed) return Promise.resolve()
    this.reached = true
    return new Promise((resolve) => {
      this.waiting = resolve
    })
  }
}

/**
 * Replicas of the optimizer (one OptimizerService each, as in separate processes) on one shared
 * storage and one lease store, on a clock moved by hand (a requested run's lease poll waits on
 * it too). Each may be held mid-run by its gate.
 */
function replicasOnMemory(count: number, leaseStore?: Lease) {
  const clock = new ManualTimerClock('2026-01-15T10:00:00.000Z')
  const { storage, optimizer: replica, addAgents } = optimizerOnMemory(clock)
  const lease = leaseStore ?? new InProcessLease(clock)
  const replicas = Array.from({ length: count }, () => {
    const gate = new Gate()
    const log = quiet()
    // The shared repository, its entries read held by the gate.
    const entries: OptimizerRepository['entries'] = async (scope, sessionId) => {
      await gate.pass()
      return storage.optimizer.entries(scope, sessionId)
    }
    const store = new Proxy(storage.optimizer, {
      get(target, property) {
        if (property === 'entries') return entries
        const value = Reflect.get(target, property, target)
        return typeof value === 'function' ? value.bind(target) : value
      },
    })
    const optimizer = replica(
      { intervalMs: 0, leaseTtlMs: TTL_MS, leaseRenewMs: RENEW_MS },
      { store, log, lease },
    )
    return { optimizer, gate, log }
  })
  const advance = (ms: number) => clock.advance(ms)
  /** Runs per agent, from the snapshots recorded (every replica records in the shared storage). */
  async function runsPerAgent(): Promise<Record<string, number>> {
    const counts: Record<string, number> = {}
    for (const snapshot of await storage.optimizer.snapshots(null, 100))
      counts[snapshot.agentId] = (counts[snapshot.agentId] ?? 0) + 1
    return counts
  }
  return { replicas, lease, advance, addAgents, runsPerAgent, clock, storage }
}

function quiet(): Logger & { warnings: string[]; errors: unknown[] } {
  const warnings: string[] = []
  const errors: unknown[] = []
  return {
    warnings,
    errors,
    info() {},
    warn: (message: string) => warnings.push(String(message)),
    error: (_message: string, error?: unknown) => errors.push(error),
  }
}

/** A few turns of the event loop: what a timer's wake-up started (in memory) has run by then. */
async function turns(n = 5) {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve))
}

/** Resolves once `done` holds, letting timers and promises run in between (no wait over 20 ms). */
async function until(done: () => boolean): Promise<void> {
  for (let i = 0; i < 250 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 20))
  if (!done()) throw new Error('condition not met')
}

describe('the optimizer schedule across replicas sharing a lease store', () => {
  it('gives each agent to one replica: the other skips it, cycle after cycle', async () => {
    const { replicas, addAgents, runsPerAgent, advance } = replicasOnMemory(2)
    const [a, b] = replicas.map((r) => r.optimizer) as [OptimizerService, OptimizerService]
    await addAgents('agent-1', 'agent-2')
    await a.runAll()
    await b.runAll()
    expect(await runsPerAgent()).toEqual({ 'agent-1': 1, 'agent-2': 1 })
    expect(a.heldLeases().sort()).toEqual([optimizerLeaseKey('agent-1'), optimizerLeaseKey('agent-2')])
    expect(b.heldLeases()).toEqual([])
    // The next cycles: A keeps its agents (each cycle extends its leases), B still runs none.
    for (let cycle = 0; cycle < 3; cycle++) {
      advance(RENEW_MS)
      await b.runAll()
      await a.runAll()
    }
    expect(await runsPerAgent()).toEqual({ 'agent-1': 4, 'agent-2': 4 })
  })

  it('keeps an agent while the holder renews, even with no cycle for longer than the TTL', async () => {
    const { replicas, addAgents, runsPerAgent, advance } = replicasOnMemory(2)
    const [a, b] = replicas.map((r) => r.optimizer) as [OptimizerService, OptimizerService]
    await addAgents('agent-1')
    await a.runAll()
    // Renewed before each renewal interval ends (by the clock): 40 s without a cycle.
    for (let step = 0; step < 4; step++) {
      advance(RENEW_MS)
      await a.renewLeases()
      await b.runAll()
    }
    expect(await runsPerAgent()).toEqual({ 'agent-1': 1 })
    expect(b.heldLeases()).toEqual([])
    // Not yet due: a renewal asked early changes nothing (the lease still ends 30 s after the last).
    advance(RENEW_MS - 1)
    await a.renewLeases()
    advance(TTL_MS - RENEW_MS + 2)
    await b.runAll()
    expect(await runsPerAgent()).toEqual({ 'agent-1': 2 })
    expect(b.heldLeases()).toEqual([optimizerLeaseKey('agent-1')])
  })

  it('hands a stopped holder’s agents to another replica once its lease expires, with no duplicate run', async () => {
    const { replicas, addAgents, runsPerAgent, advance } = replicasOnMemory(3)
    const [a, b, c] = replicas.map((r) => r.optimizer) as [
      OptimizerService,
      OptimizerService,
      OptimizerService,
    ]
    await addAgents('agent-1', 'agent-2', 'agent-3')
    await a.runAll()
    // A dies here: no release, no renewal. Until its leases lapse, nobody else runs its agents.
    advance(TTL_MS - 1)
    await b.runAll()
    await c.runAll()
    expect(await runsPerAgent()).toEqual({ 'agent-1': 1, 'agent-2': 1, 'agent-3': 1 })
    advance(1)
    await b.runAll()
    await c.runAll()
    expect(await runsPerAgent()).toEqual({ 'agent-1': 2, 'agent-2': 2, 'agent-3': 2 })
    expect(b.heldLeases()).toHaveLength(3)
    expect(c.heldLeases()).toEqual([])
    // Were A only stalled, it finds its leases gone and lets them be.
    await a.renewLeases()
    expect(a.heldLeases()).toEqual([])
    expect(replicas[0]?.log.warnings.join('\n')).toMatch(/lease optimizer:agent-1 was lost/)
  })

  it('applies nothing from a replica that stalled mid-run past its TTL while another took the agent over', async () => {
    const { replicas, addAgents, runsPerAgent, advance } = replicasOnMemory(2)
    const [a, b] = replicas.map((r) => r.optimizer) as [OptimizerService, OptimizerService]
    const gateA = replicas[0]?.gate as Gate
    await addAgents('agent-1')
    gateA.close()
    const stalled = a.runAll()
    await until(() => gateA.reached)
    advance(TTL_MS)
    await b.runAll()
    expect(await runsPerAgent()).toEqual({ 'agent-1': 1 })
    gateA.open()
    await stalled
    expect(await runsPerAgent()).toEqual({ 'agent-1': 1 })
    expect(replicas[0]?.log.errors[0]).toBeInstanceOf(OptimizerLeaseError)
    expect(String(replicas[0]?.log.errors[0])).toMatch(/lease of agent agent-1 was lost/)
  })

  it('applies nothing from a scheduled run whose agent passed to another replica while it ran', async () => {
    const { replicas, addAgents, runsPerAgent, lease } = replicasOnMemory(2)
    const [a, b] = replicas.map((r) => r.optimizer) as [OptimizerService, OptimizerService]
    const gateA = replicas[0]?.gate as Gate
    await addAgents('agent-1')
    gateA.close()
    const running = a.runAll()
    await until(() => gateA.reached)
    // A's claim on the agent lapses (as after a stall) while its run still holds the run lease:
    // B takes the agent, and finds the run going (it skips, no overlap).
    await lease.release(optimizerLeaseKey('agent-1'), a.holder)
    await b.runAll()
    expect(b.heldLeases()).toEqual([optimizerLeaseKey('agent-1')])
    expect(await runsPerAgent()).toEqual({})
    gateA.open()
    await running
    // A's run is not applied: B's next cycle, right after, is then not a second run in a row.
    expect(await runsPerAgent()).toEqual({})
    expect(String(replicas[0]?.log.errors[0])).toMatch(/lease of agent agent-1 was lost/)
    await b.runAll()
    expect(await runsPerAgent()).toEqual({ 'agent-1': 1 })
  })

  it('makes a requested run wait for the other replica’s run of the agent, then run after it', async () => {
    const { replicas, addAgents, runsPerAgent, clock, advance } = replicasOnMemory(2)
    const [a, b] = replicas.map((r) => r.optimizer) as [OptimizerService, OptimizerService]
    const gateA = replicas[0]?.gate as Gate
    await addAgents('agent-1', 'agent-2')
    gateA.close()
    const scheduled = a.run('agent-1')
    await until(() => gateA.reached)
    let requestedDone = false
    const requested = b.run('agent-1').finally(() => {
      requestedDone = true
    })
    // Another agent is not held up by it.
    expect((await b.run('agent-2')).agentId).toBe('agent-2')
    // B polls the lease on the clock: three polls pass, A still runs, B still waits.
    for (let poll = 0; poll < 3; poll++) {
      await turns()
      expect(clock.pendingDelays()).toEqual([LEASE_WAIT_POLL_MS])
      advance(LEASE_WAIT_POLL_MS)
    }
    await turns()
    expect(requestedDone).toBe(false)
    expect(await runsPerAgent()).toEqual({ 'agent-2': 1 })
    gateA.open()
    await scheduled
    // A is done and let the agent go; B takes it at its next poll, not before.
    await turns()
    expect(requestedDone).toBe(false)
    advance(LEASE_WAIT_POLL_MS)
    const [first, second] = await Promise.all([scheduled, requested])
    expect(first.id).not.toBe(second.id)
    expect(await runsPerAgent()).toEqual({ 'agent-1': 2, 'agent-2': 1 })
  })

  it('fails a requested run with a CONFLICT when the other replica’s run outlasts one TTL', async () => {
    const { replicas, addAgents, advance } = replicasOnMemory(2)
    const [a, b] = replicas.map((r) => r.optimizer) as [OptimizerService, OptimizerService]
    const gateA = replicas[0]?.gate as Gate
    await addAgents('agent-1')
    gateA.close()
    const scheduled = a.run('agent-1')
    await until(() => gateA.reached)
    const requested = b.run('agent-1').catch((error: unknown) => error)
    // A is alive: it renews its run's lease, so the lease never lapses while B waits.
    for (let step = 0; step < 3; step++) {
      advance(RENEW_MS)
      await a.renewLeases()
    }
    // B's next poll after one TTL of waiting gives up.
    let settled = false
    void requested.finally(() => {
      settled = true
    })
    for (let poll = 0; poll < 10 && !settled; poll++) {
      advance(LEASE_WAIT_POLL_MS)
      await turns()
    }
    const error = await requested
    expect(error).toBeInstanceOf(OptimizerLeaseError)
    expect(error).toMatchObject({ code: 'CONFLICT', agentId: 'agent-1' })
    expect(String(error)).toMatch(/running on another replica/)
    gateA.open()
    expect((await scheduled).agentId).toBe('agent-1')
  })

  it('runs its schedule on the clock: a cycle once each interval has passed, none after stop', async () => {
    const clock = new ManualTimerClock('2026-01-15T10:00:00.000Z')
    const { optimizer, addAgents, storage } = optimizerOnMemory(clock)
    const replica = optimizer({ intervalMs: 60_000, leaseTtlMs: TTL_MS, leaseRenewMs: RENEW_MS })
    await addAgents('agent-1')
    const runs = async () => (await storage.optimizer.snapshots(null, 100)).length
    replica.start()
    clock.advance(59_999)
    await turns()
    expect(await runs()).toBe(0)
    clock.advance(1)
    for (let turn = 0; turn < 50 && (await runs()) === 0; turn++) await turns(1)
    expect(await runs()).toBe(1)
    await replica.stop()
    clock.advance(600_000)
    await turns()
    expect(await runs()).toBe(1)
    expect(clock.pendingDelays()).toEqual([])
  })

  it('releases its agents on stop, so another replica takes them at its next cycle', async () => {
    const { replicas, addAgents, runsPerAgent } = replicasOnMemory(2)
    const [a, b] = replicas.map((r) => r.optimizer) as [OptimizerService, OptimizerService]
    await addAgents('agent-1')
    await a.runAll()
    await a.stop()
    expect(a.heldLeases()).toEqual([])
    await b.runAll()
    expect(await runsPerAgent()).toEqual({ 'agent-1': 2 })
  })

  it('lets an agent go once it has no entries left', async () => {
    const { replicas, addAgents, lease, storage } = replicasOnMemory(1)
    const a = replicas[0]?.optimizer as OptimizerService
    await addAgents('agent-1', 'agent-2')
    await a.runAll()
    expect(await lease.acquire(optimizerLeaseKey('agent-1'), 'another replica', TTL_MS)).toBe(false)
    for (const entry of await storage.repositories.memoryEntries.list('agent-1', null))
      await storage.repositories.memoryEntries.delete('agent-1', entry.id)
    await a.runAll()
    expect(a.heldLeases()).toEqual([optimizerLeaseKey('agent-2')])
    expect(await lease.acquire(optimizerLeaseKey('agent-1'), 'another replica', TTL_MS)).toBe(true)
  })

  it('skips a cycle, warning once, when the lease store cannot be reached; a requested run goes on without a lease', async () => {
    const unreachable = () => Promise.reject(new Error('connect ECONNREFUSED'))
    const down: Lease = { acquire: unreachable, renew: unreachable, release: unreachable }
    const { replicas, addAgents, runsPerAgent } = replicasOnMemory(1, down)
    const { optimizer, log } = replicas[0] as (typeof replicas)[number]
    await addAgents('agent-1', 'agent-2')
    await optimizer.runAll()
    expect(await runsPerAgent()).toEqual({})
    expect(log.warnings).toEqual(['[optimizer] leases unavailable, cycle skipped: connect ECONNREFUSED'])
    // Degraded, as the API is without Redis: the request is served, and says so in the log.
    expect((await optimizer.run('agent-1')).agentId).toBe('agent-1')
    expect(await runsPerAgent()).toEqual({ 'agent-1': 1 })
    expect(log.warnings[1]).toMatch(/requested run of agent agent-1 goes on without one/)
    expect(optimizer.heldLeases()).toEqual([])
  })

  it('refuses a renewal interval that is not below the TTL, naming the setting and the limit', () => {
    const make = (leaseTtlMs: number, leaseRenewMs: number) =>
      new OptimizerService(
        Object.create(null),
        { now: () => new Date() },
        createTokenCounter(),
        Object.create(null),
        Object.create(null),
        new InProcessEventBus(),
        { intervalMs: 0, snapshotHistoryLimit: 10, leaseTtlMs, leaseRenewMs },
      )
    let refused: unknown
    try {
      make(1_000, 1_000)
    } catch (error) {
      refused = error
    }
    expect(refused).toBeInstanceOf(ValidationError)
    expect((refused as ValidationError).issues).toEqual([
      expect.objectContaining({ field: 'optimizer.leaseRenewMs', limit: 999 }),
    ])
    expect(() => make(1_000, 999)).not.toThrow()
  })
})

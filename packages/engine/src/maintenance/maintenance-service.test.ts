import { type Clock, ConflictError, createTokenCounter, ValidationError } from '@engram/core'
import { describe, expect, it } from 'vitest'
import { createEngine } from '../engine.ts'
import { InProcessLease } from '../leases/in-process-lease.ts'
import { createInMemoryStorage } from '../testing/index.ts'

const DAY = 86_400_000

function movableClock(start: string) {
  let now = new Date(start)
  const clock: Clock = { now: () => now }
  return { clock, move: (ms: number) => (now = new Date(now.getTime() + ms)) }
}

function engineOn(clock: Clock, storage = createInMemoryStorage(clock), lease = new InProcessLease(clock)) {
  return createEngine({
    storage,
    clock,
    lease,
    tokenCounter: createTokenCounter(),
    log: { info() {}, warn() {}, error() {}, debug() {} } as never,
    maintenance: { retentionDays: 10 },
  })
}

async function talk(engine: ReturnType<typeof engineOn>, agentId: string, conversationId: string) {
  await engine.storage.repositories.agents.upsert(agentId, null)
  await engine.sessions.addMessage(agentId, conversationId, {
    role: 'user',
    content: `hello from ${conversationId}`,
  })
}

describe('maintenance on the in-memory storage', () => {
  it('removes conversations stored more than retentionDays ago: one day under kept, one day over removed', async () => {
    const { clock, move } = movableClock('2026-03-01T12:00:00Z')
    const engine = engineOn(clock)
    await talk(engine, 'a', 'old')
    move(DAY)
    await talk(engine, 'a', 'recent')
    // 'old' was stored 11 days ago, 'recent' 10 days ago (exactly the limit: kept).
    move(10 * DAY)
    const dry = await engine.maintenance.runNow({ dryRun: true })
    expect(dry).toMatchObject({ trigger: 'MANUAL', dryRun: true, status: 'SUCCEEDED' })
    expect(dry.removed).toEqual({ conversations: 1, messages: 1, summaries: 0 })
    expect(await engine.sessions.find('a', 'old')).not.toBeNull()
    const run = await engine.maintenance.runNow({ dryRun: false })
    expect(run.removed.conversations).toBe(1)
    expect(await engine.sessions.find('a', 'old')).toBeNull()
    expect(await engine.sessions.find('a', 'recent')).not.toBeNull()
  })

  it("applies an agent's own retention, validated", async () => {
    const { clock, move } = movableClock('2026-03-01T12:00:00Z')
    const engine = engineOn(clock)
    await talk(engine, 'a', 'c')
    await talk(engine, 'b', 'c')
    expect(await engine.maintenance.updateAgentSettings('a', { retentionDays: 2 })).toEqual({
      retentionDays: 2,
      effectiveRetentionDays: 2,
    })
    await expect(engine.maintenance.updateAgentSettings('a', { retentionDays: 0 })).rejects.toBeInstanceOf(
      ValidationError,
    )
    move(3 * DAY)
    const run = await engine.maintenance.runNow({ dryRun: false })
    expect(run.removed.conversations).toBe(1)
    expect(await engine.sessions.find('a', 'c')).toBeNull()
    expect(await engine.sessions.find('b', 'c')).not.toBeNull()
    expect(await engine.maintenance.updateAgentSettings('a', { retentionDays: null })).toEqual({
      retentionDays: null,
      effectiveRetentionDays: 10,
    })
  })

  it('runs each cron slot once, the first scheduled run dry, on the moved clock', async () => {
    const { clock, move } = movableClock('2026-03-01T02:00:00Z')
    const storage = createInMemoryStorage(clock)
    const lease = new InProcessLease(clock)
    // Two processes on one store.
    const first = engineOn(clock, storage, lease)
    const second = engineOn(clock, storage, lease)
    expect(await first.maintenance.tick()).toBeNull()
    const status = await first.maintenance.status()
    expect(status.nextScheduledRun?.toISOString()).toBe('2026-03-01T03:00:00.000Z')
    expect(status.nextScheduledRunDry).toBe(true)
    move(60 * 60_000)
    const [a, b] = await Promise.all([first.maintenance.tick(), second.maintenance.tick()])
    const ran = [a, b].filter((run) => run !== null)
    expect(ran).toHaveLength(1)
    expect(ran[0]).toMatchObject({ trigger: 'SCHEDULED', dryRun: true, status: 'SUCCEEDED' })
    expect(ran[0]?.slot?.toISOString()).toBe('2026-03-01T03:00:00.000Z')
    expect(await second.maintenance.tick()).toBeNull()
    move(DAY)
    const next = await second.maintenance.tick()
    expect(next).toMatchObject({ dryRun: false, trigger: 'SCHEDULED' })
    expect(next?.slot?.toISOString()).toBe('2026-03-02T03:00:00.000Z')
    expect((await first.maintenance.runs(0, 10)).totalCount).toBe(2)
  })

  it('refuses a run while another holds the lease', async () => {
    const { clock } = movableClock('2026-03-01T02:00:00Z')
    const lease = new InProcessLease(clock)
    const engine = engineOn(clock, createInMemoryStorage(clock), lease)
    await lease.acquire('maintenance', 'another replica', 60_000)
    await expect(engine.maintenance.runNow({ dryRun: true })).rejects.toBeInstanceOf(ConflictError)
  })
})

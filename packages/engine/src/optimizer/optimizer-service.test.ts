import { describe, expect, it } from 'vitest'
import { AgentWrites } from '../agents/agent-writes.ts'
import type { SnapshotEvent } from '../ports/event-bus.ts'
import { optimizerOnMemory } from '../testing/index.ts'

/** The optimizer on the in-memory storage: no database, the same use case the API runs on SQLite. */
function optimizerOnTestClock() {
  let now = new Date('2026-01-15T10:00:00.000Z')
  const clock = { now: () => new Date(now) }
  const { storage, events, engine, optimizer: replica } = optimizerOnMemory(clock)
  const writes = new AgentWrites()
  const optimizer = replica({ intervalMs: 0 }, { writes })
  const advance = (ms: number) => {
    now = new Date(now.getTime() + ms)
  }
  return { storage, events, engine, optimizer, writes, advance, clock }
}

describe('OptimizerService on the in-memory storage', () => {
  it('runs, records and publishes a snapshot, and reports it in the status', async () => {
    const { storage, events, optimizer, writes, clock } = optimizerOnTestClock()
    await storage.repositories.agents.upsert('a', null)
    for (let i = 0; i < 5; i++)
      await storage.repositories.memoryEntries.create('a', {
        type: 'short_term',
        role: 'user',
        content: `note ${i} about the garden`,
        tokenCount: 6,
        relevance: 0.5,
        timestamp: clock.now(),
      })
    const published = events.subscribe('optimizer:snapshot')[Symbol.asyncIterator]()
    const version = writes.version('a')
    const [first, shared] = await Promise.all([optimizer.run('a'), optimizer.run('a')])
    // Concurrent requests share one run.
    expect(shared).toBe(first)
    expect(((await published.next()).value as SnapshotEvent).id).toBe(first.id)
    expect(writes.version('a')).not.toBe(version)
    expect(first).toMatchObject({ agentId: 'a', snapshot: { timestamp: clock.now() } })
    expect(await optimizer.snapshots('a', 10)).toEqual([first])
    const status = await optimizer.status('a')
    expect(status).toMatchObject({ lastRunAt: clock.now(), intervalMs: 0, totalOptimizations: 1 })
    expect((await optimizer.status('b')).lastRunAt).toBeNull()
  })

  it('runs every agent with entries in a cycle, and keeps no redundancy join once forgotten', async () => {
    const { storage, optimizer, advance, clock } = optimizerOnTestClock()
    for (const agent of ['a', 'b', 'idle']) await storage.repositories.agents.upsert(agent, null)
    for (const agent of ['a', 'b'])
      await storage.repositories.memoryEntries.create(agent, {
        type: 'short_term',
        role: 'user',
        content: 'hello there',
        tokenCount: 2,
        relevance: 0.5,
        timestamp: clock.now(),
      })
    await optimizer.runAll()
    advance(1_000)
    expect((await optimizer.snapshots(null, 10)).map((s) => s.agentId).sort()).toEqual(['a', 'b'])
    expect(optimizer.cachedJoins('a')).toBe(1)
    optimizer.forget('a')
    expect(optimizer.cachedJoins('a')).toBe(0)
    expect(optimizer.cachedJoins('b')).toBe(1)
  })
})

import { ManualTimerClock } from '@engram/core'
import { describe, expect, it } from 'vitest'
import type { RecalledMemoryItem } from '../ports/recall-sources.ts'
import type { SearchMemories } from './collaborators.ts'
import { AccessBuffer, AccessFlushConfigSchema } from './search-access.ts'

// Search's memory accesses off the request path: what the hits show, when the store is written,
// and that nothing of a deleted memory or agent is written or kept.

class Clock {
  at = new Date('2026-03-01T12:00:00Z').getTime()
  now = () => new Date(this.at)
}

/** A few turns of the event loop: a flush its timer started has run by then (in memory). */
async function turns(n = 5) {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve))
}

function item(id: string, accessCount = 0): RecalledMemoryItem {
  return { id, accessCount, lastAccessedAt: null } as RecalledMemoryItem
}

function setUp(flushIntervalMs = 1_000, maxPending = 100) {
  const clock = new Clock()
  const writes: { agentId: string; ids: number[] }[] = []
  const memories: SearchMemories = {
    settings: async () => {
      throw new Error('not used')
    },
    recordAccess: async (agentId, ids) => {
      writes.push({ agentId, ids: [...ids] })
      return ids.map((id) => ({ ...item(String(id), 7), lastAccessedAt: clock.now() }))
    },
  }
  const buffer = new AccessBuffer(
    memories,
    clock,
    AccessFlushConfigSchema.parse({ flushIntervalMs, maxPending }),
  )
  return { clock, writes, buffer }
}

describe('AccessBuffer', () => {
  it('shows each hit counted at once and writes nothing until the interval has passed on the clock', async () => {
    const { clock, writes, buffer } = setUp()
    const [first] = await buffer.record('agent-a', [item('1', 4)])
    expect(first).toMatchObject({ id: '1', accessCount: 5, lastAccessedAt: clock.now() })
    // Found again before a flush: the store's 4, the pending one and this one.
    expect((await buffer.record('agent-a', [item('1', 4)]))[0]?.accessCount).toBe(6)
    expect(writes).toEqual([])
    expect(buffer.pendingOf('agent-a', '1')).toBe(2)

    clock.at += 1_000
    await buffer.record('agent-b', [item('2')])
    await buffer.flush()
    // One call per count: memory 1 was found three times, 2 once.
    expect(writes).toEqual([
      { agentId: 'agent-a', ids: [1] },
      { agentId: 'agent-a', ids: [1] },
      { agentId: 'agent-b', ids: [2] },
    ])
    expect(buffer.pendingOf('agent-a', '1')).toBe(0)
  })

  it('flushes at once past maxPending, and writes within the search at interval 0', async () => {
    const full = setUp(60_000, 2)
    await full.buffer.record('agent-a', [item('1')])
    await turns()
    expect(full.writes).toEqual([])
    // The second pending pair reaches the cap: written at once, long before the interval.
    await full.buffer.record('agent-a', [item('2')])
    await turns()
    expect(full.writes).toEqual([{ agentId: 'agent-a', ids: [1, 2] }])

    const direct = setUp(0)
    const [hit] = await direct.buffer.record('agent-a', [item('3')])
    expect(direct.writes).toEqual([{ agentId: 'agent-a', ids: [3] }])
    // The row as the store returned it.
    expect(hit?.accessCount).toBe(7)
  })

  it('never writes an access of a deleted memory or agent, and holds nothing of them', async () => {
    const { writes, buffer } = setUp()
    await buffer.record('agent-a', [item('1'), item('2')])
    await buffer.record('agent-b', [item('3')])
    await buffer.record('agent-c', [item('4')])
    buffer.forget('agent-a', ['1'])
    buffer.forget('agent-b')
    expect(buffer.pendingOf('agent-a', '1')).toBe(0)
    expect(buffer.pendingOf('agent-b', '3')).toBe(0)
    await buffer.stop()
    expect(writes).toEqual([
      { agentId: 'agent-a', ids: [2] },
      { agentId: 'agent-c', ids: [4] },
    ])
    buffer.forget()
    await buffer.record('agent-d', [item('5')])
    buffer.forget()
    await buffer.flush()
    expect(writes).toHaveLength(2)
  })

  it('flushes on its started timer once the interval has passed on the clock, and not after stop', async () => {
    const time = new ManualTimerClock('2026-03-01T12:00:00Z')
    const writes: number[][] = []
    const memories: SearchMemories = {
      settings: async () => {
        throw new Error('not used')
      },
      recordAccess: async (_agentId, ids) => {
        writes.push([...ids])
        return []
      },
    }
    const buffer = new AccessBuffer(memories, time, AccessFlushConfigSchema.parse({ flushIntervalMs: 1_000 }))
    buffer.start()
    await buffer.record('agent-a', [item('1')])
    // An idle server: no search comes to find the interval passed; the timer writes it.
    time.advance(999)
    await turns()
    expect(writes).toEqual([])
    time.advance(1)
    await turns()
    expect(writes).toEqual([[1]])
    await buffer.record('agent-a', [item('2')])
    await buffer.stop()
    expect(writes).toEqual([[1], [2]])
    await buffer.record('agent-a', [item('3')])
    time.advance(10_000)
    await turns()
    expect(writes).toEqual([[1], [2]])
    expect(time.pendingDelays()).toEqual([])
  })

  it('refuses an interval or a cap out of bounds', () => {
    expect(() => AccessFlushConfigSchema.parse({ flushIntervalMs: -1 })).toThrow()
    expect(() => AccessFlushConfigSchema.parse({ maxPending: 0 })).toThrow()
    expect(AccessFlushConfigSchema.parse({})).toEqual({ flushIntervalMs: 1_000, maxPending: 10_000 })
  })
})

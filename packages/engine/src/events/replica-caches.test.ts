import { type Clock, createTokenCounter } from '@engram/core'
import { describe, expect, it } from 'vitest'
import { createEngine } from '../engine.ts'
import type { CacheInvalidateEvent } from '../ports/event-bus.ts'
import { SILENT_LOGGER } from '../ports/logger.ts'
import { createInMemoryStorage } from '../testing/index.ts'
import { InProcessEventBus } from './in-process-event-bus.ts'

const clock: Clock = { now: () => new Date('2026-01-15T10:00:00.000Z') }

/** Two engines on one store and one bus: the bus stands in for Redis carrying events between replicas. */
function twoReplicas() {
  const storage = createInMemoryStorage(clock)
  const events = new InProcessEventBus()
  const replica = () =>
    createEngine({
      storage,
      clock,
      tokenCounter: createTokenCounter('heuristic'),
      events,
      log: SILENT_LOGGER,
      replicas: { invalidateCaches: true },
    })
  return { a: replica(), b: replica(), events }
}

/** Lets queued microtasks (the tick's announcements, the bus's delivery) run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0))

describe('cache invalidation across replicas (cache:invalidate)', () => {
  it("moves another replica's write versions and incarnations, never its own twice", async () => {
    const { a, b } = twoReplicas()
    const before = { version: a.writes.version('x'), incarnation: a.writes.incarnation('x') }
    b.writes.touch('x')
    await settle()
    expect(a.writes.version('x')).not.toBe(before.version)
    expect(a.writes.incarnation('x')).toBe(before.incarnation)
    expect(a.replicas?.applied).toBe(1)
    // B's own event came back to B too (the bus delivers locally): skipped.
    expect(b.replicas?.applied).toBe(0)

    b.lifecycle.ended('x')
    await settle()
    expect(a.writes.incarnation('x')).not.toBe(before.incarnation)
    // A applied them quietly: nothing went back to B.
    expect(b.replicas?.applied).toBe(0)

    const all = a.writes.incarnation('y')
    b.writes.touchAll()
    await settle()
    expect(a.writes.incarnation('y')).not.toBe(all)
  })

  it('announces an agent once per tick, as the largest change', async () => {
    const { a, b, events } = twoReplicas()
    const seen: CacheInvalidateEvent[] = []
    const iterator = events.subscribe('cache:invalidate')[Symbol.asyncIterator]()
    const reading = (async () => {
      for (;;) {
        const next = await iterator.next()
        if (next.done) return
        seen.push(next.value)
      }
    })()
    b.writes.touch('x')
    b.search.forgetAgent('x')
    b.writes.touch('x')
    b.writes.touch('z')
    await settle()
    expect(
      seen.map(({ agentId, change, origin }) => ({ agentId, change, mine: origin === b.replicas?.origin })),
    ).toEqual([
      { agentId: 'x', change: 'reset', mine: true },
      { agentId: 'z', change: 'write', mine: true },
    ])
    await iterator.return?.()
    await reading
    await a.replicas?.stop()
    await b.replicas?.stop()
  })

  it('drops the sessions another replica changed', async () => {
    const { a, b } = twoReplicas()
    await a.storage.repositories.agents.upsert('x', null)
    await a.sessions.addMessage('x', 'c', { role: 'user', content: 'hello' })
    expect(a.sessions.cachedCount('x')).toBe(1)
    await b.sessions.delete('x', 'c')
    // What every door's mutation does when it ends (operations.ts): the agent's rows changed.
    b.writes.touch('x')
    await settle()
    expect(a.sessions.cachedCount('x')).toBe(0)
    // A makes the conversation again instead of writing into the deleted session.
    await a.sessions.addMessage('x', 'c', { role: 'user', content: 'again' })
    expect((await a.sessions.find('x', 'c'))?.messageCount).toBe(1)
  })

  it("follows another replica's settings: formation switched back on there queues extraction here", async () => {
    const { a, b } = twoReplicas()
    await a.storage.repositories.agents.upsert('x', null)
    const session = { id: 's', scope: 'x', conversationId: 'c' } as Parameters<typeof a.formation.jobsFor>[2]
    await a.formation.updateSettings('x', { enabled: false })
    expect(a.formation.jobsFor('x', [1], session)).toEqual([])
    await b.formation.updateSettings('x', { enabled: true })
    b.writes.touch('x')
    await settle()
    expect(a.formation.jobsFor('x', [1], session)).toHaveLength(1)
  })

  it('keeps its settings when another replica only stores turns, and drops them when that replica saves settings', async () => {
    const { a, b } = twoReplicas()
    await a.storage.repositories.agents.upsert('x', null)
    const session = { id: 's', scope: 'x', conversationId: 'c' } as Parameters<typeof a.formation.jobsFor>[2]
    await a.formation.updateSettings('x', { enabled: false })
    // A turn stored on B: A still knows formation is off for x (forgetting it queued extraction
    // for every turn until the settings were read again).
    b.writes.touch('x')
    await settle()
    expect(a.replicas?.applied).toBe(1)
    expect(a.formation.jobsFor('x', [1], session)).toEqual([])
    // B saves settings (no door's touch after it): A drops what it kept and follows them.
    await b.formation.updateSettings('x', { enabled: true })
    await settle()
    expect(a.formation.jobsFor('x', [1], session)).toHaveLength(1)
  })

  it('is not wired without the option: a single process announces nothing', async () => {
    const storage = createInMemoryStorage(clock)
    const events = new InProcessEventBus()
    const engine = createEngine({ storage, clock, tokenCounter: createTokenCounter('heuristic'), events })
    expect(engine.replicas).toBeNull()
    expect(events.subscriberCount('cache:invalidate')).toBe(0)
  })
})

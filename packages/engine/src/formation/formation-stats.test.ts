import type { Clock, LlmProvider } from '@engram/core'
import { describe, expect, it } from 'vitest'
import { InProcessEventBus } from '../events/in-process-event-bus.ts'
import { SILENT_LOGGER } from '../ports/logger.ts'
import { InMemoryJobQueue } from '../testing/in-memory-job-queue.ts'
import type { FormationActivityEvent } from './formation-activity.ts'
import { FormationActivityTracker } from './formation-activity.ts'
import { extractJob } from './formation-jobs.ts'
import { FormationStats, MAX_FAILURE_REASON_CHARS } from './formation-stats.ts'

const t0 = new Date('2026-01-15T10:00:00.000Z')
const at = (ms: number) => new Date(t0.getTime() + ms)

describe('FormationStats', () => {
  it('counts calls, successes and failures per agent and kind, with the average duration', () => {
    const stats = new FormationStats()
    stats.record('a', 'extraction', { ok: true }, 100, at(1))
    stats.record('a', 'extraction', { ok: true }, 300, at(2))
    stats.record('a', 'extraction', { ok: false, reason: 'model answered 503' }, 200, at(3))
    stats.record('a', 'summary', { ok: true }, 40, at(4))
    stats.record('b', 'profile', { ok: false, reason: 'other agent' }, 10, at(5))
    const [extraction, summary, profile] = stats.of('a')
    expect(extraction).toEqual({
      kind: 'extraction',
      calls: 3,
      successes: 2,
      failures: 1,
      totalDurationMs: 600,
      averageDurationMs: 200,
      lastRunAt: at(3),
      lastFailure: { reason: 'model answered 503', at: at(3) },
    })
    expect(summary).toMatchObject({
      calls: 1,
      successes: 1,
      failures: 0,
      averageDurationMs: 40,
      lastFailure: null,
    })
    // B's failure is B's: A's profile counters stay at zero.
    expect(profile).toEqual({
      kind: 'profile',
      calls: 0,
      successes: 0,
      failures: 0,
      totalDurationMs: 0,
      averageDurationMs: 0,
      lastRunAt: null,
      lastFailure: null,
    })
    expect(stats.of('b')[2]).toMatchObject({ calls: 1, failures: 1, lastFailure: { reason: 'other agent' } })
  })

  it('keeps the last failure after later successes, with its reason cut to the limit', () => {
    const stats = new FormationStats()
    stats.record('a', 'profile', { ok: false, reason: 'x'.repeat(2_000) }, 5, at(1))
    stats.record('a', 'profile', { ok: true }, 5, at(2))
    const profile = stats.of('a')[2]
    expect(profile?.lastRunAt).toEqual(at(2))
    expect(profile?.lastFailure?.at).toEqual(at(1))
    expect(profile?.lastFailure?.reason).toHaveLength(MAX_FAILURE_REASON_CHARS)
  })

  it('counts a negative duration (a clock set back) as zero', () => {
    const stats = new FormationStats()
    stats.record('a', 'summary', { ok: true }, -50, at(1))
    expect(stats.of('a')[1]).toMatchObject({ calls: 1, totalDurationMs: 0, averageDurationMs: 0 })
  })

  it('keeps at most maxAgents agents, forgetting the one idle the longest', () => {
    const stats = new FormationStats(2)
    stats.record('a', 'extraction', { ok: true }, 1, at(1))
    stats.record('b', 'extraction', { ok: true }, 1, at(2))
    // A works again: B is now the one idle the longest.
    stats.record('a', 'extraction', { ok: true }, 1, at(3))
    stats.record('c', 'extraction', { ok: true }, 1, at(4))
    expect(stats.agentCount).toBe(2)
    expect(stats.of('a')[0]?.calls).toBe(2)
    expect(stats.of('b')[0]?.calls).toBe(0)
    expect(stats.of('c')[0]?.calls).toBe(1)
    expect(() => new FormationStats(0)).toThrow(/maxAgents/)
  })

  it("forgets a deleted agent's counters, or every agent's", () => {
    const stats = new FormationStats()
    stats.record('a', 'summary', { ok: true }, 1, at(1))
    stats.record('b', 'summary', { ok: true }, 1, at(1))
    stats.forget('a')
    expect(stats.of('a')[1]?.calls).toBe(0)
    expect(stats.of('b')[1]?.calls).toBe(1)
    stats.forget()
    expect(stats.agentCount).toBe(0)
  })
})

describe('FormationActivityTracker', () => {
  function setup(llm: LlmProvider | null = null) {
    let now = t0.getTime()
    const clock: Clock = { now: () => new Date(now) }
    const events = new InProcessEventBus()
    const queue = new InMemoryJobQueue(clock)
    const stats = new FormationStats()
    const tracker = new FormationActivityTracker({ stats, clock, events, queue, log: SILENT_LOGGER, llm })
    const received: FormationActivityEvent[] = []
    const iterator = events.subscribe('formation:activity')[Symbol.asyncIterator]()
    const next = async () => {
      const { value } = await iterator.next()
      received.push(value as FormationActivityEvent)
      return value as FormationActivityEvent
    }
    return { tracker, queue, stats, next, advance: (ms: number) => (now += ms), received }
  }

  it('measures a unit on the clock, counts it and publishes it with the queue depth', async () => {
    const { tracker, queue, next, advance } = setup()
    await queue.enqueue([extractJob('a', 'c1', at(60_000)), extractJob('a', 'c2', at(60_000))])
    await queue.enqueue([extractJob('b', 'c3', at(60_000))])
    const event = next()
    const value = await tracker.track('a', 'extraction', async () => {
      advance(250)
      return 42
    })
    expect(value).toBe(42)
    expect(await event).toEqual({
      agentId: 'a',
      kind: 'extraction',
      outcome: 'success',
      reason: null,
      durationMs: 250,
      at: at(250),
      // A's two queued extractions, not B's.
      queueDepth: 2,
    })
    const activity = await tracker.activity('a', 'offline')
    expect(activity.work[0]).toMatchObject({ calls: 1, successes: 1, averageDurationMs: 250 })
    expect(activity.queue).toEqual([
      { kind: 'extraction', jobKind: 'extract', pending: 2, running: 0, failed: 0 },
      { kind: 'summary', jobKind: 'summarize', pending: 0, running: 0, failed: 0 },
      { kind: 'profile', jobKind: 'profile', pending: 0, running: 0, failed: 0 },
    ])
    expect(activity.circuitState).toBeNull()
  })

  it('counts a failed unit with its reason, publishes it and rethrows', async () => {
    const { tracker, next, stats } = setup()
    const event = next()
    await expect(
      tracker.track('a', 'summary', async () => {
        throw new Error('model timed out')
      }),
    ).rejects.toThrow('model timed out')
    expect(await event).toMatchObject({
      agentId: 'a',
      kind: 'summary',
      outcome: 'failure',
      reason: 'model timed out',
    })
    expect(stats.of('a')[1]).toMatchObject({
      calls: 1,
      failures: 1,
      lastFailure: { reason: 'model timed out' },
    })
  })

  it("reads the model's circuit state when the adapter has one", async () => {
    const llm = {
      model: 'm',
      circuitState: 'open' as const,
      chat: async () => ({ content: '{}', model: 'm' }),
    }
    const { tracker } = setup(llm)
    expect((await tracker.activity('a', 'llm')).circuitState).toBe('open')
  })
})

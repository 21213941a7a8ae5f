import type { Clock } from '@engram/core'
import { describe, expect, it } from 'vitest'
import { ScheduledJobs } from './scheduled-jobs.ts'

const START = new Date('2026-01-15T10:00:00.000Z').getTime()

function notes(granularityMs = 500, capacity?: number) {
  let at = START
  const clock: Clock = { now: () => new Date(at) }
  const scheduled = new ScheduledJobs(clock, granularityMs, capacity)
  return { scheduled, advance: (ms: number) => (at += ms), at: (ms: number) => new Date(START + ms) }
}

describe('ScheduledJobs (what this process knows of its debounced jobs)', () => {
  it('covers a run-at within the granularity after a committed one, and nothing once it is due', () => {
    const { scheduled, advance, at } = notes()
    expect(scheduled.covers('a', 's1', 'extract:c1', at(5_000))).toBe(false)
    scheduled.committed('a', 's1', 'extract:c1', at(5_000))
    expect(scheduled.covers('a', 's1', 'extract:c1', at(5_000))).toBe(true)
    expect(scheduled.covers('a', 's1', 'extract:c1', at(5_499))).toBe(true)
    // Past the granularity: the job must move.
    expect(scheduled.covers('a', 's1', 'extract:c1', at(5_500))).toBe(false)
    // Another key, session or agent is another job.
    expect(scheduled.covers('a', 's1', 'extract:c2', at(5_000))).toBe(false)
    expect(scheduled.covers('a', 's2', 'extract:c1', at(5_000))).toBe(false)
    expect(scheduled.covers('b', 's1', 'extract:c1', at(5_000))).toBe(false)
    // Due: a worker may have taken it, so the note stands for nothing.
    advance(5_000)
    expect(scheduled.covers('a', 's1', 'extract:c1', at(5_100))).toBe(false)
    expect(scheduled.size).toBe(0)
  })

  it('trusts a job written inside a transaction only once the write is confirmed', () => {
    const { scheduled, at } = notes()
    scheduled.writing('17', 'a', 's1', 'extract:c1', at(5_000))
    expect(scheduled.covers('a', 's1', 'extract:c1', at(5_000))).toBe(false)
    scheduled.confirm('18')
    expect(scheduled.covers('a', 's1', 'extract:c1', at(5_000))).toBe(false)
    scheduled.confirm('17')
    expect(scheduled.covers('a', 's1', 'extract:c1', at(5_000))).toBe(true)
  })

  it('keeps the later run-at when two writes confirm out of order', () => {
    const { scheduled, at } = notes()
    scheduled.writing('1', 'a', 's1', 'k', at(5_000))
    scheduled.writing('2', 'a', 's1', 'k', at(6_000))
    scheduled.confirm('2')
    scheduled.confirm('1')
    expect(scheduled.covers('a', 's1', 'k', at(6_400))).toBe(true)
  })

  it('forgets cancelled keys in every session, an agent, or everything', () => {
    const { scheduled, at } = notes()
    scheduled.committed('a', 's1', 'extract:c1', at(5_000))
    scheduled.committed('a', 's2', 'extract:c1', at(5_000))
    scheduled.committed('a', 's1', 'summarize:c1', at(60_000))
    scheduled.committed('b', 's3', 'extract:c1', at(5_000))
    scheduled.forget('a', ['extract:c1'])
    expect(scheduled.covers('a', 's1', 'extract:c1', at(5_000))).toBe(false)
    expect(scheduled.covers('a', 's2', 'extract:c1', at(5_000))).toBe(false)
    expect(scheduled.covers('a', 's1', 'summarize:c1', at(60_000))).toBe(true)
    scheduled.forgetAgent('a')
    expect(scheduled.covers('a', 's1', 'summarize:c1', at(60_000))).toBe(false)
    expect(scheduled.covers('b', 's3', 'extract:c1', at(5_000))).toBe(true)
    scheduled.writing('9', 'b', 's3', 'k', at(5_000))
    scheduled.forgetAgent(null)
    scheduled.confirm('9')
    expect(scheduled.size).toBe(0)
  })

  it('holds at most its capacity, dropping the oldest note', () => {
    const { scheduled, at } = notes(500, 2)
    scheduled.committed('a', 's1', 'k1', at(5_000))
    scheduled.committed('a', 's1', 'k2', at(5_000))
    scheduled.committed('a', 's1', 'k3', at(5_000))
    expect(scheduled.size).toBe(2)
    expect(scheduled.covers('a', 's1', 'k1', at(5_000))).toBe(false)
    expect(scheduled.covers('a', 's1', 'k3', at(5_000))).toBe(true)
  })

  it('with granularity 0 covers nothing (every turn writes its job, as before)', () => {
    const { scheduled, at } = notes(0)
    scheduled.committed('a', 's1', 'k', at(5_000))
    expect(scheduled.covers('a', 's1', 'k', at(5_000))).toBe(false)
    expect(scheduled.size).toBe(0)
  })
})

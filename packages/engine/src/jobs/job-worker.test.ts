import { type Clock, ManualTimerClock } from '@engram/core'
import { describe, expect, it } from 'vitest'
import { SILENT_LOGGER } from '../ports/logger.ts'
import { createInMemoryStorage } from '../testing/index.ts'
import { JobWorker } from './job-worker.ts'

const clock: Clock = { now: () => new Date('2026-01-15T10:00:00.000Z') }

/**
 * A started worker on a manual clock, with one job kind whose handler records the size of every
 * batch it gets; the gather and the poll fire only when the test moves the clock.
 */
function startedWorker(gatherMs: number, pollIntervalMs = 3_600_000, failFirst = false) {
  const time = new ManualTimerClock()
  const storage = createInMemoryStorage(time)
  const worker = new JobWorker(storage.jobs, time, SILENT_LOGGER, pollIntervalMs, gatherMs)
  const batches: number[] = []
  worker.register(
    'count',
    async (jobs) => {
      batches.push(jobs.length)
      if (failFirst && batches.length === 1) throw new Error('the model is down')
      return {}
    },
    { backoffBaseMs: 5_000 },
  )
  worker.start()
  const enqueue = (i: number) =>
    storage.jobs.enqueue([{ kind: 'count', agentId: 'a', key: `k${i}`, payload: {} }])
  return { worker, batches, enqueue, time }
}

/** Until the run a timer started has had its turns (the in-memory queue: a few), bounded well under a second. */
async function untilRan(batches: number[], jobs: number) {
  for (let i = 0; i < 100 && batches.reduce((a, b) => a + b, 0) < jobs; i++)
    await new Promise((resolve) => setTimeout(resolve, 5))
}

/** A few turns of the event loop: what a timer's wake-up would have started by now, has. */
async function turns(n = 5) {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve))
}

describe('JobWorker once started', () => {
  it('lets jobs queued one after another gather into one batch, run once the gather delay has passed', async () => {
    const { worker, batches, enqueue, time } = startedWorker(50)
    try {
      // Five separate enqueues, each in its own turn of the event loop, as single adds make them.
      for (let i = 0; i < 5; i++) {
        await enqueue(i)
        await turns(1)
      }
      // One gather pending for all five; nothing has run before it falls due.
      expect(time.pendingDelays().filter((ms) => ms === 50)).toHaveLength(1)
      time.advance(49)
      await turns()
      expect(batches).toEqual([])
      time.advance(1)
      await untilRan(batches, 5)
      expect(batches).toEqual([5])
    } finally {
      await worker.stop()
    }
    // Stopped: nothing of the worker is left on the clock.
    expect(time.pendingDelays()).toEqual([])
  })

  it('wakes at every enqueue when gathering is off', async () => {
    const { worker, batches, enqueue } = startedWorker(0)
    try {
      for (let i = 0; i < 3; i++) {
        await enqueue(i)
        await untilRan(batches, i + 1)
      }
      expect(batches).toEqual([1, 1, 1])
    } finally {
      await worker.stop()
    }
  })

  it('runs a failed job again at its next poll after the backoff, not before', async () => {
    const { worker, batches, enqueue, time } = startedWorker(0, 1_000, true)
    try {
      await enqueue(1)
      await untilRan(batches, 1)
      expect(batches).toEqual([1])
      // Polls inside the 5 s backoff find nothing due.
      time.advance(4_000)
      await turns()
      expect(batches).toEqual([1])
      // The poll after the backoff runs it (the clock reads 5 s after the failure).
      time.advance(1_000)
      await untilRan(batches, 2)
      expect(batches).toEqual([1, 1])
    } finally {
      await worker.stop()
    }
  })
})

describe('JobWorker priority', () => {
  it('lets what waits on the event loop (a request) run between two batches of a backlog', async () => {
    const storage = createInMemoryStorage(clock)
    const worker = new JobWorker(storage.jobs, clock, SILENT_LOGGER)
    const order: string[] = []
    worker.register(
      'work',
      async (jobs) => {
        order.push(`batch ${jobs.map((job) => job.key).join(',')}`)
        return {}
      },
      { batchSize: 1 },
    )
    await storage.jobs.enqueue(
      ['j1', 'j2', 'j3'].map((key) => ({ kind: 'work', agentId: 'a', key, payload: {} })),
    )
    // A request's callback queued before the run: the in-memory queue never does real I/O, so
    // without a yield the whole backlog would run before it.
    setImmediate(() => order.push('request'))
    expect(await worker.runDue()).toBe(3)
    expect(order.indexOf('request')).toBe(1)
    expect(order.filter((entry) => entry.startsWith('batch'))).toHaveLength(3)
  })
})

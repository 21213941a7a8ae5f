import type { Clock } from '@engram/core'
import { describe, expect, it } from 'vitest'
import { SILENT_LOGGER } from '../ports/logger.ts'
import { createInMemoryStorage } from '../testing/index.ts'
import { JobWorker } from './job-worker.ts'

const clock: Clock = { now: () => new Date('2026-01-15T10:00:00.000Z') }

/** A started worker with one job kind whose handler records the size of every batch it gets. */
function startedWorker(gatherMs: number) {
  const storage = createInMemoryStorage(clock)
  // A poll far beyond the test: only the wake-up after an enqueue can run the jobs.
  const worker = new JobWorker(storage.jobs, clock, SILENT_LOGGER, 3_600_000, gatherMs)
  const batches: number[] = []
  worker.register('count', async (jobs) => {
    batches.push(jobs.length)
    return {}
  })
  worker.start()
  const enqueue = (i: number) =>
    storage.jobs.enqueue([{ kind: 'count', agentId: 'a', key: `k${i}`, payload: {} }])
  return { worker, batches, enqueue }
}

/** Until every queued job has run (the wake-up comes on a timer), bounded well under a second. */
async function untilRan(batches: number[], jobs: number) {
  for (let i = 0; i < 100 && batches.reduce((a, b) => a + b, 0) < jobs; i++)
    await new Promise((resolve) => setTimeout(resolve, 5))
}

describe('JobWorker once started', () => {
  it('lets jobs queued one after another gather into one batch', async () => {
    const { worker, batches, enqueue } = startedWorker(50)
    try {
      // Five separate enqueues, each in its own turn of the event loop, as single adds make them.
      for (let i = 0; i < 5; i++) {
        await enqueue(i)
        await new Promise((resolve) => setImmediate(resolve))
      }
      await untilRan(batches, 5)
      expect(batches).toEqual([5])
    } finally {
      await worker.stop()
    }
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

import { describe, expect, it } from 'vitest'
import { ValidationError } from '../errors.ts'
import { DEFAULT_JOB_POLICY, nextRetryAt, parseJobPolicy } from './job-queue.ts'

const NOW = new Date('2026-01-15T10:00:00.000Z')

describe('job retries', () => {
  it('doubles the delay after each failed run, up to the cap', () => {
    const policy = parseJobPolicy({ maxAttempts: 10, backoffBaseMs: 1_000, backoffMaxMs: 10_000 })
    const delays = [1, 2, 3, 4, 5, 6].map(
      (attempts) => (nextRetryAt(policy, attempts, NOW) as Date).getTime() - NOW.getTime(),
    )
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 10_000, 10_000])
  })

  it('gives up (dead letter) once every attempt is used', () => {
    const policy = parseJobPolicy({ maxAttempts: 3 })
    expect(nextRetryAt(policy, 2, NOW)).not.toBeNull()
    expect(nextRetryAt(policy, 3, NOW)).toBeNull()
    expect(nextRetryAt(policy, 4, NOW)).toBeNull()
  })

  it('stays finite however many attempts are allowed', () => {
    const policy = parseJobPolicy({ maxAttempts: 100, backoffMaxMs: 86_400_000 })
    expect((nextRetryAt(policy, 99, NOW) as Date).getTime()).toBe(NOW.getTime() + 86_400_000)
  })

  it('refuses a policy out of bounds, naming the field and the limit', () => {
    expect(DEFAULT_JOB_POLICY).toMatchObject({ maxAttempts: 5, batchSize: 64 })
    try {
      parseJobPolicy({ maxAttempts: 0 }, 'jobs.embed')
      expect.unreachable()
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationError)
      expect((error as ValidationError).issues[0]).toMatchObject({
        field: 'jobs.embed.maxAttempts',
        limit: 1,
      })
    }
  })
})

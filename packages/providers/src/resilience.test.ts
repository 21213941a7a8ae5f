import { describe, expect, it } from 'vitest'
import {
  AttemptTimeoutError,
  CircuitBreaker,
  CircuitOpenError,
  createResilience,
  isRetryable,
  isRetryableStatus,
  parseRetryAfter,
  ServiceError,
} from './resilience.ts'
import { ManualTimerClock } from './testing/index.ts'

const transient = () => Promise.reject(new ServiceError('HTTP 503', { retryable: true, status: 503 }))
const rejected = () => Promise.reject(new ServiceError('HTTP 400', { retryable: false, status: 400 }))

describe('isRetryable', () => {
  it('retries network failures, timeouts and 408/429/5xx, and nothing else', () => {
    const refused = new TypeError('fetch failed', {
      cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }),
    })
    expect(isRetryable(refused)).toBe(true)
    expect(isRetryable(new AttemptTimeoutError('s', 10))).toBe(true)
    expect(isRetryable(new CircuitOpenError('s', 10, 5))).toBe(false)
    expect(isRetryable(new TypeError('x is not a function'))).toBe(false)
    expect(isRetryable(new Error('bug'))).toBe(false)
    expect([408, 429, 500, 502, 503, 504].every(isRetryableStatus)).toBe(true)
    expect([400, 401, 403, 404, 409, 413, 422].some(isRetryableStatus)).toBe(false)
  })
})

describe('CircuitBreaker', () => {
  it('lets only one trial through while half-open', async () => {
    const clock = new ManualTimerClock()
    const breaker = new CircuitBreaker({ service: 'svc', failureThreshold: 2, cooldownMs: 1_000, clock })
    for (let i = 0; i < 2; i++) await expect(breaker.run(transient)).rejects.toThrow('HTTP 503')
    expect(breaker.state).toBe('open')
    clock.advance(1_000)
    expect(breaker.state).toBe('half-open')

    let finishTrial: (value: string) => void = () => {}
    const trial = breaker.run(() => new Promise<string>((resolve) => (finishTrial = resolve)))
    await expect(breaker.run(() => Promise.resolve('second'))).rejects.toBeInstanceOf(CircuitOpenError)
    finishTrial('first')
    await expect(trial).resolves.toBe('first')
    expect(breaker.state).toBe('closed')
    await expect(breaker.run(() => Promise.resolve('after'))).resolves.toBe('after')
  })

  it('does not count refused requests (HTTP 400) as the service failing', async () => {
    const breaker = new CircuitBreaker({ service: 'svc', failureThreshold: 2, clock: new ManualTimerClock() })
    await expect(breaker.run(transient)).rejects.toThrow()
    for (let i = 0; i < 5; i++) await expect(breaker.run(rejected)).rejects.toThrow('HTTP 400')
    expect(breaker.state).toBe('closed')
    await expect(breaker.run(transient)).rejects.toThrow()
    expect(breaker.state).toBe('open')
  })

  it('resets the count on success: only consecutive failures open it', async () => {
    const breaker = new CircuitBreaker({ service: 'svc', failureThreshold: 3, clock: new ManualTimerClock() })
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 2; i++) await expect(breaker.run(transient)).rejects.toThrow()
      await breaker.run(() => Promise.resolve(1))
    }
    expect(breaker.state).toBe('closed')
  })
})

describe('createResilience', () => {
  it('times out an attempt that ignores its abort signal', async () => {
    const resilience = createResilience({ service: 'svc', timeoutMs: 20, retryDelaysMs: [] })
    const error = await resilience.run(() => new Promise(() => {})).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(AttemptTimeoutError)
    expect((error as Error).message).toBe('svc: no answer within 20 ms')
  })

  it('aborts the signal it hands the attempt when the time is up', async () => {
    const resilience = createResilience({ service: 'svc', timeoutMs: 20, retryDelaysMs: [] })
    let seen: AbortSignal | undefined
    await resilience
      .run(
        (signal) =>
          new Promise((_, reject) => {
            seen = signal
            signal.addEventListener('abort', () => reject(signal.reason))
          }),
      )
      .catch(() => {})
    expect(seen?.aborted).toBe(true)
    expect(seen?.reason).toBeInstanceOf(AttemptTimeoutError)
  })
})

describe('parseRetryAfter', () => {
  const now = new Date('2026-01-15T10:00:00.000Z')
  it('reads seconds and HTTP dates, and nothing else', () => {
    expect(parseRetryAfter('3', now)).toBe(3_000)
    expect(parseRetryAfter(' 0 ', now)).toBe(0)
    expect(parseRetryAfter('Thu, 15 Jan 2026 10:00:05 GMT', now)).toBe(5_000)
    expect(parseRetryAfter('Thu, 15 Jan 2026 09:00:00 GMT', now)).toBe(0)
    expect(parseRetryAfter('soon', now)).toBeUndefined()
    expect(parseRetryAfter('-1', now)).toBeUndefined()
    expect(parseRetryAfter(null, now)).toBeUndefined()
  })
})

describe('createResilience on a timer clock', () => {
  const busy = (retryAfterMs?: number) =>
    Promise.reject(
      new ServiceError('HTTP 429', {
        retryable: true,
        status: 429,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      }),
    )

  it('waits out its backoff and timeouts on the clock, not in real time', async () => {
    const clock = new ManualTimerClock()
    const resilience = createResilience({ service: 'svc', clock })
    let attempts = 0
    const call = resilience.run(() => (++attempts < 3 ? busy() : Promise.resolve('ok')))
    await clock.waitForTimer(1_000)
    expect(attempts).toBe(1)
    clock.advance(1_000)
    await clock.waitForTimer(2_000)
    expect(attempts).toBe(2)
    clock.advance(2_000)
    await expect(call).resolves.toBe('ok')

    const hung = resilience.run(() => new Promise(() => {})).catch((e: unknown) => e)
    // Four attempts of 60 s each, with the 1, 2, 4 s backoff between them, all on the clock.
    for (const wait of [60_000, 1_000, 60_000, 2_000, 60_000, 4_000, 60_000]) {
      await clock.waitForTimer(wait)
      clock.advance(wait)
    }
    const error = (await hung) as ServiceError
    expect(error.message).toBe('svc: no answer within 60000 ms (gave up after 4 attempts)')
    expect(error.cause).toBeInstanceOf(AttemptTimeoutError)
  })

  it('honours Retry-After between the backoff and the cap', async () => {
    const waits: number[] = []
    const sleep = async (ms: number) => {
      waits.push(ms)
    }
    const resilience = createResilience({ service: 'svc', sleep, maxRetryDelayMs: 10_000 })
    // 500 ms is shorter than the backoff (1 s), 5 s lies inside, an hour is capped at 10 s.
    const asked = [500, 5_000, 3_600_000]
    await resilience.run(() => (asked.length > 0 ? busy(asked.shift()) : Promise.resolve('ok')))
    expect(waits).toEqual([1_000, 5_000, 10_000])
  })
})

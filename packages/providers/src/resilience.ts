import type { Clock, TimerClock } from '@engram/core'

/**
 * Calls to model services (embeddings now, an LLM later) go through one retry loop and one
 * circuit breaker: transient failures are retried with backoff, and a service that keeps failing
 * is left alone for a while instead of being hammered by every request that needs it.
 */

export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [1_000, 2_000, 4_000]
export const DEFAULT_ATTEMPT_TIMEOUT_MS = 60_000
export const DEFAULT_BREAKER_FAILURE_THRESHOLD = 5
export const DEFAULT_BREAKER_COOLDOWN_MS = 60_000

/**
 * A clock that can also wake its caller (core's). Retry delays and attempt timeouts run on it, so
 * a test moves time instead of waiting a minute for a timeout; a plain `Clock` gets the system's timers.
 */
export type { TimerClock } from '@engram/core'

export const systemTimerClock: TimerClock = {
  now: () => new Date(),
  setTimer(ms, wake) {
    const timer = setTimeout(wake, ms)
    return () => clearTimeout(timer)
  },
}

function isTimerClock(clock: Clock | undefined): clock is TimerClock {
  return typeof (clock as Partial<TimerClock> | undefined)?.setTimer === 'function'
}

/** The clock's timers when it has them, the system's otherwise (its `now` may still be a test's). */
export function timersOf(clock: Clock | undefined): TimerClock {
  return isTimerClock(clock) ? clock : systemTimerClock
}

/** A failure reported by a service client; `retryable` says whether trying again could help. */
export class ServiceError extends Error {
  readonly retryable: boolean
  readonly status: number | undefined
  /** How long the service asked us to wait (HTTP Retry-After), when it said. */
  readonly retryAfterMs: number | undefined
  constructor(
    message: string,
    options: { retryable: boolean; status?: number; retryAfterMs?: number; cause?: unknown },
  ) {
    super(message, { cause: options.cause })
    this.name = 'ServiceError'
    this.retryable = options.retryable
    this.status = options.status
    this.retryAfterMs = options.retryAfterMs
  }
}

/**
 * HTTP Retry-After: whole seconds or an HTTP date (RFC 9110 §10.2.3). Undefined when absent or
 * unreadable; a date in the past means "now" (0).
 */
export function parseRetryAfter(header: string | null | undefined, now: Date): number | undefined {
  const value = header?.trim()
  if (!value) return undefined
  if (/^\d+$/.test(value)) return Number(value) * 1_000
  // An HTTP date names its day and month; Date.parse alone would take "-1" as a year.
  const at = /[a-z]/i.test(value) ? Date.parse(value) : Number.NaN
  return Number.isNaN(at) ? undefined : Math.max(0, at - now.getTime())
}

export class AttemptTimeoutError extends Error {
  constructor(
    readonly service: string,
    readonly timeoutMs: number,
  ) {
    super(`${service}: no answer within ${timeoutMs} ms`)
    this.name = 'AttemptTimeoutError'
  }
}

export class CircuitOpenError extends Error {
  constructor(
    readonly service: string,
    readonly retryInMs: number,
    readonly consecutiveFailures: number,
  ) {
    super(
      `${service}: circuit open after ${consecutiveFailures} consecutive failures; ` +
        `calls fail fast for another ${Math.ceil(retryInMs / 1_000)} s`,
    )
    this.name = 'CircuitOpenError'
  }
}

/** 408 and 429 say "later"; 5xx says the server, not the request, is at fault. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500
}

const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
])

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' ? code : undefined
}

/** Network trouble and timeouts are transient; bad requests, bad answers and bugs are not. */
export function isRetryable(error: unknown): boolean {
  if (error instanceof ServiceError) return error.retryable
  if (error instanceof AttemptTimeoutError) return true
  if (error instanceof CircuitOpenError) return false
  // undici reports connection failures as `TypeError: fetch failed` with the socket error as cause.
  for (let current: unknown = error, depth = 0; current && depth < 4; depth++) {
    const code = errorCode(current)
    if (code && NETWORK_ERROR_CODES.has(code)) return true
    current = (current as { cause?: unknown }).cause
  }
  return error instanceof TypeError && error.message === 'fetch failed'
}

export type CircuitState = 'closed' | 'open' | 'half-open'

export interface CircuitBreakerOptions {
  /** Named in errors, so an operator sees which service is being left alone. */
  service: string
  failureThreshold?: number
  cooldownMs?: number
  clock?: Clock
  /** Which errors say the service is unhealthy; a rejected request (HTTP 400) does not. */
  countsAsFailure?: (error: unknown) => boolean
}

/**
 * Closed: calls pass. After `failureThreshold` consecutive failures: open, calls fail fast with
 * CircuitOpenError for `cooldownMs`. Then half-open: one trial call passes (others still fail
 * fast); its success closes the circuit, its failure opens it for another cooldown.
 */
export class CircuitBreaker {
  private consecutiveFailures = 0
  private openedAt: number | undefined
  private trialInFlight = false
  private readonly failureThreshold: number
  private readonly cooldownMs: number
  private readonly clock: Clock
  private readonly countsAsFailure: (error: unknown) => boolean

  constructor(private readonly options: CircuitBreakerOptions) {
    this.failureThreshold = options.failureThreshold ?? DEFAULT_BREAKER_FAILURE_THRESHOLD
    this.cooldownMs = options.cooldownMs ?? DEFAULT_BREAKER_COOLDOWN_MS
    this.clock = options.clock ?? { now: () => new Date() }
    this.countsAsFailure = options.countsAsFailure ?? isRetryable
  }

  get state(): CircuitState {
    if (this.openedAt === undefined) return 'closed'
    return this.clock.now().getTime() - this.openedAt >= this.cooldownMs ? 'half-open' : 'open'
  }

  async run<T>(operation: () => Promise<T>): Promise<T> {
    const state = this.state
    if (state === 'open' || (state === 'half-open' && this.trialInFlight)) {
      const elapsed = this.clock.now().getTime() - (this.openedAt ?? 0)
      throw new CircuitOpenError(
        this.options.service,
        Math.max(0, this.cooldownMs - elapsed),
        this.consecutiveFailures,
      )
    }
    const isTrial = state === 'half-open'
    if (isTrial) this.trialInFlight = true
    try {
      const result = await operation()
      this.consecutiveFailures = 0
      this.openedAt = undefined
      return result
    } catch (error) {
      if (this.countsAsFailure(error)) {
        // Only a success resets the count, so a failed trial is still past the threshold: it reopens.
        this.consecutiveFailures++
        if (this.consecutiveFailures >= this.failureThreshold) this.openedAt = this.clock.now().getTime()
      } else if (isTrial) {
        // The service answered (it only refused this request): it is up again.
        this.consecutiveFailures = 0
        this.openedAt = undefined
      }
      throw error
    } finally {
      if (isTrial) this.trialInFlight = false
    }
  }
}

export interface ResilienceOptions {
  service: string
  timeoutMs?: number
  retryDelaysMs?: readonly number[]
  /**
   * The longest wait before a retry, whatever a Retry-After header asks (default: the longest of
   * `retryDelaysMs`): a server asking for minutes is retried at the cap, not waited on.
   */
  maxRetryDelayMs?: number
  failureThreshold?: number
  cooldownMs?: number
  /** The breaker's time; with `setTimer` (a TimerClock) also the retry delays and attempt timeouts. */
  clock?: Clock
  sleep?: (ms: number) => Promise<void>
}

export interface Resilience {
  readonly breaker: CircuitBreaker
  /** Runs `attempt` with a per-attempt timeout, through the breaker, retrying transient failures. */
  run<T>(attempt: (signal: AbortSignal) => Promise<T>): Promise<T>
}

/**
 * The breaker counts every attempt, not every retried call: it exists to stop requests reaching
 * a failing service, and each attempt is one. Once it opens, the retry loop stops at once.
 */
export function createResilience(options: ResilienceOptions): Resilience {
  const timeoutMs = options.timeoutMs ?? DEFAULT_ATTEMPT_TIMEOUT_MS
  const retryDelaysMs = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS
  const maxRetryDelayMs = options.maxRetryDelayMs ?? Math.max(0, ...retryDelaysMs)
  const timers = timersOf(options.clock)
  const sleep =
    options.sleep ?? ((ms: number) => new Promise<void>((resolve) => void timers.setTimer(ms, resolve)))
  const breakerOptions: CircuitBreakerOptions = { service: options.service }
  if (options.failureThreshold !== undefined) breakerOptions.failureThreshold = options.failureThreshold
  if (options.cooldownMs !== undefined) breakerOptions.cooldownMs = options.cooldownMs
  if (options.clock !== undefined) breakerOptions.clock = options.clock
  const breaker = new CircuitBreaker(breakerOptions)

  const withTimeout = async <T>(attempt: (signal: AbortSignal) => Promise<T>): Promise<T> => {
    const controller = new AbortController()
    const timeout = new AttemptTimeoutError(options.service, timeoutMs)
    let cancelTimer = () => {}
    // Racing as well as aborting: an attempt that ignores its signal still cannot hang the caller.
    const expired = new Promise<never>((_, reject) => {
      cancelTimer = timers.setTimer(timeoutMs, () => {
        controller.abort(timeout)
        reject(timeout)
      })
    })
    try {
      return await Promise.race([attempt(controller.signal), expired])
    } catch (error) {
      throw controller.signal.aborted ? timeout : error
    } finally {
      cancelTimer()
    }
  }

  return {
    breaker,
    async run<T>(attempt: (signal: AbortSignal) => Promise<T>): Promise<T> {
      for (let attemptIndex = 0; ; attemptIndex++) {
        try {
          return await breaker.run(() => withTimeout(attempt))
        } catch (error) {
          const scheduled = retryDelaysMs[attemptIndex]
          if (scheduled === undefined || !isRetryable(error)) {
            if (attemptIndex === 0 || !isRetryable(error)) throw error
            throw new ServiceError(
              `${(error as Error).message} (gave up after ${attemptIndex + 1} attempts)`,
              { retryable: true, status: (error as Partial<ServiceError>).status, cause: error },
            )
          }
          // The backoff is the floor; a server's Retry-After may lengthen it, up to the cap.
          const asked = (error as Partial<ServiceError>).retryAfterMs
          await sleep(asked === undefined ? scheduled : Math.max(scheduled, Math.min(asked, maxRetryDelayMs)))
        }
      }
    },
  }
}

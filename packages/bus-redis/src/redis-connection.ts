import { Redis, type RedisOptions } from 'ioredis'

/** The longest wait between two reconnection attempts: Redis back means delivery back within it. */
export const DEFAULT_REDIS_RECONNECT_MAX_DELAY_MS = 2_000
const FIRST_RECONNECT_DELAY_MS = 50

/**
 * How every Engram client of Redis reconnects: ioredis retries forever by default; the backoff is
 * doubled from 50 ms and capped, so a returning Redis is noticed within `maxDelayMs`.
 */
export function reconnecting(maxDelayMs = DEFAULT_REDIS_RECONNECT_MAX_DELAY_MS): RedisOptions {
  return {
    retryStrategy: (times: number) => Math.min(FIRST_RECONNECT_DELAY_MS * 2 ** (times - 1), maxDelayMs),
    connectTimeout: 5_000,
  }
}

/**
 * A client whose commands fail at once while Redis is unreachable (no offline queue, one retry)
 * rather than queueing: a queue would grow without bound during an outage and run stale work
 * afterwards, while each caller has its own answer without Redis (the database, no lease).
 */
export function failingFast(
  url: string,
  options: { reconnectMaxDelayMs?: number | undefined; commandTimeoutMs?: number | undefined } = {},
): Redis {
  return new Redis(url, {
    ...reconnecting(options.reconnectMaxDelayMs),
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    ...(options.commandTimeoutMs !== undefined ? { commandTimeout: options.commandTimeoutMs } : {}),
  })
}

import { randomUUID } from 'node:crypto'
import type { Logger } from '@engram/engine'
import { Redis } from 'ioredis'
import { failingFast, reconnecting } from './redis-connection.ts'
import { escapeGlob } from './redis-keys.ts'

export interface RedisEventTargetOptions {
  /** `redis://` or `rediss://` (REDIS_URL). */
  url: string
  /** Every channel is named under it (ENGRAM_REDIS_PREFIX), so deployments can share a server. */
  prefix: string
  log: Logger
  /** The reconnection backoff's ceiling (ms); it doubles from 50 ms up to this. */
  reconnectMaxDelayMs?: number
}

/** The channel of one topic: `<prefix>:events:<topic>`, e.g. `engram:events:optimizer:snapshot`. */
export function eventChannel(prefix: string, topic: string): string {
  return `${prefix}:events:${topic}`
}

/**
 * The event target behind yoga's pubsub (and so behind the engine's EventBus) when REDIS_URL is
 * set: an event is delivered to this process's listeners at once, then published on Redis for the
 * others. Each message carries this process's id and a process drops its own when Redis echoes
 * them, so every subscriber gets each event once, and local subscriptions keep working while
 * Redis is down (only the other replicas miss what is published meanwhile: events are live
 * notifications, never replayed).
 *
 * Not `@graphql-yoga/redis-event-target`: it delivers only what comes back from Redis, so with
 * Redis down a process would not even see its own events, and it serialises with plain JSON, which
 * turns the events' Dates (a snapshot's timestamp, an activity's `at`) into strings.
 */
export class RedisEventTarget extends EventTarget {
  /** This process: its own messages coming back from Redis are skipped. */
  private readonly origin = randomUUID()
  private readonly publisher: Redis
  private readonly subscriber: Redis
  private readonly pattern: string
  private readonly prefix: string
  private readonly log: Logger
  private outage = false

  constructor(options: RedisEventTargetOptions) {
    super()
    this.prefix = options.prefix
    this.log = options.log
    // A publish while Redis is down fails at once instead of queueing: a queue would grow without
    // bound during an outage and replay stale events afterwards.
    this.publisher = failingFast(options.url, options)
    // Subscribed again on every `ready` (first connection and each reconnection), explicitly, so a
    // subscription that failed while Redis was away is not lost.
    this.subscriber = new Redis(options.url, {
      ...reconnecting(options.reconnectMaxDelayMs),
      autoResubscribe: false,
      maxRetriesPerRequest: null,
    })
    this.pattern = `${escapeGlob(eventChannel(this.prefix, ''))}*`
    this.subscriber.on('ready', () => {
      this.subscriber.psubscribe(this.pattern).catch((error) => this.down(error))
    })
    this.subscriber.on('pmessage', (_pattern, channel, message) => this.receive(channel, message))
    for (const client of [this.publisher, this.subscriber]) {
      client.on('error', (error) => this.down(error))
      client.on('ready', () => {
        if (this.outage && this.status() === 'up') {
          this.outage = false
          this.log.info('[redis] connected again: events reach the other replicas')
        }
      })
    }
  }

  override dispatchEvent(event: Event): boolean {
    const delivered = super.dispatchEvent(event)
    const detail = (event as CustomEvent).detail
    if (this.publisher.status === 'ready') {
      const message = JSON.stringify({ origin: this.origin, detail }, encodeDates)
      this.publisher
        .publish(eventChannel(this.prefix, event.type), message)
        .catch((error) => this.down(error))
    }
    return delivered
  }

  /** `up` when both connections are ready; /health reports it. */
  status(): 'up' | 'down' {
    return this.publisher.status === 'ready' && this.subscriber.status === 'ready' ? 'up' : 'down'
  }

  close(): void {
    this.publisher.disconnect()
    this.subscriber.disconnect()
  }

  private receive(channel: string, message: string): void {
    const topic = channel.slice(eventChannel(this.prefix, '').length)
    let parsed: { origin?: unknown; detail?: unknown }
    try {
      parsed = JSON.parse(message, decodeDates)
    } catch {
      this.log.warn(`[redis] ignored a message on ${channel} that is not JSON`)
      return
    }
    if (parsed.origin === this.origin) return
    super.dispatchEvent(new CustomEvent(topic, { detail: parsed.detail }))
  }

  /** Logged once per outage: ioredis reports every failed reconnection attempt. */
  private down(error: unknown): void {
    if (this.outage) return
    this.outage = true
    this.log.warn(
      `[redis] unavailable (${error instanceof Error ? error.message : String(error)}): events stay in this process until it returns`,
    )
  }
}

const DATE_TAG = '$engramDate'

// JSON.stringify calls Date#toJSON before the replacer sees the value, so the original is read from
// the holder (`this`).
function encodeDates(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const original = this[key]
  return original instanceof Date ? { [DATE_TAG]: original.toISOString() } : value
}

function decodeDates(_key: string, value: unknown): unknown {
  if (value && typeof value === 'object' && DATE_TAG in value) {
    const iso = (value as Record<string, unknown>)[DATE_TAG]
    if (typeof iso === 'string' && Object.keys(value).length === 1) return new Date(iso)
  }
  return value
}

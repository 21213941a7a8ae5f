import type { EngramEvents, EventBus } from '@engram/engine'
import { createPubSub } from 'graphql-yoga'

// The event map is the engine's (its EventBus port), so subscriptions and the engine share one bus.
export type { EmbeddingProgressEvent, SnapshotEvent } from '@engram/engine'

export type EngramPubSub = ReturnType<typeof createEngramPubSub>

/**
 * In-process by default; with an event target (the Redis one, when REDIS_URL is set) every replica's
 * subscribers receive what any replica publishes.
 */
export function createEngramPubSub(eventTarget?: EventTarget) {
  return createPubSub<EngramEvents>(
    eventTarget ? { eventTarget: eventTarget as NonNullable<PubSubConfig['eventTarget']> } : undefined,
  )
}

type PubSubConfig = NonNullable<Parameters<typeof createPubSub<EngramEvents>>[0]>

/**
 * Yoga's pubsub as the engine's EventBus. Yoga types subscribe's arguments per topic (an optional
 * routing id); the engine never routes by id, so every topic is subscribed to whole.
 */
export function asEventBus(pubsub: EngramPubSub): EventBus {
  return {
    publish: (topic, ...args) => pubsub.publish(topic, ...args),
    subscribe: (topic) => (pubsub.subscribe as (topic: keyof EngramEvents) => AsyncIterable<never>)(topic),
  }
}

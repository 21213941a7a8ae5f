import type { OptimizationSnapshot } from '@engram/core'
import type { FormationActivityEvent } from '../formation/formation-activity.ts'

/** A snapshot as published: which agent it belongs to travels with it so subscribers can be scoped. */
export interface SnapshotEvent {
  id: string
  agentId: string
  snapshot: OptimizationSnapshot
}

/** Progress of re-embedding after the embedding provider changed (or a requested re-embed). */
export interface EmbeddingProgressEvent {
  model: string
  state: 'idle' | 'running' | 'done' | 'failed'
  total: number
  done: number
  failed: number
  startedAt: Date | null
  finishedAt: Date | null
  error: string | null
}

/**
 * Every event the engine publishes, by topic. `cache:invalidate` exists because each in-process
 * cache (term statistics, vector indexes, sessions) goes stale once replicas share one database:
 * a write announces the agent whose derived state other processes must drop.
 */
export type EngramEvents = {
  'optimizer:snapshot': [event: SnapshotEvent]
  'embedding:progress': [event: EmbeddingProgressEvent]
  /** A unit of memory formation (an extraction, a summary, a profile version) ended. */
  'formation:activity': [event: FormationActivityEvent]
  /** A key was revoked, an agent deleted, a backup restored: open subscriptions check their access. */
  'access:changed': [event: Record<string, never>]
  'cache:invalidate': [event: { agentId: string | null }]
}

/**
 * Typed publish/subscribe. graphql-yoga's `createPubSub<EngramEvents>()` satisfies it as is (the
 * API passes it in), the in-process bus in src/events does for embedded use, a Redis bus later.
 */
export interface EventBus<Events extends Record<string, unknown[]> = EngramEvents> {
  publish<Topic extends keyof Events & string>(topic: Topic, ...args: Events[Topic]): void
  subscribe<Topic extends keyof Events & string>(topic: Topic): AsyncIterable<Events[Topic][0]>
}

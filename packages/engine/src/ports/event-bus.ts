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
 * What changed for an agent (every agent when `agentId` is null), as `cache:invalidate` says it:
 * `write` rows were added or changed (caches keyed by the agent's write version go stale),
 * `reset` rows were deleted or replaced in bulk (everything derived from them goes), `ended` the
 * agent was deleted or replaced (its id may belong to another agent now).
 */
/**
 * `write`: rows added or changed; `settings`: the agent's settings record saved (kept settings go
 * too); `reset`: rows deleted or replaced in bulk; `ended`: the agent is gone.
 */
export type CacheChange = 'write' | 'settings' | 'reset' | 'ended'

/** `cache:invalidate`'s event; `origin` names the engine that published it (it ignores its own). */
export interface CacheInvalidateEvent {
  agentId: string | null
  change?: CacheChange
  origin?: string
}

/**
 * A run of the registry started, reported progress or ended (issue 16). It carries ids and an ISO
 * time only, so it crosses Redis as JSON unchanged; a subscriber reads the run itself, scoped to
 * its agent, and sees its state as stored.
 */
export interface RunEvent {
  agentId: string
  runId: string
  domain: string
  kind: 'STARTED' | 'PROGRESS' | 'COMPLETED' | 'FAILED'
  at: string
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
  'cache:invalidate': [event: CacheInvalidateEvent]
  /** A run started, progressed or ended (the runEvents subscription). */
  'run:event': [event: RunEvent]
}

/**
 * Typed publish/subscribe. graphql-yoga's `createPubSub<EngramEvents>()` satisfies it as is (the
 * API passes it in), the in-process bus in src/events does for embedded use, a Redis bus later.
 */
export interface EventBus<Events extends Record<string, unknown[]> = EngramEvents> {
  publish<Topic extends keyof Events & string>(topic: Topic, ...args: Events[Topic]): void
  subscribe<Topic extends keyof Events & string>(topic: Topic): AsyncIterable<Events[Topic][0]>
}

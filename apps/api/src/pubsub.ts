import type { OptimizationSnapshot } from '@engram/core'
import { createPubSub } from 'graphql-yoga'

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

export type EngramPubSub = ReturnType<typeof createEngramPubSub>

export function createEngramPubSub() {
  return createPubSub<{
    'optimizer:snapshot': [event: SnapshotEvent]
    'embedding:progress': [event: EmbeddingProgressEvent]
    /** A key was revoked, an agent deleted, a backup restored: open subscriptions check their access. */
    'access:changed': [event: Record<string, never>]
  }>()
}

import type { OptimizationSnapshot } from '@engram/core'
import { createPubSub } from 'graphql-yoga'

/** A snapshot as published: which agent it belongs to travels with it so subscribers can be scoped. */
export interface SnapshotEvent {
  id: string
  agentId: string
  snapshot: OptimizationSnapshot
}

export type EngramPubSub = ReturnType<typeof createEngramPubSub>

export function createEngramPubSub() {
  return createPubSub<{ 'optimizer:snapshot': [event: SnapshotEvent] }>()
}

'use client'

import { EXPLANATION_FIELDS, SNAPSHOT_FIELDS, type Snapshot } from '../lib/snapshots'
import { type LiveStatus, useLiveSubscription } from './use-live-subscription'

export type { LiveStatus, Snapshot }

const SNAPSHOTS = `subscription($a: ID) { optimizerSnapshots(agentId: $a) { ${SNAPSHOT_FIELDS} ${EXPLANATION_FIELDS} } }`

/** Optimizer snapshots as they are recorded: one agent's, or every agent's when agentId is null. */
export function useLiveSnapshots(
  agentId: string | null,
  onSnapshot: (snapshot: Snapshot) => void,
): LiveStatus {
  return useLiveSubscription<{ optimizerSnapshots: Snapshot }>({
    query: SNAPSHOTS,
    variables: { a: agentId },
    tokenAgentId: agentId,
    onData: (data) => onSnapshot(data.optimizerSnapshots),
  })
}

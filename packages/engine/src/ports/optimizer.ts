import type { DecayCandidate, MemoryEntry } from '@engram/core'
import type { SnapshotEvent } from './event-bus.ts'
import type { Repositories } from './repositories.ts'

/** A compressed entry's new text, as the optimizer step wrote it. */
export interface EntryCompression {
  entryId: string
  content: string
  tokenCount: number
}

/**
 * What one optimizer run changes, applied together: the step's actions on memory entries, the
 * knowledge decay planned beside it, and the snapshot that records the run.
 */
export interface OptimizerRunChanges {
  drops: readonly string[]
  /** Promoted to long-term memory with full relevance. */
  promotions: readonly string[]
  compressions: readonly EntryCompression[]
  /** Knowledge whose confidence decayed; `decayedAt` is stored as its last decay. */
  decayed: readonly { id: string; confidence: number }[]
  decayedAt: Date
  /** Knowledge whose confidence fell below the floor: deleted. */
  pruned: readonly string[]
  snapshot: SnapshotEvent['snapshot']
  /** How many snapshots the agent keeps, newest first; older ones go with this run. */
  snapshotHistoryLimit: number
}

/**
 * An entry's row without its text, as the optimizer's incremental read sees it: enough to tell
 * whether the text kept from an earlier run is still the row's, and the fields a run may change
 * (so they are always read fresh).
 */
export interface EntryStamp {
  id: string
  /** The row's last write (its updatedAt, as the store holds it): changes with every write. */
  version: string
  /** The text's length as the store counts it: a second guard beside the version. */
  contentLength: number
  type: MemoryEntry['type']
  relevance: number
  isCompressed: boolean
  tokenCount: number
}

/** An entry with the stamp it was read under. */
export interface StampedEntry {
  entry: MemoryEntry
  version: string
  contentLength: number
}

/**
 * What the scheduled optimizer reads and writes per agent: its memory entries (the step's input,
 * read whole at every run, so the adapter keeps this read lean), the knowledge it decays, and the
 * snapshot history behind the efficiency report and the snapshot subscription.
 */
export interface OptimizerRepository {
  /** Agents that have memory entries: the ones a scheduled cycle runs for. */
  agentsWithEntries(): Promise<string[]>
  /** The agent's entries (of one conversation when sessionId is given), oldest first. */
  entries(agentId: string, sessionId: string | null): Promise<MemoryEntry[]>
  /**
   * The agent's entries without their text, in the order of entries(): with entriesByIds, lets
   * the optimizer keep entries between runs and read the text of new or changed rows only.
   * Optional: without it every run reads entries() whole.
   */
  entryStamps?(agentId: string, sessionId: string | null): Promise<EntryStamp[]>
  /** The agent's entries with these ids (those still there), each with its stamp. */
  entriesByIds?(agentId: string, ids: readonly string[]): Promise<StampedEntry[]>
  /** entries() with each entry's stamp, in one read: a run with nothing kept yet. */
  stampedEntries?(agentId: string, sessionId: string | null): Promise<StampedEntry[]>
  /** The agent's knowledge with what decay is planned from. */
  decayCandidates(agentId: string): Promise<DecayCandidate[]>
  /**
   * Applies a run in one transaction and returns its stored snapshot. `alongside` runs in the same
   * transaction with the repositories bound to it (the learned parameters and lifetime totals), so
   * a failure anywhere leaves the agent as it was before the run.
   */
  applyRun(
    agentId: string,
    changes: OptimizerRunChanges,
    alongside: (repositories: Repositories) => Promise<void>,
  ): Promise<SnapshotEvent>
  /** When the agent's newest snapshot was taken, or null before its first run. */
  lastRunAt(agentId: string): Promise<Date | null>
  /** The newest `last` snapshots of one agent (of every agent for null), oldest first. */
  snapshots(agentId: string | null, last: number): Promise<SnapshotEvent[]>
}

import type { AppFactType, MemoryIsolation, RunKind, RunStatus } from './rules.ts'

/**
 * Trajectory memory's records as the domain knows them, without what storage adds (the agent
 * that owns them, their memory scope, row ids): the engine's port extends them, the
 * `.agent-memory/` import plans them and the export writes them. `extra` holds the fields of an
 * imported file Engram does not know, verbatim, so an export writes them back (null: none).
 */
export type RecordExtra = Record<string, unknown> | null

/** One run of the registry (spec 004's RunManifest). `id` is the run id, unique per agent. */
export interface RunFields {
  id: string
  /** Groups related runs (orchestrator-provided, or generated at start). */
  sessionId: string
  /** Set on resume and fork: the run this one continues or branches from. */
  parentRunId: string | null
  kind: RunKind
  isolation: MemoryIsolation
  status: RunStatus
  goal: string
  domain: string
  startUrl: string | null
  /** Updated by progress reports during the run. */
  currentUrl: string | null
  finalUrl: string | null
  turnCount: number
  /** Null while running. */
  success: boolean | null
  /** The agent's own account of what it accomplished (spec 004's outcome/summary). */
  summary: string | null
  result: string | null
  /** Why it failed or stopped. */
  reason: string | null
  artifactPaths: string[]
  model: string | null
  /** Set at the end: given by the caller, or completedAt − startedAt. */
  durationMs: number | null
  extra: RecordExtra
  startedAt: Date
  updatedAt: Date
  completedAt: Date | null
}

/**
 * A run session entry: one completed or failed run as the domain's SESSION HISTORY shows it
 * (spec 004's Session). Engram keeps the last `sessionHistoryLimit` per (scope, domain).
 */
export interface RunSessionFields {
  domain: string
  /** The run session id (spec 004's Session.id: the sessionId runs share). */
  sessionId: string
  /** The run it records; null for an imported entry with no manifest. */
  runId: string | null
  goal: string
  outcome: string
  success: boolean
  finalUrl: string | null
  turnsUsed: number
  durationMs: number
  /** When the run ended (spec 004's timestamp). */
  endedAt: Date
  extra: RecordExtra
}

/**
 * One step of a trajectory. Engram's shape for any acting agent: an action verb ("click", "type",
 * "navigate", "run_tool"), its target (a selector, a file, a tool), a value (typed text, a key, a
 * URL to go to, an argument), the page or location it ran on, and whether its effect was verified.
 */
export interface TrajectoryStep {
  action: string
  selector: string | null
  value: string | null
  url: string | null
  verified: boolean | null
  durationMs: number | null
  extra: RecordExtra
}

export interface TrajectoryFields {
  domain: string
  /** The URL origin the run worked on ("https://www.example.com"), when known. */
  origin: string | null
  goal: string
  /** goalWords(goal): what matching compares; adapters index them. */
  words: string[]
  /** The run it was recorded from, null when recorded directly or imported without one. */
  runId: string | null
  steps: TrajectoryStep[]
  stepCount: number
  verifiedCount: number
  /** Spec 004 stores successful runs; an imported unsuccessful one is kept but never offered. */
  success: boolean
  turns: number
  durationMs: number
  outcome: string | null
  model: string | null
  recordedAt: Date
  extra: RecordExtra
}

export interface AppFactFields {
  domain: string
  type: AppFactType
  key: string
  value: string
  confidence: number
  /** Observations that confirmed it (spec 004's sources). */
  sources: number
  lastSeenAt: Date
  createdAt: Date
  extra: RecordExtra
}

export interface SelectorFields {
  domain: string
  /** The element's identity, e.g. `button "Search"`. */
  element: string
  selector: string
  successCount: number
  failureCount: number
  consecutiveFailures: number
  lastUsedAt: Date
  createdAt: Date
  extra: RecordExtra
}

/** A cross-domain optimisation hint (spec 004's hints.json). */
export interface HintFields {
  text: string
  createdAt: Date
  updatedAt: Date
  extra: RecordExtra
}

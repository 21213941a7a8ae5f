import type { AppFactType, MemoryIsolation, SelectorOutcome } from '@engram/core'
import type {
  AppFactRecord,
  RunRecord,
  RunSessionRecord,
  SelectorRecord,
  TrajectoryRecord,
} from '../ports/trajectories.ts'

// The shapes trajectory memory's use cases take and answer (the registry's and the records').

export interface StepInput {
  action: string
  selector?: string | null
  value?: string | null
  url?: string | null
  verified?: boolean | null
  durationMs?: number | null
}

export interface FactInput {
  type: AppFactType
  key: string
  value: string
}

export interface SelectorInput {
  element: string
  selector: string
  outcome?: SelectorOutcome
}

export interface StartRunInput {
  runId?: string | null
  sessionId?: string | null
  goal: string
  domain?: string | null
  startUrl?: string | null
  isolation?: MemoryIsolation | null
  scope?: string | null
  model?: string | null
}

export interface RunProgressInput {
  currentUrl?: string | null
  turnCount?: number | null
  summary?: string | null
}

export interface RunEndInput {
  /** The agent's own account of what it did (kept as the run's summary). */
  outcome?: string | null
  result?: string | null
  finalUrl?: string | null
  turnCount?: number | null
  durationMs?: number | null
  facts?: FactInput[] | null
  selectors?: SelectorInput[] | null
  artifactPaths?: string[] | null
  model?: string | null
}

export interface CompleteRunInput extends RunEndInput {
  steps?: StepInput[] | null
}

export interface FailRunInput extends RunEndInput {
  reason: string
}

/** What ending a run recorded (memory OFF: the run alone). */
export interface RunEnd {
  run: RunRecord
  trajectory: TrajectoryRecord | null
  facts: AppFactRecord[]
  selectors: SelectorRecord[]
  session: RunSessionRecord | null
}

export interface RunPage {
  totalCount: number
  runs: RunRecord[]
  nextCursor: string | null
}

export interface RunLineage {
  rootRunId: string
  runs: { run: RunRecord; depth: number }[]
  ancestry: string[]
  parentMissing: boolean
  truncated: boolean
}

/** Where a record call writes: the scope named (default "default"), or the run's when a run is named. */
export interface RecordTarget {
  domain: string
  scope?: string | null
  /** The run that learnt it: it must be the agent's, and its scope is used. */
  runId?: string | null
}

export interface RecordTrajectoryInput extends RecordTarget {
  goal: string
  steps: StepInput[]
  origin?: string | null
  turns?: number | null
  durationMs?: number | null
  outcome?: string | null
  model?: string | null
}

/** A page of a list read: where it starts and how many (default and most: the limits'). */
export interface PageRequest {
  offset?: number | null
  limit?: number | null
}

export interface Page<T> {
  totalCount: number
  items: T[]
}

/** The trajectory a run's steps become (the registry's end of run, or recordTrajectory). */
export interface TrajectoryFields {
  scope: string
  domain: string
  goal: string
  steps: StepInput[]
  origin: string | null
  runId: string | null
  turns: number
  durationMs: number
  outcome: string | null
  model: string | null
}

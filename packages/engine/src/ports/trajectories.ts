import type {
  AppFactType,
  FactRules,
  MemoryIsolation,
  RunKind,
  RunStatus,
  SelectorOutcome,
} from '@engram/core'

/**
 * Trajectory memory's storage (spec 004, issue 16; the rules are core's `trajectories/`). Every
 * call is scoped to its agent: another agent's id finds nothing and changes nothing. Memory records
 * (trajectories, run sessions, app facts, selectors, hints) also live in a memory scope (spec 004's
 * A/B isolation: "default", an evaluation track's name, or "run:<runId>"); the run registry's
 * manifests are per agent and say which scope their run used.
 *
 * `extra` on a record holds the fields of an imported `.agent-memory/` file Engram does not know,
 * verbatim, so an export writes them back (a JSON object, or null).
 */
export type Extra = Record<string, unknown> | null

/** One entry of the run registry (spec 004's RunManifest). `id` is the run id, unique per agent. */
export interface RunRecord {
  id: string
  agentId: string
  /** Groups related runs (orchestrator-provided, or generated at start). */
  sessionId: string
  /** Set on resume and fork: the run this one continues or branches from. */
  parentRunId: string | null
  kind: RunKind
  isolation: MemoryIsolation
  /** The memory scope the run reads and writes; null when its memory is OFF. */
  scope: string | null
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
  extra: Extra
  startedAt: Date
  updatedAt: Date
  completedAt: Date | null
}

export type NewRun = Omit<RunRecord, 'agentId'>

export type RunChanges = Partial<
  Pick<
    RunRecord,
    | 'status'
    | 'currentUrl'
    | 'finalUrl'
    | 'turnCount'
    | 'success'
    | 'summary'
    | 'result'
    | 'reason'
    | 'artifactPaths'
    | 'model'
    | 'durationMs'
    | 'completedAt'
    | 'extra'
  >
> & { updatedAt: Date }

export interface RunFilter {
  domain?: string
  status?: RunStatus
  sessionId?: string
  parentRunId?: string
  scope?: string
}

/** A page position in the runs list: newest updatedAt first, ties by id descending. */
export interface RunCursor {
  updatedAt: Date
  id: string
}

/**
 * A run session entry: one completed or failed run as the domain's SESSION HISTORY shows it
 * (spec 004's Session). Engram keeps the last `sessionHistoryLimit` per (scope, domain).
 */
export interface RunSessionRecord {
  id: string
  agentId: string
  scope: string
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
  extra: Extra
}

export type NewRunSession = Omit<RunSessionRecord, 'id' | 'agentId'>

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
  extra: Extra
}

export interface TrajectoryRecord {
  id: string
  agentId: string
  scope: string
  domain: string
  /** The URL origin the run worked on ("https://www.example.com"), when known. */
  origin: string | null
  goal: string
  /** core's goalWords(goal): what matching compares; adapters index them. */
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
  extra: Extra
}

export type NewTrajectory = Omit<TrajectoryRecord, 'agentId'>

/** What reference matching reads of a trajectory before it fetches the winner's steps. */
export type TrajectoryCandidate = Pick<
  TrajectoryRecord,
  'id' | 'goal' | 'words' | 'recordedAt' | 'durationMs' | 'stepCount' | 'verifiedCount' | 'success' | 'runId'
>

export interface AppFactRecord {
  id: string
  agentId: string
  scope: string
  domain: string
  type: AppFactType
  key: string
  value: string
  confidence: number
  /** Observations that confirmed it (spec 004's sources). */
  sources: number
  lastSeenAt: Date
  createdAt: Date
  extra: Extra
}

export type NewAppFact = Omit<AppFactRecord, 'id' | 'agentId'>

export interface SelectorRecord {
  id: string
  agentId: string
  scope: string
  domain: string
  /** The element's identity, e.g. `button "Search"`. */
  element: string
  selector: string
  successCount: number
  failureCount: number
  consecutiveFailures: number
  lastUsedAt: Date
  createdAt: Date
  extra: Extra
}

export type NewSelector = Omit<SelectorRecord, 'id' | 'agentId'>

/** A cross-domain optimisation hint (spec 004's hints.json). */
export interface HintRecord {
  id: string
  agentId: string
  scope: string
  text: string
  createdAt: Date
  updatedAt: Date
  extra: Extra
}

export type NewHint = Omit<HintRecord, 'id' | 'agentId'>

/** What a domain holds in one scope (the dashboard's domain list). */
export interface RunDomainSummary {
  scope: string
  domain: string
  runs: number
  trajectories: number
  runSessions: number
  facts: number
  selectors: number
  lastActivityAt: Date
}

/** How many records a forget call removed, per kind. */
export interface TrajectoryForgetResult {
  runs: number
  trajectories: number
  runSessions: number
  facts: number
  selectors: number
  hints: number
}

/** Everything of one agent (agent export) or of one scope (a `.agent-memory/` export). */
export interface TrajectoryMemorySnapshot {
  runs: RunRecord[]
  runSessions: RunSessionRecord[]
  trajectories: TrajectoryRecord[]
  facts: AppFactRecord[]
  selectors: SelectorRecord[]
  hints: HintRecord[]
}

export interface ListWindow {
  offset: number
  limit: number
}

export interface TrajectoryMemoryRepository {
  // --- the run registry -----------------------------------------------------------------------
  /** CONFLICT (core's ConflictError, field `runId`) when the agent already has a run by that id. */
  insertRun(agentId: string, run: NewRun): Promise<RunRecord>
  findRun(agentId: string, id: string): Promise<RunRecord | null>
  /** NOT_FOUND when the run does not exist. */
  updateRun(agentId: string, id: string, changes: RunChanges): Promise<RunRecord>
  /** Newest updatedAt first (ties: id descending), after the cursor when one is given. */
  listRuns(agentId: string, filter: RunFilter, after: RunCursor | null, limit: number): Promise<RunRecord[]>
  countRuns(agentId: string, filter: RunFilter): Promise<number>
  /** The runs whose parentRunId is one of `parentIds` (a lineage walk's next level), oldest first. */
  childRuns(agentId: string, parentIds: readonly string[], limit: number): Promise<RunRecord[]>
  /**
   * Deletes a run and what it left in memory, in one transaction: its manifest, the trajectories
   * and run session entries recorded from it, and its contributions to facts and selectors (each
   * fact loses the confirmations the run gave it and is deleted when none remain; each selector
   * loses the run's successes and failures and is deleted when both reach zero). Children keep
   * their parentRunId (lineage shows the parent as gone). Null when there was no such run.
   */
  forgetRun(agentId: string, id: string): Promise<TrajectoryForgetResult | null>

  // --- trajectories ---------------------------------------------------------------------------
  /** Inserts a trajectory, then drops the domain's oldest beyond `keepPerDomain` (same scope). */
  insertTrajectory(
    agentId: string,
    trajectory: NewTrajectory,
    keepPerDomain: number,
  ): Promise<TrajectoryRecord>
  findTrajectory(agentId: string, id: string): Promise<TrajectoryRecord | null>
  /** Newest first. `runId` narrows to one run's. */
  listTrajectories(
    agentId: string,
    filter: { scope?: string; domain?: string; runId?: string },
    window: ListWindow,
  ): Promise<TrajectoryRecord[]>
  countTrajectories(
    agentId: string,
    filter: { scope?: string; domain?: string; runId?: string },
  ): Promise<number>
  /**
   * Reference matching's candidates: successful trajectories of (scope, domain) recorded at or
   * after `since` that share at least `minShared` of `words` (the adapter may use a word index),
   * without their steps. At most `limit`, most shared words first then newest.
   */
  trajectoryCandidates(
    agentId: string,
    query: { scope: string; domain: string; words: readonly string[]; minShared: number; since: Date },
    limit: number,
  ): Promise<TrajectoryCandidate[]>
  deleteTrajectory(agentId: string, id: string): Promise<boolean>

  // --- run session history --------------------------------------------------------------------
  /** Adds an entry, then keeps only the newest `keepLast` of its (scope, domain), by endedAt. */
  insertRunSession(agentId: string, entry: NewRunSession, keepLast: number): Promise<RunSessionRecord>
  /** Newest endedAt first. */
  runSessions(agentId: string, scope: string, domain: string, limit: number): Promise<RunSessionRecord[]>

  // --- app knowledge --------------------------------------------------------------------------
  /**
   * Applies one observation atomically with core's observeFact: confirms the same value, halves
   * the others of the (type, key), adds the new value, prunes below the threshold. A `runId` is
   * recorded as a contribution (forgetRun takes it back). Returns the observed value's fact.
   */
  observeFact(
    agentId: string,
    observation: { scope: string; domain: string; type: AppFactType; key: string; value: string },
    at: Date,
    rules: FactRules,
    runId: string | null,
  ): Promise<AppFactRecord>
  /** Confidence descending, then lastSeenAt descending. */
  listFacts(
    agentId: string,
    filter: { scope: string; domain?: string; type?: AppFactType; minConfidence?: number },
    window: ListWindow,
  ): Promise<AppFactRecord[]>
  countFacts(
    agentId: string,
    filter: { scope: string; domain?: string; type?: AppFactType; minConfidence?: number },
  ): Promise<number>
  /** Writes a fact as it is (an import): replaces the one with the same (scope, domain, type, key, value). */
  putFact(agentId: string, fact: NewAppFact): Promise<AppFactRecord>
  deleteFact(agentId: string, id: string): Promise<boolean>

  // --- selectors ------------------------------------------------------------------------------
  /** Applies core's observeSelector atomically (creating the entry on first sight); records a run's contribution. */
  observeSelector(
    agentId: string,
    observation: {
      scope: string
      domain: string
      element: string
      selector: string
      outcome: SelectorOutcome
    },
    at: Date,
    runId: string | null,
  ): Promise<SelectorRecord>
  /** Ranked by core's compareSelectors order (most successes first). */
  listSelectors(
    agentId: string,
    filter: { scope: string; domain?: string; element?: string },
    window: ListWindow,
  ): Promise<SelectorRecord[]>
  countSelectors(
    agentId: string,
    filter: { scope: string; domain?: string; element?: string },
  ): Promise<number>
  /** Writes a selector entry as it is (an import): replaces the one with the same (scope, domain, element, selector). */
  putSelector(agentId: string, selector: NewSelector): Promise<SelectorRecord>
  deleteSelector(agentId: string, id: string): Promise<boolean>

  // --- hints ----------------------------------------------------------------------------------
  /** Oldest first. */
  listHints(agentId: string, scope: string): Promise<HintRecord[]>
  addHint(agentId: string, hint: NewHint): Promise<HintRecord>
  updateHint(
    agentId: string,
    id: string,
    changes: { text?: string; extra?: Extra; updatedAt: Date },
  ): Promise<HintRecord>
  deleteHint(agentId: string, id: string): Promise<boolean>

  // --- domains, scopes, the whole agent -------------------------------------------------------
  /** Every (scope, domain) with anything in it, most recent activity first; `scope` narrows. */
  domains(agentId: string, scope?: string): Promise<RunDomainSummary[]>
  /** Deletes a domain in one scope: its runs (manifests whose scope is it), trajectories, run sessions, facts and selectors. */
  forgetDomain(agentId: string, scope: string, domain: string): Promise<TrajectoryForgetResult>
  /** Deletes a memory scope's records (trajectories, run sessions, facts, selectors, hints); run manifests stay. */
  forgetScope(agentId: string, scope: string): Promise<TrajectoryForgetResult>
  /** Every record of the agent, or of one scope (runs: those whose scope is it). */
  snapshot(agentId: string, scope?: string): Promise<TrajectoryMemorySnapshot>
  /** Writes a snapshot's records as they are (agent import); ids are kept. */
  restore(agentId: string, snapshot: TrajectoryMemorySnapshot): Promise<void>
  /** Everything of the agent (clearing its memory). */
  clear(agentId: string): Promise<TrajectoryForgetResult>
}

import type {
  AppFactFields,
  AppFactType,
  FactRules,
  HintFields,
  RecordExtra,
  RunFields,
  RunSessionFields,
  RunStatus,
  SelectorFields,
  SelectorOutcome,
  TrajectoryFields,
  TrajectoryStep,
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
export type Extra = RecordExtra
export type { TrajectoryStep }

/** One entry of the run registry (core's RunFields), with its agent and the memory scope it used. */
export interface RunRecord extends RunFields {
  agentId: string
  /** The memory scope the run reads and writes; null when its memory is OFF. */
  scope: string | null
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

/** A SESSION HISTORY entry (core's RunSessionFields) in one scope. */
export interface RunSessionRecord extends RunSessionFields {
  id: string
  agentId: string
  scope: string
}

export type NewRunSession = Omit<RunSessionRecord, 'id' | 'agentId'>

export interface TrajectoryRecord extends TrajectoryFields {
  id: string
  agentId: string
  scope: string
}

export type NewTrajectory = Omit<TrajectoryRecord, 'agentId'>

/** What reference matching reads of a trajectory before it fetches the winner's steps. */
export type TrajectoryCandidate = Pick<
  TrajectoryRecord,
  'id' | 'goal' | 'words' | 'recordedAt' | 'durationMs' | 'stepCount' | 'verifiedCount' | 'success' | 'runId'
>

export interface AppFactRecord extends AppFactFields {
  id: string
  agentId: string
  scope: string
}

export type NewAppFact = Omit<AppFactRecord, 'id' | 'agentId'>

export interface SelectorRecord extends SelectorFields {
  id: string
  agentId: string
  scope: string
}

export type NewSelector = Omit<SelectorRecord, 'id' | 'agentId'>

/** A cross-domain optimisation hint (spec 004's hints.json). */
export interface HintRecord extends HintFields {
  id: string
  agentId: string
  scope: string
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

import { operation } from './operation.ts'
import * as s from './schemas.ts'

/**
 * Trajectory memory's operations (issue 16, spec 004): the run registry, the memory a run leaves on
 * its domain, the run context and the `.agent-memory/` migration. Part of the catalog (spread into
 * it in catalog.ts); its subscription, runEvents, stays with the other subscriptions there.
 */
export const runOperations = {
  startRun: operation({
    kind: 'mutation',
    description:
      'Registers the start of an acting run (a browser, coding or tool-using agent working towards a goal on a domain). Give a sessionId to chain related runs; isolation SHARED (default) uses the scope’s memory, PER_RUN a clean scope of its own, OFF no memory. Then call runContext for what to inject, reportRunProgress as it goes, and completeRun or failRun at the end.',
    input: s.StartRunInputSchema,
    output: s.RunSchema,
    graphql: { field: 'startRun', inputArg: 'input' },
  }),
  reportRunProgress: operation({
    kind: 'mutation',
    description:
      'Updates a running run’s current URL, turn count and what it is doing (spec 004: every 3 turns); watchers of runEvents see it live.',
    input: s.RunProgressInputSchema,
    output: s.RunSchema,
    graphql: { field: 'reportRunProgress', inputArg: 'input' },
  }),
  completeRun: operation({
    kind: 'mutation',
    description:
      'Ends a run successfully: keeps its steps as a trajectory for the next similar goal on the domain, adds it to the domain’s session history, and records the app facts and selectors it learnt.',
    input: s.CompleteRunInputSchema,
    output: s.RunEndSchema,
    graphql: { field: 'completeRun', inputArg: 'input' },
  }),
  failRun: operation({
    kind: 'mutation',
    description:
      'Ends a run that failed, with the reason: it enters the session history as a failure and its facts and selectors are recorded (failed selectors count against them); no trajectory is kept.',
    input: s.FailRunInputSchema,
    output: s.RunEndSchema,
    graphql: { field: 'failRun', inputArg: 'input' },
  }),
  resumeRun: operation({
    kind: 'mutation',
    description:
      'Starts a new run continuing a previous one: same run session, starting at its final URL, with parentRunId set (default goal: the previous one’s).',
    input: s.ResumeRunInputSchema,
    output: s.RunSchema,
    graphql: { field: 'resumeRun', inputArg: 'input' },
  }),
  forkRun: operation({
    kind: 'mutation',
    description:
      'Starts a new run branching off a previous one: a new run session, starting at its final URL, with parentRunId set.',
    input: s.ForkRunInputSchema,
    output: s.RunSchema,
    graphql: { field: 'forkRun', inputArg: 'input' },
  }),
  run: operation({
    kind: 'query',
    description: 'One run of the registry by id, or null.',
    input: s.RunInputSchema,
    output: s.RunSchema.nullable(),
    graphql: { field: 'run' },
  }),
  runs: operation({
    kind: 'query',
    description:
      'Runs of the registry, most recently updated first, filtered by domain, status, run session, parent or memory scope; page with `after`.',
    input: s.RunsInputSchema,
    output: s.RunPageSchema,
    graphql: { field: 'runs' },
  }),
  runLineage: operation({
    kind: 'query',
    description:
      'The tree of resumes and forks a run belongs to: its ancestors up to the oldest stored, and every descendant of that root.',
    input: s.RunLineageInputSchema,
    output: s.RunLineageSchema,
    graphql: { field: 'runLineage' },
  }),
  deleteRun: operation({
    kind: 'mutation',
    description:
      'Deletes a run and what it left in memory: its trajectory, its session history entry and the confirmations it gave app facts and selectors.',
    input: s.RunInputSchema,
    output: s.RunDeletionSchema,
    destructive: true,
    graphql: { field: 'deleteRun' },
  }),
  runContext: operation({
    kind: 'query',
    description:
      'What an acting agent’s next decision needs from memory, for a run (or a domain and goal): SESSION HISTORY (priority 50), a REFERENCE TRAJECTORY from the best matching past run (40), APP KNOWLEDGE (30), KNOWN SELECTORS (25) and HINTS (20), trimmed to a token budget lowest priority first, with per-section accounting.',
    input: s.RunContextInputSchema,
    output: s.RunContextSchema,
    graphql: { field: 'runContext' },
  }),
  matchTrajectories: operation({
    kind: 'query',
    description:
      'Past successful trajectories on a domain whose goal overlaps this one (word Jaccard ≥ 0.5, within the expiry), best first; with trace scoring, ranked by similarity 60%, recency 20%, speed 10%, verification 10%.',
    input: s.MatchTrajectoriesInputSchema,
    output: s.TrajectoryMatchSchema.array(),
    graphql: { field: 'matchTrajectories' },
  }),
  recordTrajectory: operation({
    kind: 'mutation',
    description: 'Keeps a successful action sequence for a goal on a domain without the run registry.',
    input: s.RecordTrajectoryInputSchema,
    output: s.TrajectorySchema,
    graphql: { field: 'recordTrajectory', inputArg: 'input' },
  }),
  trajectories: operation({
    kind: 'query',
    description: 'Stored trajectories, newest first, by domain, run or scope.',
    input: s.TrajectoriesInputSchema,
    output: s.TrajectoryPageSchema,
    graphql: { field: 'trajectories' },
  }),
  trajectory: operation({
    kind: 'query',
    description: 'One trajectory with its steps, or null.',
    input: s.RunMemoryByIdInputSchema,
    output: s.TrajectorySchema.nullable(),
    graphql: { field: 'trajectory' },
  }),
  deleteTrajectory: operation({
    kind: 'mutation',
    description: 'Deletes one trajectory.',
    input: s.RunMemoryByIdInputSchema,
    output: s.RunMemoryDeletedSchema,
    destructive: true,
    graphql: { field: 'deleteTrajectory' },
  }),
  runSessions: operation({
    kind: 'query',
    description:
      'A domain’s session history: its last completed and failed runs (5 by default), newest first.',
    input: s.RunSessionsInputSchema,
    output: s.RunSessionSchema.array(),
    graphql: { field: 'runSessions' },
  }),
  recordKnowledge: operation({
    kind: 'mutation',
    description:
      'Records app facts learnt on a domain (timing, selector, pattern, quirk): the same value again raises its confidence by (1 − c)·0.2, a different value halves the old one’s and starts at 0.6; facts under 0.1 are pruned.',
    input: s.RecordKnowledgeInputSchema,
    output: s.AppFactSchema.array(),
    graphql: { field: 'recordKnowledge', inputArg: 'input' },
  }),
  appFacts: operation({
    kind: 'query',
    description: 'App knowledge, highest confidence first, by domain, type and minimum confidence.',
    input: s.AppFactsInputSchema,
    output: s.AppFactPageSchema,
    graphql: { field: 'appFacts' },
  }),
  deleteAppFact: operation({
    kind: 'mutation',
    description: 'Deletes one app fact.',
    input: s.RunMemoryByIdInputSchema,
    output: s.RunMemoryDeletedSchema,
    destructive: true,
    graphql: { field: 'deleteAppFact' },
  }),
  recordSelector: operation({
    kind: 'mutation',
    description:
      'Records which selector found an element (`button "Search"`) on a domain, or failed to: successes rank it, repeated failures stop it being offered.',
    input: s.RecordSelectorInputSchema,
    output: s.KnownSelectorSchema.array(),
    graphql: { field: 'recordSelector', inputArg: 'input' },
  }),
  knownSelectors: operation({
    kind: 'query',
    description: 'The selector cache, most successful first, by domain and element.',
    input: s.KnownSelectorsInputSchema,
    output: s.KnownSelectorPageSchema,
    graphql: { field: 'knownSelectors' },
  }),
  deleteKnownSelector: operation({
    kind: 'mutation',
    description: 'Deletes one selector entry.',
    input: s.RunMemoryByIdInputSchema,
    output: s.RunMemoryDeletedSchema,
    destructive: true,
    graphql: { field: 'deleteKnownSelector' },
  }),
  runHints: operation({
    kind: 'query',
    description: 'Cross-domain optimisation hints of a memory scope, oldest first.',
    input: s.RunHintsInputSchema,
    output: s.RunHintSchema.array(),
    graphql: { field: 'runHints' },
  }),
  addRunHint: operation({
    kind: 'mutation',
    description: 'Adds a cross-domain optimisation hint (injected into every run context of the scope).',
    input: s.AddRunHintInputSchema,
    output: s.RunHintSchema,
    graphql: { field: 'addRunHint', inputArg: 'input' },
  }),
  updateRunHint: operation({
    kind: 'mutation',
    description: 'Rewrites a hint.',
    input: s.UpdateRunHintInputSchema,
    output: s.RunHintSchema,
    graphql: { field: 'updateRunHint', inputArg: 'input' },
  }),
  deleteRunHint: operation({
    kind: 'mutation',
    description: 'Deletes a hint.',
    input: s.RunMemoryByIdInputSchema,
    output: s.RunMemoryDeletedSchema,
    destructive: true,
    graphql: { field: 'deleteRunHint' },
  }),
  runDomains: operation({
    kind: 'query',
    description: 'The domains with trajectory memory, most recent activity first, with what each holds.',
    input: s.RunDomainsInputSchema,
    output: s.RunDomainSchema.array(),
    graphql: { field: 'runDomains' },
  }),
  deleteRunDomain: operation({
    kind: 'mutation',
    description:
      'Deletes a domain’s runs, trajectories, session history, app facts and selectors in one scope.',
    input: s.DeleteRunDomainInputSchema,
    output: s.RunDeletionSchema,
    destructive: true,
    graphql: { field: 'deleteRunDomain' },
  }),
  clearRunMemoryScope: operation({
    kind: 'mutation',
    description:
      'Deletes a memory scope’s trajectories, session history, facts, selectors and hints (an A/B evaluation’s cleanup); the run registry keeps its entries.',
    input: s.ClearRunMemoryScopeInputSchema,
    output: s.RunDeletionSchema,
    destructive: true,
    graphql: { field: 'clearRunMemoryScope' },
  }),
  importAgentMemory: operation({
    kind: 'mutation',
    description:
      'Imports a `.agent-memory/` directory (spec 004’s layout: domains/<domain>/{knowledge.json, selectors.json, trajectories/*.json}, agent-runs/*.json, hints.json) into a memory scope, keeping fields Engram does not know for the export.',
    input: s.ImportAgentMemoryInputSchema,
    output: s.AgentMemoryImportSchema,
    graphql: { field: 'importAgentMemory', inputArg: 'input' },
  }),
  exportAgentMemory: operation({
    kind: 'query',
    description: 'A memory scope as a `.agent-memory/` directory’s files, in spec 004’s formats.',
    input: s.ExportAgentMemoryInputSchema,
    output: s.AgentMemoryExportSchema,
    graphql: { field: 'exportAgentMemory' },
  }),
} as const

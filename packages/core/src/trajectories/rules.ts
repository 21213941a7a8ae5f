import { z } from 'zod'

/**
 * Trajectory memory (spec 004, issue 16): the memory of an agent that acts in the world. A run is
 * one execution towards a goal on a domain (a site, a repository, a tool's host); after it ends,
 * Engram keeps what helps the next run on that domain:
 * - the run's steps as a trajectory, replayed as a REFERENCE TRAJECTORY for a similar goal;
 * - a run session entry (spec 004's "session"), the rolling SESSION HISTORY of the domain;
 * - app facts (APP KNOWLEDGE), confidence-scored, confirmed and contradicted across runs;
 * - known selectors (KNOWN SELECTORS) per element identity, ranked by successes;
 * - cross-domain hints.
 * The run registry (start, progress, complete, fail, resume, fork, lineage) serves orchestrators.
 *
 * Every number of spec 004 (and of the system it documents, where the spec is silent) is a default
 * here and configurable.
 */

export const RUN_STATUSES = ['RUNNING', 'COMPLETED', 'FAILED'] as const
export type RunStatus = (typeof RUN_STATUSES)[number]

/** How a run began: fresh, continuing another (same run session) or branching off one (a new session). */
export const RUN_KINDS = ['START', 'RESUME', 'FORK'] as const
export type RunKind = (typeof RUN_KINDS)[number]

/** Spec 004's fact types. */
export const APP_FACT_TYPES = ['TIMING', 'SELECTOR', 'PATTERN', 'QUIRK'] as const
export type AppFactType = (typeof APP_FACT_TYPES)[number]

/** Where a selector observation came from: it worked, or it did not. */
export const SELECTOR_OUTCOMES = ['SUCCESS', 'FAILURE'] as const
export type SelectorOutcome = (typeof SELECTOR_OUTCOMES)[number]

/**
 * Spec 004's benchmark isolation. SHARED: the run reads and writes its memory scope (default
 * "default"; an evaluation track names its own so scenarios on one domain share memory within it).
 * PER_RUN: the run gets a fresh scope of its own (`run:<runId>`), so it starts clean and leaves
 * nothing behind for others. OFF: no memory at all (spec 004's --no-memory baseline): the run's
 * context is empty and its end records nothing but the registry entry.
 */
export const MEMORY_ISOLATIONS = ['SHARED', 'PER_RUN', 'OFF'] as const
export type MemoryIsolation = (typeof MEMORY_ISOLATIONS)[number]

export const DEFAULT_RUN_SCOPE = 'default'

/** The memory scope a run reads and writes, or null when its memory is off. */
export function runMemoryScope(
  isolation: MemoryIsolation,
  scope: string | null | undefined,
  runId: string,
): string | null {
  if (isolation === 'OFF') return null
  if (isolation === 'PER_RUN') return `run:${runId}`
  return scope ?? DEFAULT_RUN_SCOPE
}

/** The run context's sections, in spec 004's priority order (higher survives trimming). */
export const RUN_CONTEXT_SECTIONS = [
  'SESSION_HISTORY',
  'REFERENCE_TRAJECTORY',
  'APP_KNOWLEDGE',
  'KNOWN_SELECTORS',
  'HINTS',
] as const
export type RunContextSection = (typeof RUN_CONTEXT_SECTIONS)[number]

const weight = z.number().min(0).max(1)

export const TrajectoryRulesSchema = z.object({
  /** Goal-word Jaccard a trajectory needs to be a reference (spec 004: 0.5; a match is ≥ it). */
  similarityThreshold: z.number().min(0).max(1).default(0.5),
  /** Weighted ranking of matches (spec 004's --trace-scoring, off by default). */
  traceScoring: z.boolean().default(false),
  /** Trajectories older than this are not offered (spec 004's traceTtlDays). */
  traceTtlDays: z.number().int().min(1).max(3_650).default(30),
  /** Trace scoring's blend: similarity 60%, recency 20%, speed 10%, verification rate 10%. */
  scoringWeights: z
    .object({
      similarity: weight.default(0.6),
      recency: weight.default(0.2),
      speed: weight.default(0.1),
      verification: weight.default(0.1),
    })
    .default({ similarity: 0.6, recency: 0.2, speed: 0.1, verification: 0.1 }),
  /** Recency is exp(−age / recencyDays): a two-week-old trajectory scores 1/e (the documented system's 14). */
  recencyDays: z.number().min(0.01).max(3_650).default(14),
  /** Speed is 1 / (1 + duration / speedScaleMs): a one-minute run scores ½. */
  speedScaleMs: z.number().int().min(1).max(86_400_000).default(60_000),
  /** Completed runs kept per domain in the session history (spec 004: the last 5). */
  sessionHistoryLimit: z.number().int().min(1).max(100).default(5),
  /** The most recent sessions shown in full (with final URL); older ones get one line each. */
  sessionHistoryFull: z.number().int().min(0).max(100).default(2),
  /** A new app fact's confidence. */
  factInitialConfidence: z.number().min(0).max(1).default(0.6),
  /** A confirmation adds (1 − c) · step. */
  factConfirmStep: z.number().min(0).max(1).default(0.2),
  /** A contradiction multiplies the old value's confidence by this. */
  factContradictionFactor: z.number().min(0).max(1).default(0.5),
  /** Facts below this confidence are pruned (spec 004: 0.1). */
  factPruneBelow: z.number().min(0).max(1).default(0.1),
  /** Facts at or above this confidence enter the run context. */
  factContextMinConfidence: z.number().min(0).max(1).default(0.5),
  /** Known selectors offered in the run context. */
  selectorContextLimit: z.number().int().min(0).max(1_000).default(20),
  /** A selector that failed this many times in a row (no success between) is no longer offered. */
  selectorFailureLimit: z.number().int().min(1).max(1_000).default(3),
  /** Progress updates are expected every this many turns (spec 004: the current URL every 3 turns). */
  progressEveryTurns: z.number().int().min(1).max(1_000).default(3),
  /** Section priorities (spec 004: session history 50, reference 40, knowledge 30, selectors 25; hints below). */
  priorities: z
    .object({
      SESSION_HISTORY: z.number().int().min(0).max(1_000).default(50),
      REFERENCE_TRAJECTORY: z.number().int().min(0).max(1_000).default(40),
      APP_KNOWLEDGE: z.number().int().min(0).max(1_000).default(30),
      KNOWN_SELECTORS: z.number().int().min(0).max(1_000).default(25),
      HINTS: z.number().int().min(0).max(1_000).default(20),
    })
    .default({
      SESSION_HISTORY: 50,
      REFERENCE_TRAJECTORY: 40,
      APP_KNOWLEDGE: 30,
      KNOWN_SELECTORS: 25,
      HINTS: 20,
    }),
  /** The run context's token budget when the caller gives none. */
  defaultContextBudgetTokens: z.number().int().min(50).max(200_000).default(2_000),
})
export type TrajectoryRules = z.infer<typeof TrajectoryRulesSchema>
export const DEFAULT_TRAJECTORY_RULES: TrajectoryRules = TrajectoryRulesSchema.parse({})

/** Every size is bounded; each limit travels in the typed error that names its field. */
export const TrajectoryLimitsSchema = z.object({
  maxRunIdChars: z.number().int().min(8).max(1_000).default(128),
  maxGoalChars: z.number().int().min(10).max(100_000).default(2_000),
  maxDomainChars: z.number().int().min(4).max(1_000).default(253),
  maxUrlChars: z.number().int().min(10).max(100_000).default(2_048),
  /** outcome, summary, result, reason. */
  maxOutcomeChars: z.number().int().min(10).max(1_000_000).default(10_000),
  maxStepsPerTrajectory: z.number().int().min(1).max(100_000).default(500),
  maxActionChars: z.number().int().min(1).max(1_000).default(64),
  maxSelectorChars: z.number().int().min(1).max(100_000).default(1_000),
  /** A step's typed value (text, key, url...). */
  maxStepValueChars: z.number().int().min(1).max(1_000_000).default(10_000),
  maxElementChars: z.number().int().min(1).max(100_000).default(500),
  maxFactKeyChars: z.number().int().min(1).max(10_000).default(200),
  maxFactValueChars: z.number().int().min(1).max(100_000).default(2_000),
  maxFactsPerCall: z.number().int().min(1).max(10_000).default(100),
  maxSelectorsPerCall: z.number().int().min(1).max(10_000).default(200),
  maxHintChars: z.number().int().min(1).max(1_000_000).default(20_000),
  maxArtifactPaths: z.number().int().min(0).max(10_000).default(100),
  maxTurns: z.number().int().min(1).max(100_000_000).default(1_000_000),
  maxModelChars: z.number().int().min(1).max(1_000).default(200),
  /** A memory scope's name (isolation); run scopes are "run:<runId>". */
  maxScopeChars: z.number().int().min(8).max(1_000).default(140),
  /** Fields Engram does not know, kept verbatim from an imported record (JSON bytes per record). */
  maxExtraBytes: z.number().int().min(0).max(10_000_000).default(65_536),
  /** Runs, trajectories, facts... one list read returns. */
  maxListLimit: z.number().int().min(1).max(10_000).default(200),
  defaultListLimit: z.number().int().min(1).max(10_000).default(20),
  /** Runs one lineage read walks (a tree of resumes and forks). */
  maxLineageRuns: z.number().int().min(1).max(100_000).default(500),
  /** Trajectories kept per (agent, scope, domain); the oldest go past it. */
  maxTrajectoriesPerDomain: z.number().int().min(1).max(10_000_000).default(100_000),
  /** An imported .agent-memory directory: files and total bytes. */
  maxImportFiles: z.number().int().min(1).max(1_000_000).default(20_000),
  maxImportBytes: z.number().int().min(1).max(10_000_000_000).default(50_000_000),
})
export type TrajectoryLimits = z.infer<typeof TrajectoryLimitsSchema>
export const DEFAULT_TRAJECTORY_LIMITS: TrajectoryLimits = TrajectoryLimitsSchema.parse({})

/** Run and session ids come from orchestrators: letters, digits and _ - . : (file-name safe in an export). */
export const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]*$/
/** A memory scope: a slug, or "run:<runId>" for a per-run scope. */
export const RUN_SCOPE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]*$/

/**
 * A run id in the documented system's shape, `run_<ms>_<6 base-36 chars>`, so ids sort by time and
 * an export reads like its own files. `random` is injected (tests are seeded).
 */
export function newRunId(nowMs: number, random: () => number, prefix = 'run'): string {
  let suffix = ''
  for (let i = 0; i < 6; i++) suffix += Math.floor(random() * 36).toString(36)
  return `${prefix}_${nowMs}_${suffix}`
}

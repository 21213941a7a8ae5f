import { z } from 'zod'
import { CONTRACT_LIMITS as L, RUN_ID_PATTERN } from '../limits.ts'
import { agent, IdSchema, limitIssue, unit } from './fields.ts'

// Trajectory memory (spec 004, issue 16): the run registry, trajectories, run sessions, app
// knowledge, known selectors, hints, the run context and the `.agent-memory/` migration. One file
// for the family.

export const RunStatusSchema = z.enum(['RUNNING', 'COMPLETED', 'FAILED'])
export const RunKindSchema = z.enum(['START', 'RESUME', 'FORK'])
export const MemoryIsolationSchema = z.enum(['SHARED', 'PER_RUN', 'OFF'])
export const AppFactTypeSchema = z.enum(['TIMING', 'SELECTOR', 'PATTERN', 'QUIRK'])
export const SelectorOutcomeSchema = z.enum(['SUCCESS', 'FAILURE'])
export const RunContextSectionSchema = z.enum([
  'SESSION_HISTORY',
  'REFERENCE_TRAJECTORY',
  'APP_KNOWLEDGE',
  'KNOWN_SELECTORS',
  'HINTS',
])
export const RunEventKindSchema = z.enum(['STARTED', 'PROGRESS', 'COMPLETED', 'FAILED'])

const text = (max: number) =>
  z
    .string()
    .max(max)
    .refine((s) => s.trim().length > 0, { message: 'must not be blank', ...limitIssue(1) })
const ident = z
  .string()
  .max(L.maxRunIdChars)
  .regex(
    RUN_ID_PATTERN,
    'must start with a letter or digit and use only letters, digits and _ . : - (no spaces)',
  )
export const runId = ident
export const runSessionId = ident
/** A memory scope: "default", an evaluation track's name, or "run:<runId>". */
export const memoryScope = z
  .string()
  .max(L.maxScopeChars)
  .regex(
    RUN_ID_PATTERN,
    'must start with a letter or digit and use only letters, digits and _ . : - (no spaces)',
  )
export const goal = text(L.maxGoalChars)
/** A host ("www.example.com", "localhost:5173"), or a URL whose host is taken, or a name for a place without URLs. */
export const domain = text(L.maxDomainChars)
export const url = z.string().min(1).max(L.maxUrlChars)
const outcome = z.string().max(L.maxOutcomeChars)
const turns = z.number().int().min(0).max(L.maxTurns)
const durationMs = z
  .number()
  .int()
  .min(0)
  .max(365 * 86_400_000)
const listLimit = z.number().int().min(1).max(L.maxRunListLimit)
const offset = z.number().int().min(0).max(10_000_000)
const budgetTokens = z.number().int().min(50).max(L.maxContextBudgetTokens)
const model = z.string().trim().min(1).max(L.maxModelChars)
const scopeField = { scope: memoryScope.optional() }

export const TrajectoryStepInputSchema = z.object({
  /** The action verb: click, type, press, select, scroll, navigate, wait, run_tool... */
  action: text(L.maxActionChars),
  /** Its target: a selector, a file, a tool. */
  selector: z.string().max(L.maxSelectorChars).optional(),
  /** Typed text, a key, a URL to go to, an argument. */
  value: z.string().max(L.maxStepValueChars).optional(),
  /** Where it ran (the page's URL). */
  url: url.optional(),
  verified: z.boolean().optional(),
  durationMs: durationMs.optional(),
})
const steps = z.array(TrajectoryStepInputSchema).max(L.maxStepsPerTrajectory)

export const FactInputSchema = z.object({
  type: AppFactTypeSchema,
  key: text(L.maxFactKeyChars),
  value: text(L.maxFactValueChars),
})
const facts = z.array(FactInputSchema).max(L.maxFactsPerCall)

export const SelectorObservationInputSchema = z.object({
  /** The element's identity, e.g. `button "Search"`. */
  element: text(L.maxElementChars),
  selector: text(L.maxSelectorChars),
  outcome: SelectorOutcomeSchema.optional(),
})
const selectors = z.array(SelectorObservationInputSchema).max(L.maxSelectorsPerCall)

// --- the run registry --------------------------------------------------------------------------

export const StartRunInputSchema = z.object({
  ...agent,
  /** Your id for the run; one is generated (run_<ms>_<6 chars>) when absent. */
  runId: runId.optional(),
  /** Groups related runs; one is generated when absent. */
  sessionId: runSessionId.optional(),
  goal,
  /** The host the run works on; taken from startUrl when absent. */
  domain: domain.optional(),
  startUrl: url.optional(),
  /** SHARED (default): the scope's memory; PER_RUN: a clean scope of its own; OFF: no memory. */
  isolation: MemoryIsolationSchema.optional(),
  /** The memory scope a SHARED run uses (default "default"). */
  ...scopeField,
  model: model.optional(),
})
export const RunProgressInputSchema = z.object({
  ...agent,
  runId,
  currentUrl: url.optional(),
  turnCount: turns.optional(),
  /** What the agent is doing now, in its own words. */
  summary: outcome.optional(),
})
const runEnd = {
  ...agent,
  runId,
  /** The agent's own account of what it did (spec 004's outcome). */
  outcome: outcome.optional(),
  result: outcome.optional(),
  finalUrl: url.optional(),
  turnCount: turns.optional(),
  /** Default: the time since the run started. */
  durationMs: durationMs.optional(),
  /** App knowledge learnt during the run. */
  facts: facts.optional(),
  /** Selectors that worked (or failed) during the run. */
  selectors: selectors.optional(),
  artifactPaths: z.array(z.string().min(1).max(L.maxUrlChars)).max(L.maxArtifactPaths).optional(),
  model: model.optional(),
}
export const CompleteRunInputSchema = z.object({
  ...runEnd,
  /** The action sequence, kept as a trajectory for the next similar goal on the domain. */
  steps: steps.optional(),
})
export const FailRunInputSchema = z.object({ ...runEnd, reason: text(L.maxOutcomeChars) })
export const ResumeRunInputSchema = z.object({
  ...agent,
  /** The run to continue: the new run starts at its final URL, in its run session. */
  runId,
  /** Default: the previous run's goal. */
  goal: goal.optional(),
  newRunId: runId.optional(),
})
export const ForkRunInputSchema = z.object({
  ...agent,
  /** The run to branch from: the new run starts at its final URL, in a new run session. */
  runId,
  goal,
  newRunId: runId.optional(),
  /** The new run session's id; fork_<ms>_<6 chars> when absent. */
  sessionId: runSessionId.optional(),
})
export const RunInputSchema = z.object({ ...agent, runId })
export const RunsInputSchema = z.object({
  ...agent,
  domain: domain.optional(),
  status: RunStatusSchema.optional(),
  sessionId: runSessionId.optional(),
  parentRunId: runId.optional(),
  ...scopeField,
  limit: listLimit.optional(),
  /** The nextCursor of the previous page. */
  after: z.string().max(512).optional(),
})
export const RunLineageInputSchema = z.object({
  ...agent,
  runId,
  /** Runs the lineage may hold (default and most: maxLineageRuns). */
  limit: z.number().int().min(1).max(L.maxLineageRuns).optional(),
})

// --- memory reads and writes -------------------------------------------------------------------

const domainScope = { ...agent, domain, ...scopeField }
export const RunContextInputSchema = z.object({
  ...agent,
  /** The run the context is for (its domain, goal and scope); or give domain and goal. */
  runId: runId.optional(),
  domain: domain.optional(),
  goal: goal.optional(),
  ...scopeField,
  budgetTokens: budgetTokens.optional(),
  /** Override the server's trace scoring and expiry for this read. */
  traceScoring: z.boolean().optional(),
  traceTtlDays: z.number().int().min(1).max(3_650).optional(),
  /** Only these sections (default: all). */
  sections: z.array(RunContextSectionSchema).max(5).optional(),
})
export const MatchTrajectoriesInputSchema = z.object({
  ...domainScope,
  goal,
  traceScoring: z.boolean().optional(),
  traceTtlDays: z.number().int().min(1).max(3_650).optional(),
  limit: z.number().int().min(1).max(50).optional(),
})
export const RecordTrajectoryInputSchema = z.object({
  ...domainScope,
  goal,
  steps: steps.min(1),
  origin: url.optional(),
  runId: runId.optional(),
  turns: turns.optional(),
  durationMs: durationMs.optional(),
  outcome: outcome.optional(),
  model: model.optional(),
})
export const TrajectoriesInputSchema = z.object({
  ...agent,
  domain: domain.optional(),
  runId: runId.optional(),
  ...scopeField,
  offset: offset.optional(),
  limit: listLimit.optional(),
})
export const RunMemoryByIdInputSchema = z.object({ ...agent, id: IdSchema })
export const RunSessionsInputSchema = z.object(domainScope)
export const RecordKnowledgeInputSchema = z.object({
  ...domainScope,
  /** The run that learnt them (deleting the run takes its confirmations back). */
  runId: runId.optional(),
  facts: facts.min(1),
})
export const AppFactsInputSchema = z.object({
  ...agent,
  domain: domain.optional(),
  type: AppFactTypeSchema.optional(),
  minConfidence: unit.optional(),
  ...scopeField,
  offset: offset.optional(),
  limit: listLimit.optional(),
})
export const RecordSelectorInputSchema = z.object({
  ...domainScope,
  runId: runId.optional(),
  selectors: selectors.min(1),
})
export const KnownSelectorsInputSchema = z.object({
  ...agent,
  domain: domain.optional(),
  element: text(L.maxElementChars).optional(),
  ...scopeField,
  offset: offset.optional(),
  limit: listLimit.optional(),
})
export const RunHintsInputSchema = z.object({ ...agent, ...scopeField })
export const AddRunHintInputSchema = z.object({ ...agent, ...scopeField, text: text(L.maxHintChars) })
export const UpdateRunHintInputSchema = z.object({ ...agent, id: IdSchema, text: text(L.maxHintChars) })
export const RunDomainsInputSchema = z.object({ ...agent, ...scopeField })
export const DeleteRunDomainInputSchema = z.object(domainScope)
export const ClearRunMemoryScopeInputSchema = z.object({ ...agent, scope: memoryScope })

/** One file of a `.agent-memory/` directory: its path inside the directory and its text. */
export const AgentMemoryFileSchema = z.object({
  path: z.string().min(1).max(1_024),
  content: z.string(),
})
export const ImportAgentMemoryInputSchema = z.object({
  ...agent,
  /** The scope the directory's memory goes into (default "default"). */
  ...scopeField,
  files: z.array(AgentMemoryFileSchema).max(L.maxImportFiles),
})
export const ExportAgentMemoryInputSchema = z.object({ ...agent, ...scopeField })
export const RunEventsInputSchema = z.object({
  ...agent,
  /** One run's events; or a domain's; or all of the agent's. */
  runId: runId.optional(),
  domain: domain.optional(),
})

// --- outputs -----------------------------------------------------------------------------------

export const RunSchema = z.object({
  id: z.string(),
  sessionId: z.string(),
  parentRunId: z.string().nullable(),
  kind: RunKindSchema,
  isolation: MemoryIsolationSchema,
  scope: z.string().nullable(),
  status: RunStatusSchema,
  goal: z.string(),
  domain: z.string(),
  startUrl: z.string().nullable(),
  currentUrl: z.string().nullable(),
  finalUrl: z.string().nullable(),
  turnCount: z.number().int(),
  success: z.boolean().nullable(),
  summary: z.string().nullable(),
  result: z.string().nullable(),
  reason: z.string().nullable(),
  artifactPaths: z.array(z.string()),
  model: z.string().nullable(),
  durationMs: z.number().int().nullable(),
  startedAt: z.string(),
  updatedAt: z.string(),
  completedAt: z.string().nullable(),
})
export const RunPageSchema = z.object({
  totalCount: z.number().int(),
  runs: z.array(RunSchema),
  /** Give it as `after` for the next page; null on the last. */
  nextCursor: z.string().nullable(),
})
/** What ending a run recorded. */
export const RunEndSchema = z.object({
  run: RunSchema,
  /** The trajectory kept from the run's steps (completed runs with steps and memory on). */
  trajectoryId: z.string().nullable(),
  factsRecorded: z.number().int(),
  selectorsRecorded: z.number().int(),
  /** Whether a run session entry went into the domain's history (memory on). */
  sessionRecorded: z.boolean(),
})
export const RunLineageNodeSchema = z.object({
  run: RunSchema,
  /** 0 for the root. */
  depth: z.number().int(),
})
export const RunLineageSchema = z.object({
  /** The oldest ancestor still stored. */
  rootRunId: z.string(),
  /** The root's whole tree of resumes and forks, breadth first (parents before children). */
  runs: z.array(RunLineageNodeSchema),
  /** The ancestors of the asked run, root first, ending with it. */
  ancestry: z.array(z.string()),
  /** The root's own parent was deleted. */
  parentMissing: z.boolean(),
  truncated: z.boolean(),
})
export const RunDeletionSchema = z.object({
  runs: z.number().int(),
  trajectories: z.number().int(),
  runSessions: z.number().int(),
  facts: z.number().int(),
  selectors: z.number().int(),
  hints: z.number().int(),
})
export const TrajectoryStepSchema = z.object({
  action: z.string(),
  selector: z.string().nullable(),
  value: z.string().nullable(),
  url: z.string().nullable(),
  verified: z.boolean().nullable(),
  durationMs: z.number().int().nullable(),
})
export const TrajectorySchema = z.object({
  id: z.string(),
  scope: z.string(),
  domain: z.string(),
  origin: z.string().nullable(),
  goal: z.string(),
  runId: z.string().nullable(),
  steps: z.array(TrajectoryStepSchema),
  stepCount: z.number().int(),
  verifiedCount: z.number().int(),
  success: z.boolean(),
  turns: z.number().int(),
  durationMs: z.number().int(),
  outcome: z.string().nullable(),
  model: z.string().nullable(),
  recordedAt: z.string(),
})
export const TrajectoryPageSchema = z.object({
  totalCount: z.number().int(),
  trajectories: z.array(TrajectorySchema),
})
export const TrajectoryMatchSchema = z.object({
  trajectory: TrajectorySchema,
  similarity: z.number(),
  score: z.number(),
})
export const RunSessionSchema = z.object({
  id: z.string(),
  sessionId: z.string(),
  runId: z.string().nullable(),
  domain: z.string(),
  goal: z.string(),
  outcome: z.string(),
  success: z.boolean(),
  finalUrl: z.string().nullable(),
  turnsUsed: z.number().int(),
  durationMs: z.number().int(),
  endedAt: z.string(),
})
export const AppFactSchema = z.object({
  id: z.string(),
  scope: z.string(),
  domain: z.string(),
  type: AppFactTypeSchema,
  key: z.string(),
  value: z.string(),
  confidence: z.number(),
  sources: z.number().int(),
  lastSeenAt: z.string(),
})
export const AppFactPageSchema = z.object({ totalCount: z.number().int(), facts: z.array(AppFactSchema) })
export const KnownSelectorSchema = z.object({
  id: z.string(),
  scope: z.string(),
  domain: z.string(),
  element: z.string(),
  selector: z.string(),
  successCount: z.number().int(),
  failureCount: z.number().int(),
  consecutiveFailures: z.number().int(),
  /** Offered in the run context: it has worked and has not failed too often in a row since. */
  knownGood: z.boolean(),
  /** A snapshot reference ("@e12"): changes between page loads. */
  volatile: z.boolean(),
  lastUsedAt: z.string(),
})
export const KnownSelectorPageSchema = z.object({
  totalCount: z.number().int(),
  selectors: z.array(KnownSelectorSchema),
})
export const RunHintSchema = z.object({
  id: z.string(),
  scope: z.string(),
  text: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
})
export const RunDomainSchema = z.object({
  scope: z.string(),
  domain: z.string(),
  runs: z.number().int(),
  trajectories: z.number().int(),
  runSessions: z.number().int(),
  facts: z.number().int(),
  selectors: z.number().int(),
  lastActivityAt: z.string(),
})
export const RunContextSectionReportSchema = z.object({
  section: RunContextSectionSchema,
  priority: z.number().int(),
  /** Tokens the section takes in `text` (0 when dropped). */
  tokens: z.number().int(),
  /** Tokens it would have taken untrimmed. */
  fullTokens: z.number().int(),
  /** Items shown (sessions, steps, facts, selectors, hints) and items available. */
  items: z.number().int(),
  availableItems: z.number().int(),
  included: z.boolean(),
  truncated: z.boolean(),
  text: z.string(),
})
export const RunContextSchema = z.object({
  domain: z.string(),
  /** Null when the run's memory is OFF (the context is then empty). */
  scope: z.string().nullable(),
  goal: z.string().nullable(),
  /** The sections in priority order joined: what the acting agent's prompt receives. */
  text: z.string(),
  totalTokens: z.number().int(),
  budgetTokens: z.number().int(),
  sections: z.array(RunContextSectionReportSchema),
  reference: TrajectoryMatchSchema.nullable(),
})
export const AgentMemoryImportSchema = z.object({
  scope: z.string(),
  runs: z.number().int(),
  trajectories: z.number().int(),
  runSessions: z.number().int(),
  facts: z.number().int(),
  selectors: z.number().int(),
  hints: z.number().int(),
  /** Files that were not read, each with why (unknown place, bad JSON, a limit). */
  skipped: z.array(z.object({ path: z.string(), reason: z.string() })),
})
export const AgentMemoryExportSchema = z.object({
  scope: z.string(),
  files: z.array(AgentMemoryFileSchema),
})
export const RunEventSchema = z.object({
  kind: RunEventKindSchema,
  run: RunSchema,
  at: z.string(),
})
export const RunMemoryDeletedSchema = z.object({ id: z.string(), deleted: z.boolean() })

// The run registry of trajectory memory (spec 004, issue 16): start, progress, complete, fail,
// resume, fork, lineage, the runs list, deletion, and runEvents (live starts, progress and ends).
// Every field answers through the operations layer, as the SDK's embedded client and MCP do.
import { type OutputOf, parseInput } from '@engram/contract'
import {
  ConflictError,
  ForbiddenError,
  MEMORY_ISOLATIONS,
  RUN_KINDS,
  RUN_STATUSES,
  ValidationError,
} from '@engram/core'
import type { Principal, QueryOrMutationName } from '@engram/engine'
import { principalOf } from '../auth.ts'
import { builder, ErrorInterface } from '../builder.ts'
import type { Context } from '../context.ts'
import { operate } from '../operations.ts'
import { agentScope } from '../scope.ts'
import { guardSubscription, resolveGuarded } from '../subscription-access.ts'

// A run id already taken, a run already ended: data of the registry's mutations, like the other
// expected failures (the message names the run; `field` the input field).
builder.objectType(ConflictError, {
  name: 'ConflictError',
  interfaces: [ErrorInterface],
  isTypeOf: (value) => value instanceof ConflictError,
  fields: (t) => ({
    field: t.string({ nullable: true, resolve: (error) => error.field ?? null }),
  }),
})
const conflicts = { types: [ConflictError] }

type Run = OutputOf<'startRun'>
type RunEnd = OutputOf<'completeRun'>
type RunLineage = OutputOf<'runLineage'>
type RunEvent = OutputOf<'runEvents'>

const RunStatusEnum = builder.enumType('RunStatus', {
  description: 'RUNNING until completeRun (COMPLETED) or failRun (FAILED).',
  values: RUN_STATUSES,
})

const RunKindEnum = builder.enumType('RunKind', {
  description:
    'START: a fresh run. RESUME: continues its parent in the same run session. FORK: branches off its parent into a new run session.',
  values: RUN_KINDS,
})

const MemoryIsolationEnum = builder.enumType('MemoryIsolation', {
  description:
    'Spec 004’s benchmark isolation. SHARED: the run reads and writes its memory scope (default "default"). PER_RUN: a clean scope of its own (run:<runId>), shared with nobody. OFF: no memory (an empty context; its end records only the registry entry).',
  values: MEMORY_ISOLATIONS,
})

const RunEventKindEnum = builder.enumType('RunEventKind', {
  values: ['STARTED', 'PROGRESS', 'COMPLETED', 'FAILED'] as const,
})

export const RunRef = builder.objectRef<Run>('Run').implement({
  description:
    'One execution of an acting agent towards a goal on a domain (spec 004’s run manifest): its status, where it is, how it ended, and where it came from (parentRunId, kind).',
  fields: (t) => ({
    id: t.exposeID('id'),
    sessionId: t.exposeString('sessionId', {
      description: 'Groups related runs (a resume keeps it; a fork starts a new one).',
    }),
    parentRunId: t.exposeString('parentRunId', {
      nullable: true,
      description: 'The run this one resumes or forks.',
    }),
    kind: t.field({ type: RunKindEnum, resolve: (r) => r.kind }),
    isolation: t.field({ type: MemoryIsolationEnum, resolve: (r) => r.isolation }),
    scope: t.exposeString('scope', {
      nullable: true,
      description: 'The memory scope it reads and writes; null when its memory is OFF.',
    }),
    status: t.field({ type: RunStatusEnum, resolve: (r) => r.status }),
    goal: t.exposeString('goal'),
    domain: t.exposeString('domain', { description: 'The host it works on, lower case.' }),
    startUrl: t.exposeString('startUrl', { nullable: true }),
    currentUrl: t.exposeString('currentUrl', {
      nullable: true,
      description: 'Where it is now (from its progress reports).',
    }),
    finalUrl: t.exposeString('finalUrl', { nullable: true, description: 'Where it ended.' }),
    turnCount: t.exposeInt('turnCount'),
    success: t.exposeBoolean('success', { nullable: true, description: 'Null while running.' }),
    summary: t.exposeString('summary', {
      nullable: true,
      description: 'Its latest account of what it is doing, or did (the outcome).',
    }),
    result: t.exposeString('result', { nullable: true }),
    reason: t.exposeString('reason', { nullable: true, description: 'Why it failed.' }),
    artifactPaths: t.exposeStringList('artifactPaths'),
    model: t.exposeString('model', { nullable: true }),
    durationMs: t.exposeInt('durationMs', { nullable: true }),
    startedAt: t.expose('startedAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    completedAt: t.expose('completedAt', { type: 'DateTime', nullable: true }),
  }),
})

const RunPageRef = builder.objectRef<OutputOf<'runs'>>('RunPage').implement({
  fields: (t) => ({
    totalCount: t.exposeInt('totalCount'),
    runs: t.field({ type: [RunRef], resolve: (p) => p.runs }),
    nextCursor: t.exposeString('nextCursor', {
      nullable: true,
      description: 'Give it as `after` for the next page; null on the last.',
    }),
  }),
})

const RunEndRef = builder.objectRef<RunEnd>('RunEnd').implement({
  description: 'What ending a run recorded in memory.',
  fields: (t) => ({
    run: t.field({ type: RunRef, resolve: (e) => e.run }),
    trajectoryId: t.exposeString('trajectoryId', {
      nullable: true,
      description: 'The trajectory kept from its steps (a completed run with steps and memory on).',
    }),
    factsRecorded: t.exposeInt('factsRecorded'),
    selectorsRecorded: t.exposeInt('selectorsRecorded'),
    sessionRecorded: t.exposeBoolean('sessionRecorded', {
      description: 'Whether it entered the domain’s session history (memory on).',
    }),
  }),
})

const RunLineageNodeRef = builder.objectRef<RunLineage['runs'][number]>('RunLineageNode').implement({
  fields: (t) => ({
    run: t.field({ type: RunRef, resolve: (n) => n.run }),
    depth: t.exposeInt('depth', { description: '0 for the root.' }),
  }),
})

const RunLineageRef = builder.objectRef<RunLineage>('RunLineage').implement({
  description: 'The tree of resumes and forks a run belongs to.',
  fields: (t) => ({
    rootRunId: t.exposeString('rootRunId', { description: 'The oldest ancestor still stored.' }),
    runs: t.field({
      type: [RunLineageNodeRef],
      description: 'The root’s whole tree, breadth first (parents before children).',
      resolve: (l) => l.runs,
    }),
    ancestry: t.exposeStringList('ancestry', {
      description: 'The asked run’s ancestors, root first, ending with it.',
    }),
    parentMissing: t.exposeBoolean('parentMissing', { description: 'The root’s own parent was deleted.' }),
    truncated: t.exposeBoolean('truncated', { description: 'The limit cut the tree.' }),
  }),
})

export const RunDeletionRef = builder.objectRef<OutputOf<'deleteRun'>>('RunDeletion').implement({
  description: 'What a deletion removed.',
  fields: (t) => ({
    runs: t.exposeInt('runs'),
    trajectories: t.exposeInt('trajectories'),
    runSessions: t.exposeInt('runSessions'),
    facts: t.exposeInt('facts'),
    selectors: t.exposeInt('selectors'),
    hints: t.exposeInt('hints'),
  }),
})

const RunEventRef = builder.objectRef<RunEvent>('RunEvent').implement({
  description: 'A run started, reported progress, or ended; with the run as it is now.',
  fields: (t) => ({
    kind: t.field({ type: RunEventKindEnum, resolve: (e) => e.kind }),
    run: t.field({ type: RunRef, resolve: (e) => e.run }),
    at: t.expose('at', { type: 'DateTime' }),
  }),
})

export const TrajectoryStepInput = builder.inputType('TrajectoryStepInput', {
  description: 'One action of a run, as the acting agent took it.',
  fields: (t) => ({
    action: t.string({
      required: true,
      description: 'The verb: click, type, press, select, scroll, navigate, wait, run_tool...',
    }),
    selector: t.string({ description: 'Its target: a selector, a file, a tool.' }),
    value: t.string({ description: 'Typed text, a key, a URL to go to, an argument.' }),
    url: t.string({ description: 'Where it ran (the page’s URL).' }),
    verified: t.boolean({ description: 'Whether its effect was checked.' }),
    durationMs: t.int(),
  }),
})

export const AppFactTypeEnum = builder.enumType('AppFactType', {
  description:
    'Spec 004’s app knowledge: TIMING ("page load takes 5s after submit"), SELECTOR ("search box is [data-testid=search]"), PATTERN ("auth flow: click login → fill email → submit"), QUIRK ("uses shadow DOM for modals").',
  values: ['TIMING', 'SELECTOR', 'PATTERN', 'QUIRK'] as const,
})

export const AppFactInput = builder.inputType('AppFactInput', {
  fields: (t) => ({
    type: t.field({ type: AppFactTypeEnum, required: true }),
    key: t.string({ required: true, description: 'What it is about ("shadow-dom"); one value per key.' }),
    value: t.string({ required: true }),
  }),
})

export const SelectorOutcomeEnum = builder.enumType('SelectorOutcome', {
  values: ['SUCCESS', 'FAILURE'] as const,
})

export const SelectorObservationInput = builder.inputType('SelectorObservationInput', {
  fields: (t) => ({
    element: t.string({ required: true, description: 'The element’s identity, e.g. `button "Search"`.' }),
    selector: t.string({ required: true }),
    outcome: t.field({ type: SelectorOutcomeEnum, description: 'SUCCESS when not given.' }),
  }),
})

const StartRunInput = builder.inputType('StartRunInput', {
  fields: (t) => ({
    agentId: t.id(),
    runId: t.string({ description: 'Your id for the run; run_<ms>_<6 chars> when not given.' }),
    sessionId: t.string({ description: 'Groups related runs; one is generated when not given.' }),
    goal: t.string({ required: true }),
    domain: t.string({ description: 'The host it works on; taken from startUrl when not given.' }),
    startUrl: t.string(),
    isolation: t.field({ type: MemoryIsolationEnum, description: 'SHARED when not given.' }),
    scope: t.string({ description: 'The memory scope a SHARED run uses ("default").' }),
    model: t.string(),
  }),
})

const RunProgressInput = builder.inputType('RunProgressInput', {
  fields: (t) => ({
    agentId: t.id(),
    runId: t.string({ required: true }),
    currentUrl: t.string(),
    turnCount: t.int(),
    summary: t.string({ description: 'What the agent is doing now, in its own words.' }),
  }),
})

/** The fields completeRun and failRun share. */
const runEndFields = (t: PothosInputFields) => ({
  agentId: t.id(),
  runId: t.string({ required: true }),
  outcome: t.string({ description: 'The agent’s own account of what it did.' }),
  result: t.string(),
  finalUrl: t.string(),
  turnCount: t.int(),
  durationMs: t.int({ description: 'Default: the time since the run started.' }),
  facts: t.field({ type: [AppFactInput], description: 'App knowledge learnt during the run.' }),
  selectors: t.field({
    type: [SelectorObservationInput],
    description: 'Selectors that worked (or failed) during the run.',
  }),
  artifactPaths: t.stringList(),
  model: t.string(),
})
type PothosInputFields = Parameters<Parameters<typeof builder.inputType>[1]['fields']>[0]

const CompleteRunInput = builder.inputType('CompleteRunInput', {
  fields: (t) => ({
    ...runEndFields(t),
    steps: t.field({
      type: [TrajectoryStepInput],
      description: 'The action sequence, kept as a trajectory for the next similar goal on the domain.',
    }),
  }),
})

const FailRunInput = builder.inputType('FailRunInput', {
  fields: (t) => ({ ...runEndFields(t), reason: t.string({ required: true }) }),
})

const ResumeRunInput = builder.inputType('ResumeRunInput', {
  fields: (t) => ({
    agentId: t.id(),
    runId: t.string({ required: true, description: 'The run to continue.' }),
    goal: t.string({ description: 'Default: the previous run’s goal.' }),
    newRunId: t.string(),
  }),
})

const ForkRunInput = builder.inputType('ForkRunInput', {
  fields: (t) => ({
    agentId: t.id(),
    runId: t.string({ required: true, description: 'The run to branch from.' }),
    goal: t.string({ required: true }),
    newRunId: t.string(),
    sessionId: t.string({ description: 'The new run session’s id; fork_<ms>_<6 chars> when not given.' }),
  }),
})

/**
 * Drops nulls, nested ones too: GraphQL's optional fields may arrive as null, which the catalog's
 * optional fields (absent, never null) would refuse. No field of this family gives null a meaning.
 */
export function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls)
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v != null)
      .map(([k, v]) => [k, withoutNulls(v)]),
  )
}

export const runOperation =
  <N extends QueryOrMutationName>(name: N) =>
  (_root: unknown, args: Record<string, unknown>, ctx: Context) =>
    operate(ctx, name, withoutNulls(args) as Record<string, unknown>)
export const runInputOperation =
  <N extends QueryOrMutationName>(name: N) =>
  (_root: unknown, args: { input: Record<string, unknown> }, ctx: Context) =>
    operate(ctx, name, withoutNulls(args.input) as Record<string, unknown>)

builder.queryFields((t) => ({
  run: t.field({
    type: RunRef,
    nullable: true,
    errors: {},
    description: 'One run of the registry by id, or null.',
    args: { agentId: t.arg.id(), runId: t.arg.string({ required: true }) },
    resolve: runOperation('run'),
  }),
  runs: t.field({
    type: RunPageRef,
    errors: {},
    description:
      'Runs of the registry, most recently updated first, by domain, status, run session, parent or memory scope; page with `after`.',
    args: {
      agentId: t.arg.id(),
      domain: t.arg.string({ description: 'A host, or a URL whose host is taken.' }),
      status: t.arg({ type: RunStatusEnum }),
      sessionId: t.arg.string(),
      parentRunId: t.arg.string(),
      scope: t.arg.string(),
      limit: t.arg.int({ description: '1-200.' }),
      after: t.arg.string({ description: 'The nextCursor of the previous page.' }),
    },
    resolve: runOperation('runs'),
  }),
  runLineage: t.field({
    type: RunLineageRef,
    errors: {},
    description:
      'The tree of resumes and forks a run belongs to: its ancestors up to the oldest stored, and every descendant of that root.',
    args: {
      agentId: t.arg.id(),
      runId: t.arg.string({ required: true }),
      limit: t.arg.int({ description: 'Runs the lineage may hold (1-500, 500).' }),
    },
    resolve: runOperation('runLineage'),
  }),
}))

builder.mutationFields((t) => ({
  startRun: t.field({
    type: RunRef,
    errors: conflicts,
    description:
      'Registers the start of an acting run (a browser, coding or tool-using agent working towards a goal on a domain). Then runContext for what to inject, reportRunProgress as it goes, completeRun or failRun at the end. A run id the agent already has: CONFLICT.',
    args: { input: t.arg({ type: StartRunInput, required: true }) },
    resolve: runInputOperation('startRun'),
  }),
  reportRunProgress: t.field({
    type: RunRef,
    errors: conflicts,
    description:
      'Updates a running run’s current URL, turn count and what it is doing (spec 004: every 3 turns); runEvents watchers see it. An ended run: CONFLICT.',
    args: { input: t.arg({ type: RunProgressInput, required: true }) },
    resolve: runInputOperation('reportRunProgress'),
  }),
  completeRun: t.field({
    type: RunEndRef,
    errors: conflicts,
    description:
      'Ends a run successfully: its steps become a trajectory for the next similar goal on the domain, it enters the domain’s session history, and its app facts and selectors are recorded. An ended run: CONFLICT.',
    args: { input: t.arg({ type: CompleteRunInput, required: true }) },
    resolve: runInputOperation('completeRun'),
  }),
  failRun: t.field({
    type: RunEndRef,
    errors: conflicts,
    description:
      'Ends a run that failed, with the reason: it enters the session history as a failure, its facts and selectors are recorded; no trajectory is kept.',
    args: { input: t.arg({ type: FailRunInput, required: true }) },
    resolve: runInputOperation('failRun'),
  }),
  resumeRun: t.field({
    type: RunRef,
    errors: conflicts,
    description:
      'Starts a new run continuing a previous one: same run session and memory scope, starting at its final URL, parentRunId set.',
    args: { input: t.arg({ type: ResumeRunInput, required: true }) },
    resolve: runInputOperation('resumeRun'),
  }),
  forkRun: t.field({
    type: RunRef,
    errors: conflicts,
    description:
      'Starts a new run branching off a previous one: a new run session, starting at its final URL, parentRunId set.',
    args: { input: t.arg({ type: ForkRunInput, required: true }) },
    resolve: runInputOperation('forkRun'),
  }),
  deleteRun: t.field({
    type: RunDeletionRef,
    errors: {},
    description:
      'Deletes a run and what it left in memory: its trajectory, its session history entry, and the confirmations it gave app facts and selectors.',
    args: { agentId: t.arg.id(), runId: t.arg.string({ required: true }) },
    resolve: runOperation('deleteRun'),
  }),
}))

/**
 * The principal a subscription acts as, and the agent it is scoped to (null: every agent). A live
 * token is an operator's, limited to its agent when it names one.
 */
async function subscriber(
  ctx: Context,
  agentId: string | null | undefined,
): Promise<{ principal: Principal; agentId: string | null }> {
  const { viewer } = ctx
  if (viewer.kind === 'live') {
    if (viewer.agentId && agentId && agentId !== viewer.agentId)
      throw new ForbiddenError('this live token is for another agent')
    return { principal: { kind: 'operator' }, agentId: viewer.agentId ?? agentId ?? null }
  }
  const wanted = viewer.kind === 'admin' && !agentId ? null : await agentScope(ctx, agentId)
  return { principal: principalOf(viewer), agentId: wanted }
}

builder.subscriptionField('runEvents', (t) =>
  t.field({
    type: RunEventRef,
    description:
      'Each start, progress report and end of the agent’s runs as it happens: one run’s, a domain’s, or all. Agent keys receive their own agent’s; admin keys and live tokens one agent’s, or every agent’s.',
    args: {
      agentId: t.arg.id(),
      runId: t.arg.string(),
      domain: t.arg.string({ description: 'A host, or a URL whose host is taken.' }),
    },
    subscribe: async (_root, args, ctx) => {
      const raw = withoutNulls(args) as Record<string, unknown>
      // Refused now, as the other fields refuse bad arguments, not at the first event.
      const checked = parseInput('runEvents', raw)
      if (!checked.ok) throw new ValidationError((checked.error.issues ?? []) as ValidationError['issues'])
      const { principal, agentId } = await subscriber(ctx, checked.data.agentId)
      const events = ctx.services.operations.runEvents(principal, {
        ...raw,
        ...(agentId ? { agentId } : {}),
      })
      // Checked again at every event: the key, the token and the agent must all still be there.
      return guardSubscription(ctx, events, agentId)
    },
    resolve: (event) => resolveGuarded(event),
  }),
)

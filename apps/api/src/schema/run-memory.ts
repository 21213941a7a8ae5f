// Trajectory memory's records and reads (spec 004, issue 16): trajectories and their matching, run
// sessions (the domain's session history), app knowledge, known selectors, hints, domains, the run
// context, and the `.agent-memory/` migration. Every field answers through the operations layer.
import type { OutputOf } from '@engram/contract'
import { RUN_CONTEXT_SECTIONS } from '@engram/core'
import { builder } from '../builder.ts'
import {
  AppFactInput,
  AppFactTypeEnum,
  RunDeletionRef,
  runInputOperation,
  runOperation,
  SelectorObservationInput,
  TrajectoryStepInput,
} from './runs.ts'

type Trajectory = OutputOf<'trajectory'> & {}
type RunContext = OutputOf<'runContext'>
type Import = OutputOf<'importAgentMemory'>

const RunContextSectionEnum = builder.enumType('RunContextSection', {
  description:
    'A part of the run context, by spec 004’s priority (higher survives trimming): SESSION_HISTORY 50, REFERENCE_TRAJECTORY 40, APP_KNOWLEDGE 30, KNOWN_SELECTORS 25, HINTS 20.',
  values: RUN_CONTEXT_SECTIONS,
})

const TrajectoryStepRef = builder.objectRef<Trajectory['steps'][number]>('TrajectoryStep').implement({
  fields: (t) => ({
    action: t.exposeString('action'),
    selector: t.exposeString('selector', { nullable: true }),
    value: t.exposeString('value', { nullable: true }),
    url: t.exposeString('url', { nullable: true }),
    verified: t.exposeBoolean('verified', { nullable: true }),
    durationMs: t.exposeInt('durationMs', { nullable: true }),
  }),
})

const TrajectoryRef = builder.objectRef<Trajectory>('Trajectory').implement({
  description:
    'A successful run’s action sequence for a goal on a domain, offered as a REFERENCE TRAJECTORY to the next run with a similar goal there (until it expires).',
  fields: (t) => ({
    id: t.exposeID('id'),
    scope: t.exposeString('scope'),
    domain: t.exposeString('domain'),
    origin: t.exposeString('origin', { nullable: true, description: 'The site’s origin, from its URLs.' }),
    goal: t.exposeString('goal'),
    runId: t.exposeString('runId', { nullable: true }),
    steps: t.field({ type: [TrajectoryStepRef], resolve: (tr) => tr.steps }),
    stepCount: t.exposeInt('stepCount'),
    verifiedCount: t.exposeInt('verifiedCount'),
    success: t.exposeBoolean('success'),
    turns: t.exposeInt('turns'),
    durationMs: t.exposeInt('durationMs'),
    outcome: t.exposeString('outcome', { nullable: true }),
    model: t.exposeString('model', { nullable: true }),
    recordedAt: t.expose('recordedAt', { type: 'DateTime' }),
  }),
})

const TrajectoryPageRef = builder.objectRef<OutputOf<'trajectories'>>('TrajectoryPage').implement({
  fields: (t) => ({
    totalCount: t.exposeInt('totalCount'),
    trajectories: t.field({ type: [TrajectoryRef], resolve: (p) => p.trajectories }),
  }),
})

const TrajectoryMatchRef = builder
  .objectRef<OutputOf<'matchTrajectories'>[number]>('TrajectoryMatch')
  .implement({
    fields: (t) => ({
      trajectory: t.field({ type: TrajectoryRef, resolve: (m) => m.trajectory }),
      similarity: t.exposeFloat('similarity', { description: 'Goal-word Jaccard, 0-1.' }),
      score: t.exposeFloat('score', {
        description: 'The rank: the similarity, or with trace scoring the weighted blend.',
      }),
    }),
  })

const RunSessionRef = builder.objectRef<OutputOf<'runSessions'>[number]>('RunSession').implement({
  description:
    'One ended run in a domain’s session history (spec 004’s session): what it was asked, what it did in its own words, where it ended.',
  fields: (t) => ({
    id: t.exposeID('id'),
    sessionId: t.exposeString('sessionId'),
    runId: t.exposeString('runId', { nullable: true }),
    domain: t.exposeString('domain'),
    goal: t.exposeString('goal'),
    outcome: t.exposeString('outcome'),
    success: t.exposeBoolean('success'),
    finalUrl: t.exposeString('finalUrl', { nullable: true }),
    turnsUsed: t.exposeInt('turnsUsed'),
    durationMs: t.exposeInt('durationMs'),
    endedAt: t.expose('endedAt', { type: 'DateTime' }),
  }),
})

const AppFactRef = builder.objectRef<OutputOf<'appFacts'>['facts'][number]>('AppFact').implement({
  description:
    'A fact learnt about a domain, with its confidence: 0.6 when new, +(1 − c)·0.2 on each confirmation, halved when contradicted, pruned under 0.1.',
  fields: (t) => ({
    id: t.exposeID('id'),
    scope: t.exposeString('scope'),
    domain: t.exposeString('domain'),
    type: t.field({ type: AppFactTypeEnum, resolve: (f) => f.type }),
    key: t.exposeString('key'),
    value: t.exposeString('value'),
    confidence: t.exposeFloat('confidence'),
    sources: t.exposeInt('sources', { description: 'Observations behind it.' }),
    lastSeenAt: t.expose('lastSeenAt', { type: 'DateTime' }),
  }),
})

const AppFactPageRef = builder.objectRef<OutputOf<'appFacts'>>('AppFactPage').implement({
  fields: (t) => ({
    totalCount: t.exposeInt('totalCount'),
    facts: t.field({ type: [AppFactRef], resolve: (p) => p.facts }),
  }),
})

const KnownSelectorRef = builder
  .objectRef<OutputOf<'knownSelectors'>['selectors'][number]>('KnownSelector')
  .implement({
    description: 'A selector that found an element (`button "Search"`) on a domain, with its record.',
    fields: (t) => ({
      id: t.exposeID('id'),
      scope: t.exposeString('scope'),
      domain: t.exposeString('domain'),
      element: t.exposeString('element'),
      selector: t.exposeString('selector'),
      successCount: t.exposeInt('successCount'),
      failureCount: t.exposeInt('failureCount'),
      consecutiveFailures: t.exposeInt('consecutiveFailures'),
      knownGood: t.exposeBoolean('knownGood', {
        description: 'Offered in the run context: it has worked and has not failed too often in a row since.',
      }),
      volatile: t.exposeBoolean('volatile', {
        description: 'A snapshot reference ("@e12"): changes between page loads.',
      }),
      lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime' }),
    }),
  })

const KnownSelectorPageRef = builder.objectRef<OutputOf<'knownSelectors'>>('KnownSelectorPage').implement({
  fields: (t) => ({
    totalCount: t.exposeInt('totalCount'),
    selectors: t.field({ type: [KnownSelectorRef], resolve: (p) => p.selectors }),
  }),
})

const RunHintRef = builder.objectRef<OutputOf<'addRunHint'>>('RunHint').implement({
  description: 'A cross-domain optimisation hint, injected into every run context of its scope.',
  fields: (t) => ({
    id: t.exposeID('id'),
    scope: t.exposeString('scope'),
    text: t.exposeString('text'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
})

const RunDomainRef = builder.objectRef<OutputOf<'runDomains'>[number]>('RunDomain').implement({
  description: 'A domain with trajectory memory in a scope, and what it holds.',
  fields: (t) => ({
    scope: t.exposeString('scope'),
    domain: t.exposeString('domain'),
    runs: t.exposeInt('runs'),
    trajectories: t.exposeInt('trajectories'),
    runSessions: t.exposeInt('runSessions'),
    facts: t.exposeInt('facts'),
    selectors: t.exposeInt('selectors'),
    lastActivityAt: t.expose('lastActivityAt', { type: 'DateTime' }),
  }),
})

const RunContextSectionReportRef = builder
  .objectRef<RunContext['sections'][number]>('RunContextSectionReport')
  .implement({
    description: 'One section of the run context: what it took, what it would have taken, what was cut.',
    fields: (t) => ({
      section: t.field({ type: RunContextSectionEnum, resolve: (s) => s.section }),
      priority: t.exposeInt('priority'),
      tokens: t.exposeInt('tokens', { description: 'Tokens it takes in `text` (0 when dropped).' }),
      fullTokens: t.exposeInt('fullTokens', { description: 'Tokens it would have taken untrimmed.' }),
      items: t.exposeInt('items', {
        description: 'Items shown (sessions, steps, facts, selectors, hints).',
      }),
      availableItems: t.exposeInt('availableItems'),
      included: t.exposeBoolean('included'),
      truncated: t.exposeBoolean('truncated'),
      text: t.exposeString('text'),
    }),
  })

const RunContextRef = builder.objectRef<RunContext>('RunContext').implement({
  description:
    'What an acting agent’s next decision needs from memory, within a token budget, with per-section accounting.',
  fields: (t) => ({
    domain: t.exposeString('domain'),
    scope: t.exposeString('scope', {
      nullable: true,
      description: 'Null when the run’s memory is OFF (the context is then empty).',
    }),
    goal: t.exposeString('goal', { nullable: true }),
    text: t.exposeString('text', {
      description: 'The sections in priority order, joined: what the agent’s prompt receives.',
    }),
    totalTokens: t.exposeInt('totalTokens'),
    budgetTokens: t.exposeInt('budgetTokens'),
    sections: t.field({ type: [RunContextSectionReportRef], resolve: (c) => c.sections }),
    reference: t.field({
      type: TrajectoryMatchRef,
      nullable: true,
      description: 'The reference trajectory chosen, if any.',
      resolve: (c) => c.reference,
    }),
  }),
})

const AgentMemoryFileRef = builder
  .objectRef<OutputOf<'exportAgentMemory'>['files'][number]>('AgentMemoryFile')
  .implement({
    description: 'One file of a `.agent-memory/` directory: its path inside the directory and its text.',
    fields: (t) => ({ path: t.exposeString('path'), content: t.exposeString('content') }),
  })

const AgentMemorySkippedFileRef = builder
  .objectRef<Import['skipped'][number]>('AgentMemorySkippedFile')
  .implement({
    fields: (t) => ({ path: t.exposeString('path'), reason: t.exposeString('reason') }),
  })

const AgentMemoryImportRef = builder.objectRef<Import>('AgentMemoryImport').implement({
  description: 'What an import of a `.agent-memory/` directory added.',
  fields: (t) => ({
    scope: t.exposeString('scope'),
    runs: t.exposeInt('runs'),
    trajectories: t.exposeInt('trajectories'),
    runSessions: t.exposeInt('runSessions'),
    facts: t.exposeInt('facts'),
    selectors: t.exposeInt('selectors'),
    hints: t.exposeInt('hints'),
    skipped: t.field({
      type: [AgentMemorySkippedFileRef],
      description: 'Files that were not read, each with why (unknown place, bad JSON, a limit).',
      resolve: (r) => r.skipped,
    }),
  }),
})

const AgentMemoryExportRef = builder.objectRef<OutputOf<'exportAgentMemory'>>('AgentMemoryExport').implement({
  fields: (t) => ({
    scope: t.exposeString('scope'),
    files: t.field({ type: [AgentMemoryFileRef], resolve: (e) => e.files }),
  }),
})

const RunMemoryDeletedRef = builder.objectRef<OutputOf<'deleteTrajectory'>>('RunMemoryDeleted').implement({
  fields: (t) => ({ id: t.exposeID('id'), deleted: t.exposeBoolean('deleted') }),
})

const AgentMemoryFileInput = builder.inputType('AgentMemoryFileInput', {
  fields: (t) => ({
    path: t.string({ required: true, description: 'Its path inside the directory ("hints.json").' }),
    content: t.string({ required: true }),
  }),
})

const RecordTrajectoryInput = builder.inputType('RecordTrajectoryInput', {
  fields: (t) => ({
    agentId: t.id(),
    domain: t.string({ required: true }),
    scope: t.string(),
    goal: t.string({ required: true }),
    steps: t.field({ type: [TrajectoryStepInput], required: true }),
    origin: t.string(),
    runId: t.string({ description: 'The run it came from (its scope is used).' }),
    turns: t.int(),
    durationMs: t.int(),
    outcome: t.string(),
    model: t.string(),
  }),
})

const RecordKnowledgeInput = builder.inputType('RecordKnowledgeInput', {
  fields: (t) => ({
    agentId: t.id(),
    domain: t.string({ required: true }),
    scope: t.string(),
    runId: t.string({ description: 'The run that learnt them (deleting it takes its confirmations back).' }),
    facts: t.field({ type: [AppFactInput], required: true }),
  }),
})

const RecordSelectorInput = builder.inputType('RecordSelectorInput', {
  fields: (t) => ({
    agentId: t.id(),
    domain: t.string({ required: true }),
    scope: t.string(),
    runId: t.string(),
    selectors: t.field({ type: [SelectorObservationInput], required: true }),
  }),
})

const AddRunHintInput = builder.inputType('AddRunHintInput', {
  fields: (t) => ({ agentId: t.id(), scope: t.string(), text: t.string({ required: true }) }),
})

const UpdateRunHintInput = builder.inputType('UpdateRunHintInput', {
  fields: (t) => ({ agentId: t.id(), id: t.id({ required: true }), text: t.string({ required: true }) }),
})

const ImportAgentMemoryInput = builder.inputType('ImportAgentMemoryInput', {
  fields: (t) => ({
    agentId: t.id(),
    scope: t.string({ description: 'The memory scope the directory goes into ("default").' }),
    files: t.field({ type: [AgentMemoryFileInput], required: true }),
  }),
})

const expiry = {
  traceScoring: 'Rank by similarity 60%, recency 20%, speed 10%, verification 10% (default: the server’s).',
  traceTtlDays: 'Trajectories older than this many days are not offered (default: the server’s, 30).',
}

builder.queryFields((t) => ({
  runContext: t.field({
    type: RunContextRef,
    errors: {},
    description:
      'What an acting agent’s next decision needs from memory, for a run (or a domain and goal): SESSION HISTORY (priority 50), a REFERENCE TRAJECTORY from the best matching past run (40), APP KNOWLEDGE (30), KNOWN SELECTORS (25) and HINTS (20), trimmed to a token budget lowest priority first.',
    args: {
      agentId: t.arg.id(),
      runId: t.arg.string({ description: 'The run it is for (its domain, goal and scope).' }),
      domain: t.arg.string(),
      goal: t.arg.string(),
      scope: t.arg.string(),
      budgetTokens: t.arg.int({ description: 'Default 2000.' }),
      traceScoring: t.arg.boolean({ description: expiry.traceScoring }),
      traceTtlDays: t.arg.int({ description: expiry.traceTtlDays }),
      sections: t.arg({ type: [RunContextSectionEnum], description: 'Only these (default: all).' }),
    },
    resolve: runOperation('runContext'),
  }),
  matchTrajectories: t.field({
    type: [TrajectoryMatchRef],
    errors: {},
    description:
      'Past successful trajectories on a domain whose goal overlaps this one (word Jaccard ≥ 0.5, within the expiry), best first.',
    args: {
      agentId: t.arg.id(),
      domain: t.arg.string({ required: true }),
      scope: t.arg.string(),
      goal: t.arg.string({ required: true }),
      traceScoring: t.arg.boolean({ description: expiry.traceScoring }),
      traceTtlDays: t.arg.int({ description: expiry.traceTtlDays }),
      limit: t.arg.int({ description: '1-50.' }),
    },
    resolve: runOperation('matchTrajectories'),
  }),
  trajectories: t.field({
    type: TrajectoryPageRef,
    errors: {},
    description: 'Stored trajectories, newest first, by domain, run or scope.',
    args: {
      agentId: t.arg.id(),
      domain: t.arg.string(),
      runId: t.arg.string(),
      scope: t.arg.string(),
      offset: t.arg.int(),
      limit: t.arg.int({ description: '1-200.' }),
    },
    resolve: runOperation('trajectories'),
  }),
  trajectory: t.field({
    type: TrajectoryRef,
    nullable: true,
    errors: {},
    description: 'One trajectory with its steps, or null.',
    args: { agentId: t.arg.id(), id: t.arg.id({ required: true }) },
    resolve: runOperation('trajectory'),
  }),
  runSessions: t.field({
    type: [RunSessionRef],
    errors: {},
    description: 'A domain’s session history: its last ended runs (5 by default), newest first.',
    args: { agentId: t.arg.id(), domain: t.arg.string({ required: true }), scope: t.arg.string() },
    resolve: runOperation('runSessions'),
  }),
  appFacts: t.field({
    type: AppFactPageRef,
    errors: {},
    description: 'App knowledge, highest confidence first, by domain, type and minimum confidence.',
    args: {
      agentId: t.arg.id(),
      domain: t.arg.string(),
      type: t.arg({ type: AppFactTypeEnum }),
      minConfidence: t.arg.float(),
      scope: t.arg.string(),
      offset: t.arg.int(),
      limit: t.arg.int({ description: '1-200.' }),
    },
    resolve: runOperation('appFacts'),
  }),
  knownSelectors: t.field({
    type: KnownSelectorPageRef,
    errors: {},
    description: 'The selector cache, most successful first, by domain and element.',
    args: {
      agentId: t.arg.id(),
      domain: t.arg.string(),
      element: t.arg.string(),
      scope: t.arg.string(),
      offset: t.arg.int(),
      limit: t.arg.int({ description: '1-200.' }),
    },
    resolve: runOperation('knownSelectors'),
  }),
  runHints: t.field({
    type: [RunHintRef],
    errors: {},
    description: 'Cross-domain optimisation hints of a memory scope, oldest first.',
    args: { agentId: t.arg.id(), scope: t.arg.string() },
    resolve: runOperation('runHints'),
  }),
  runDomains: t.field({
    type: [RunDomainRef],
    errors: {},
    description: 'The domains with trajectory memory, most recent activity first, with what each holds.',
    args: { agentId: t.arg.id(), scope: t.arg.string() },
    resolve: runOperation('runDomains'),
  }),
  exportAgentMemory: t.field({
    type: AgentMemoryExportRef,
    errors: {},
    description: 'A memory scope as a `.agent-memory/` directory’s files, in spec 004’s formats.',
    args: { agentId: t.arg.id(), scope: t.arg.string() },
    resolve: runOperation('exportAgentMemory'),
  }),
}))

builder.mutationFields((t) => ({
  recordTrajectory: t.field({
    type: TrajectoryRef,
    errors: {},
    description: 'Keeps a successful action sequence for a goal on a domain without the run registry.',
    args: { input: t.arg({ type: RecordTrajectoryInput, required: true }) },
    resolve: runInputOperation('recordTrajectory'),
  }),
  deleteTrajectory: t.field({
    type: RunMemoryDeletedRef,
    errors: {},
    description: 'Deletes one trajectory.',
    args: { agentId: t.arg.id(), id: t.arg.id({ required: true }) },
    resolve: runOperation('deleteTrajectory'),
  }),
  recordKnowledge: t.field({
    type: [AppFactRef],
    errors: {},
    description:
      'Records app facts learnt on a domain (timing, selector, pattern, quirk): the same value again raises its confidence by (1 − c)·0.2, a different value halves the old one’s and starts at 0.6; facts under 0.1 are pruned.',
    args: { input: t.arg({ type: RecordKnowledgeInput, required: true }) },
    resolve: runInputOperation('recordKnowledge'),
  }),
  deleteAppFact: t.field({
    type: RunMemoryDeletedRef,
    errors: {},
    description: 'Deletes one app fact.',
    args: { agentId: t.arg.id(), id: t.arg.id({ required: true }) },
    resolve: runOperation('deleteAppFact'),
  }),
  recordSelector: t.field({
    type: [KnownSelectorRef],
    errors: {},
    description:
      'Records which selector found an element on a domain, or failed to: successes rank it, repeated failures stop it being offered.',
    args: { input: t.arg({ type: RecordSelectorInput, required: true }) },
    resolve: runInputOperation('recordSelector'),
  }),
  deleteKnownSelector: t.field({
    type: RunMemoryDeletedRef,
    errors: {},
    description: 'Deletes one selector entry.',
    args: { agentId: t.arg.id(), id: t.arg.id({ required: true }) },
    resolve: runOperation('deleteKnownSelector'),
  }),
  addRunHint: t.field({
    type: RunHintRef,
    errors: {},
    description: 'Adds a cross-domain optimisation hint (injected into every run context of the scope).',
    args: { input: t.arg({ type: AddRunHintInput, required: true }) },
    resolve: runInputOperation('addRunHint'),
  }),
  updateRunHint: t.field({
    type: RunHintRef,
    errors: {},
    description: 'Rewrites a hint.',
    args: { input: t.arg({ type: UpdateRunHintInput, required: true }) },
    resolve: runInputOperation('updateRunHint'),
  }),
  deleteRunHint: t.field({
    type: RunMemoryDeletedRef,
    errors: {},
    description: 'Deletes a hint.',
    args: { agentId: t.arg.id(), id: t.arg.id({ required: true }) },
    resolve: runOperation('deleteRunHint'),
  }),
  deleteRunDomain: t.field({
    type: RunDeletionRef,
    errors: {},
    description:
      'Deletes a domain’s runs, trajectories, session history, app facts and selectors in one scope.',
    args: { agentId: t.arg.id(), domain: t.arg.string({ required: true }), scope: t.arg.string() },
    resolve: runOperation('deleteRunDomain'),
  }),
  clearRunMemoryScope: t.field({
    type: RunDeletionRef,
    errors: {},
    description:
      'Deletes a memory scope’s trajectories, session history, facts, selectors and hints (an A/B evaluation’s cleanup); the run registry keeps its entries.',
    args: { agentId: t.arg.id(), scope: t.arg.string({ required: true }) },
    resolve: runOperation('clearRunMemoryScope'),
  }),
  importAgentMemory: t.field({
    type: AgentMemoryImportRef,
    errors: {},
    description:
      'Imports a `.agent-memory/` directory (spec 004’s layout: domains/<domain>/{knowledge.json, selectors.json, trajectories/*.json}, agent-runs/*.json, hints.json) into a memory scope, keeping fields Engram does not know for the export.',
    args: { input: t.arg({ type: ImportAgentMemoryInput, required: true }) },
    resolve: runInputOperation('importAgentMemory'),
  }),
}))

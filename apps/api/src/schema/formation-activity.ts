// Memory formation's processing statistics (issue 13 §5): the activity query (answered through the
// operations layer, as the SDK, MCP and the CLI get it) and its live events (here, so a dashboard's
// live token may subscribe; each event is shaped by the same wire function as the SDK's stream).
import type { OutputOf } from '@engram/contract'
import { ForbiddenError } from '@engram/core'
import { type FormationActivityEvent, formationActivityEventOut } from '@engram/engine'
import { filter, pipe } from 'graphql-yoga'
import { builder } from '../builder.ts'
import { operate } from '../operations.ts'
import { agentScope } from '../scope.ts'
import { guardSubscription, resolveGuarded } from '../subscription-access.ts'

type Activity = OutputOf<'formationActivity'>
type ActivityEvent = OutputOf<'formationActivityEvents'>

const FormationWorkKindEnum = builder.enumType('FormationWorkKind', {
  description:
    'A unit of memory formation: EXTRACTION (one extractor call over a batch of turns and storing what it found), SUMMARY (a conversation summary written), PROFILE (a profile version built).',
  values: ['EXTRACTION', 'SUMMARY', 'PROFILE'] as const,
})

const CircuitStateEnum = builder.enumType('LlmCircuitState', {
  description:
    "The language model's circuit breaker: CLOSED (calls go through), OPEN (failing fast after repeated failures, offline fallbacks run), HALF_OPEN (one trial call).",
  values: ['CLOSED', 'OPEN', 'HALF_OPEN'] as const,
})

export const FormationExtractorModeEnum = builder.enumType('FormationExtractorMode', {
  description:
    "Which extractor reads an agent's new turns: LLM (the language model) or OFFLINE (the deterministic extractor). The agent's setting; by default LLM when a model is configured, OFFLINE otherwise.",
  values: ['OFFLINE', 'LLM'] as const,
})

const FormationOutcomeEnum = builder.enumType('FormationOutcome', {
  values: ['SUCCESS', 'FAILURE'] as const,
})

const FormationFailureRef = builder
  .objectRef<NonNullable<Activity['work'][number]['lastFailure']>>('FormationFailure')
  .implement({
    description: 'The latest failure of a kind of work.',
    fields: (t) => ({
      reason: t.exposeString('reason', { description: 'The error, cut to 500 characters.' }),
      at: t.expose('at', { type: 'DateTime' }),
    }),
  })

const FormationWorkStatsRef = builder.objectRef<Activity['work'][number]>('FormationWorkStats').implement({
  description:
    "One kind of formation work's counters, kept in the server process's memory since it started (a restart starts them at zero; each replica counts its own work).",
  fields: (t) => ({
    kind: t.field({ type: FormationWorkKindEnum, resolve: (s) => s.kind }),
    calls: t.exposeInt('calls'),
    successes: t.exposeInt('successes'),
    failures: t.exposeInt('failures'),
    successRate: t.exposeFloat('successRate', {
      nullable: true,
      description: 'successes / calls; null before the first call.',
    }),
    totalDurationMs: t.exposeFloat('totalDurationMs'),
    averageDurationMs: t.exposeFloat('averageDurationMs', { description: '0 before the first call.' }),
    lastRunAt: t.expose('lastRunAt', { type: 'DateTime', nullable: true }),
    lastFailure: t.field({ type: FormationFailureRef, nullable: true, resolve: (s) => s.lastFailure }),
  }),
})

const FormationQueueDepthRef = builder.objectRef<Activity['queue'][number]>('FormationQueueDepth').implement({
  description: "The agent's queued jobs of one kind of formation work.",
  fields: (t) => ({
    kind: t.field({ type: FormationWorkKindEnum, resolve: (q) => q.kind }),
    jobKind: t.exposeString('jobKind', { description: 'The job kind on the queue (as in jobQueueStats).' }),
    pending: t.exposeInt('pending'),
    running: t.exposeInt('running'),
    failed: t.exposeInt('failed', { description: 'Dead-lettered after their last attempt (failedJobs).' }),
  }),
})

const FormationActivityRef = builder.objectRef<Activity>('FormationActivity').implement({
  description:
    "An agent's memory formation activity (spec 003's processing statistics): counters per kind of work, its queue, the extractor and the model's circuit.",
  fields: (t) => ({
    agentId: t.exposeID('agentId'),
    extractor: t.field({ type: FormationExtractorModeEnum, resolve: (a) => a.extractor }),
    circuitState: t.field({
      type: CircuitStateEnum,
      nullable: true,
      description: 'Null without a language model.',
      resolve: (a) => a.circuitState,
    }),
    work: t.field({ type: [FormationWorkStatsRef], resolve: (a) => a.work }),
    queue: t.field({ type: [FormationQueueDepthRef], resolve: (a) => a.queue }),
  }),
})

const FormationActivityEventRef = builder.objectRef<ActivityEvent>('FormationActivityEvent').implement({
  description: 'One unit of formation work that just ended.',
  fields: (t) => ({
    agentId: t.exposeID('agentId'),
    kind: t.field({ type: FormationWorkKindEnum, resolve: (e) => e.kind }),
    outcome: t.field({ type: FormationOutcomeEnum, resolve: (e) => e.outcome }),
    reason: t.exposeString('reason', { nullable: true, description: 'Why it failed; null on success.' }),
    durationMs: t.exposeFloat('durationMs'),
    at: t.expose('at', { type: 'DateTime' }),
    queueDepth: t.exposeInt('queueDepth', {
      description: "The agent's jobs of this kind still pending when it ended.",
    }),
  }),
})

builder.queryField('formationActivity', (t) =>
  t.field({
    type: FormationActivityRef,
    errors: {},
    description:
      "Memory formation's processing statistics for the agent: calls, successes, failures (the latest with its reason), average duration per kind of work, queued jobs, the extractor and the model's circuit state.",
    args: { agentId: t.arg.id() },
    resolve: (_root, args, ctx) => operate(ctx, 'formationActivity', args),
  }),
)

builder.subscriptionField('formationActivityEvents', (t) =>
  t.field({
    type: FormationActivityEventRef,
    description:
      "Each unit of formation work as it ends. Agent keys receive their own agent's; admin keys every agent's, or one agent's.",
    args: { agentId: t.arg.id() },
    subscribe: async (_root, args, ctx) => {
      const viewer = ctx.viewer
      let wanted: string | null
      if (viewer.kind === 'live') {
        if (viewer.agentId && args.agentId && args.agentId !== viewer.agentId)
          throw new ForbiddenError('this live token is for another agent')
        wanted = viewer.agentId ?? (args.agentId ? String(args.agentId) : null)
      } else {
        wanted = viewer.kind === 'admin' && !args.agentId ? null : await agentScope(ctx, args.agentId)
      }
      // Checked again at every event: the key, the token and the agent must all still be there.
      return guardSubscription(
        ctx,
        pipe(
          ctx.services.pubsub.subscribe('formation:activity'),
          filter((event: FormationActivityEvent) => wanted == null || event.agentId === wanted),
        ),
        wanted,
      )
    },
    resolve: (event) => formationActivityEventOut(resolveGuarded(event)),
  }),
)

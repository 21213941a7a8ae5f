import type { OutputOf } from '@engram/contract'
import {
  ForbiddenError,
  type KeyFact,
  NotFoundError,
  type OptimizerExplanation,
  type OptimizerParameters,
  type ParameterChange,
  type PromotionExplanation,
  ValidationError,
} from '@engram/core'
import { MAX_SNAPSHOT_HISTORY } from '@engram/engine'
import { filter, pipe } from 'graphql-yoga'
import { requireAdmin } from '../auth.ts'
import { builder } from '../builder.ts'
import { operate } from '../operations.ts'
import type { SnapshotEvent } from '../pubsub.ts'
import { agentScope, listScope } from '../scope.ts'
import { guardSubscription, resolveGuarded } from '../subscription-access.ts'

const OptimizerRuleEnum = builder.enumType('OptimizerRule', {
  description: 'An adaptation rule of spec 000 that fired in an optimizer run.',
  values: {
    OVER_BUDGET: {
      description: 'Usage above target + overBudgetMargin: tighten (compress sooner, smaller window).',
    },
    UNDER_BUDGET: {
      description: 'Usage below target − underBudgetMargin: relax (compress later, larger window).',
    },
    EMERGENCY: {
      description: 'Over target while the run saved under emergencySavingsRatio: tighten harder.',
    },
  } as const,
})

const TunedParameterEnum = builder.enumType('TunedParameter', {
  values: ['compressionTrigger', 'fullMessageWindow', 'minRelevance'] as const,
})

const KeyFactModeEnum = builder.enumType('KeyFactMode', {
  description:
    'What counted as an "error" key fact: SPEC (spec 000: the word anywhere) or STRICT (an actual error message, stack trace or error code; ENGRAM_KEY_FACT_MODE=strict).',
  values: { SPEC: { value: 'spec' }, STRICT: { value: 'strict' } } as const,
})

const ParameterChangeRef = builder.objectRef<ParameterChange>('ParameterChange').implement({
  description: 'One tuned parameter an optimizer run changed.',
  fields: (t) => ({
    parameter: t.field({ type: TunedParameterEnum, resolve: (c) => c.parameter }),
    from: t.exposeFloat('from'),
    to: t.exposeFloat('to'),
  }),
})

const KeyFactRef = builder.objectRef<KeyFact>('KeyFact').implement({
  description: 'A key fact (spec 000, Key Facts Detection) and the text that shows it.',
  fields: (t) => ({ kind: t.exposeString('kind'), text: t.exposeString('text') }),
})

const PromotionRef = builder.objectRef<PromotionExplanation>('PromotionExplanation').implement({
  description: 'A memory entry an optimizer run promoted to long-term memory, and why.',
  fields: (t) => ({
    entryId: t.exposeID('entryId'),
    excerpt: t.exposeString('excerpt', { description: 'The start of the entry text.' }),
    relevance: t.exposeFloat('relevance', { description: 'Its relevance score when promoted.' }),
    keyFacts: t.field({ type: [KeyFactRef], resolve: (p) => p.keyFacts }),
  }),
})

const ExplanationRef = builder.objectRef<OptimizerExplanation>('OptimizerExplanation').implement({
  description:
    'Why an optimizer run changed what it changed: usage measured against the target and its margins, the rules that fired, each parameter change and each promotion with its key facts.',
  fields: (t) => ({
    rules: t.field({
      type: [OptimizerRuleEnum],
      description: 'Empty when usage was within its margins of the target.',
      resolve: (e) => e.rules,
    }),
    summary: t.exposeStringList('summary', { description: 'One line per rule that fired.' }),
    usageRatio: t.exposeFloat('usageRatio'),
    savingsRatio: t.exposeFloat('savingsRatio', { description: 'Share of tokens the run freed.' }),
    targetUsageRatio: t.exposeFloat('targetUsageRatio'),
    overBudgetAbove: t.exposeFloat('overBudgetAbove'),
    underBudgetBelow: t.exposeFloat('underBudgetBelow'),
    emergencySavingsBelow: t.exposeFloat('emergencySavingsBelow'),
    changes: t.field({ type: [ParameterChangeRef], resolve: (e) => e.changes }),
    keyFactMode: t.field({ type: KeyFactModeEnum, resolve: (e) => e.keyFactMode }),
    promotions: t.field({
      type: [PromotionRef],
      description: 'The first 50 promotions of the run; promotionCount counts them all.',
      resolve: (e) => e.promotions,
    }),
    promotionCount: t.exposeInt('promotionCount'),
  }),
})

const SnapshotRef = builder.objectRef<SnapshotEvent>('OptimizationSnapshot').implement({
  description: 'What one optimizer run did and the parameters it left (spec 000, Optimization Snapshots).',
  fields: (t) => ({
    id: t.exposeID('id'),
    agentId: t.exposeID('agentId'),
    tokensBefore: t.int({ resolve: (s) => s.snapshot.tokensBefore }),
    tokensAfter: t.int({ resolve: (s) => s.snapshot.tokensAfter }),
    tokensSaved: t.int({ resolve: (s) => s.snapshot.tokensBefore - s.snapshot.tokensAfter }),
    entriesCompressed: t.int({ resolve: (s) => s.snapshot.entriesCompressed }),
    entriesDropped: t.int({ resolve: (s) => s.snapshot.entriesDropped }),
    entriesPromoted: t.int({ resolve: (s) => s.snapshot.entriesPromoted }),
    usageRatio: t.float({ resolve: (s) => s.snapshot.usageRatio }),
    compressionTriggerRatio: t.float({ resolve: (s) => s.snapshot.compressionTriggerRatio }),
    fullMessageWindow: t.int({ resolve: (s) => s.snapshot.fullMessageWindow }),
    minRelevanceScore: t.float({ resolve: (s) => s.snapshot.minRelevanceScore }),
    timestamp: t.field({ type: 'DateTime', resolve: (s) => s.snapshot.timestamp }),
    explanation: t.field({
      type: ExplanationRef,
      nullable: true,
      description: 'Null for snapshots recorded before runs kept their explanation.',
      resolve: (s) => s.snapshot.explanation,
    }),
  }),
})

const ParametersRef = builder.objectRef<OptimizerParameters>('OptimizerParameters').implement({
  fields: (t) => ({
    compressionTrigger: t.exposeFloat('compressionTrigger'),
    fullMessageWindow: t.exposeInt('fullMessageWindow'),
    minRelevance: t.exposeFloat('minRelevance'),
    targetUsageRatio: t.exposeFloat('targetUsageRatio'),
  }),
})

const StatusRef = builder.objectRef<OutputOf<'optimizerStatus'>>('OptimizerStatus').implement({
  description: "The optimizer's efficiency report (spec 000).",
  fields: (t) => ({
    totalOptimizations: t.exposeInt('totalOptimizations'),
    totalTokensSaved: t.exposeInt('totalTokensSaved'),
    avgSavingsPerRun: t.exposeInt('avgSavingsPerRun', {
      description: "Tokens saved per run, rounded to a whole token as in spec 000's report.",
    }),
    averageTokensSavedPerRun: t.exposeFloat('averageTokensSavedPerRun', {
      description: 'Tokens saved per run, unrounded (0.36 stays 0.36; avgSavingsPerRun would say 0).',
    }),
    currentParameters: t.field({ type: ParametersRef, resolve: (s) => s.currentParameters }),
    lastRunAt: t.expose('lastRunAt', { type: 'DateTime', nullable: true }),
    intervalMs: t.exposeInt('intervalMs'),
  }),
})

const SnapshotList = builder.objectRef<{ snapshots: SnapshotEvent[] }>('OptimizationSnapshotList').implement({
  fields: (t) => ({ snapshots: t.field({ type: [SnapshotRef], resolve: (l) => l.snapshots }) }),
})

const ParametersInput = builder.inputType('OptimizerParametersInput', {
  description: 'Only the fields given change; each is checked against its range.',
  fields: (t) => ({
    compressionTrigger: t.float(),
    fullMessageWindow: t.int(),
    minRelevance: t.float(),
    targetUsageRatio: t.float(),
  }),
})

builder.queryFields((t) => ({
  optimizerStatus: t.field({
    type: StatusRef,
    errors: {},
    args: { agentId: t.arg.id() },
    resolve: (_root, args, ctx) => operate(ctx, 'optimizerStatus', args),
  }),
  optimizerSnapshots: t.field({
    type: SnapshotList,
    errors: {},
    description: 'The most recent snapshots, oldest first. Admin keys see every agent unless one is named.',
    args: { agentId: t.arg.id(), last: t.arg.int({ defaultValue: 50 }) },
    resolve: async (_root, args, ctx) => {
      const scope = await listScope(ctx, args.agentId)
      const last = args.last ?? 50
      if (!Number.isInteger(last) || last < 1 || last > MAX_SNAPSHOT_HISTORY) {
        throw new ValidationError([
          {
            field: 'last',
            message: `must be an integer from 1 to ${MAX_SNAPSHOT_HISTORY}`,
            limit: MAX_SNAPSHOT_HISTORY,
          },
        ])
      }
      return { snapshots: await ctx.services.optimizer.snapshots(scope, last) }
    },
  }),
}))

builder.mutationFields((t) => ({
  runOptimizer: t.field({
    type: SnapshotRef,
    errors: {},
    description: 'Runs the optimizer now for the agent (or one conversation); a run already going is shared.',
    args: { agentId: t.arg.id(), conversationId: t.arg.string() },
    resolve: async (_root, args, ctx) => {
      const scope = await agentScope(ctx, args.agentId)
      let sessionId: string | null = null
      if (args.conversationId) {
        const session = await ctx.services.sessions.find(scope, args.conversationId)
        if (!session) {
          throw new NotFoundError('Session', args.conversationId)
        }
        sessionId = session.id
      }
      return ctx.services.optimizer.run(scope, sessionId)
    },
  }),
  setOptimizerParameters: t.field({
    type: ParametersRef,
    errors: {},
    description: 'Admin only: overrides learned parameters within their ranges.',
    args: { agentId: t.arg.id({ required: true }), input: t.arg({ type: ParametersInput, required: true }) },
    resolve: async (_root, args, ctx) => {
      requireAdmin(ctx.viewer)
      const scope = await agentScope(ctx, String(args.agentId))
      const changes = Object.fromEntries(Object.entries(args.input).filter(([, v]) => v != null))
      return ctx.services.optimizer.setParameters(scope, changes)
    },
  }),
}))

builder.subscriptionField('optimizerSnapshots', (t) =>
  t.field({
    type: SnapshotRef,
    description:
      'Each snapshot as it is recorded. Agent keys receive their own; admin keys all, or one agent.',
    args: { agentId: t.arg.id() },
    subscribe: async (_root, args, ctx) => {
      const viewer = ctx.viewer
      let wanted: string | null
      if (viewer.kind === 'live') {
        if (viewer.agentId && args.agentId && args.agentId !== viewer.agentId) {
          throw new ForbiddenError('this live token is for another agent')
        }
        wanted = viewer.agentId ?? (args.agentId ? String(args.agentId) : null)
      } else {
        wanted = viewer.kind === 'admin' && !args.agentId ? null : await agentScope(ctx, args.agentId)
      }
      const source = ctx.services.pubsub.subscribe('optimizer:snapshot')
      // Checked again at every snapshot: the key, the token and the agent must all still be there.
      return guardSubscription(
        ctx,
        pipe(
          source,
          filter((event: SnapshotEvent) => wanted == null || event.agentId === wanted),
        ),
        wanted,
      )
    },
    resolve: (event) => resolveGuarded(event),
  }),
)

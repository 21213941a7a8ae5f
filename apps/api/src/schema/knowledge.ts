import { DEFAULT_KNOWLEDGE_CONFIG, KNOWLEDGE_CATEGORIES, type KnowledgeCategory } from '@engram/core'
import { assertOffsetPage, type KnowledgeRecord as KnowledgeRow } from '@engram/engine'
import { resolveOffsetConnection } from '@pothos/plugin-relay'
import { builder, upperCaseValues } from '../builder.ts'
import { agentScope, listScope } from '../scope.ts'

export const KnowledgeCategoryEnum = builder.enumType('KnowledgeCategory', {
  values: upperCaseValues(KNOWLEDGE_CATEGORIES),
})

export const KnowledgeRef = builder.objectRef<KnowledgeRow>('Knowledge').implement({
  description: 'Cross-session knowledge: a key-value fact with a confidence that grows with use.',
  fields: (t) => ({
    id: t.exposeID('id'),
    agentId: t.exposeID('agentId'),
    category: t.field({ type: KnowledgeCategoryEnum, resolve: (k) => k.category as KnowledgeCategory }),
    key: t.exposeString('key'),
    value: t.exposeString('value'),
    confidence: t.exposeFloat('confidence'),
    storeCount: t.exposeInt('storeCount'),
    useCount: t.exposeInt('useCount'),
    lastUsedAt: t.expose('lastUsedAt', { type: 'DateTime', nullable: true }),
    lastDecayAt: t.expose('lastDecayAt', { type: 'DateTime', nullable: true }),
    nextDecayAt: t.field({
      type: 'DateTime',
      description: 'When it loses confidence if it stays unused (30 days after last use, creation or decay).',
      resolve: (k) => nextDecayAt(k),
    }),
    prunedAtNextDecay: t.boolean({
      description: 'True when the next decay takes it under the pruning threshold.',
      resolve: (k) =>
        k.confidence - DEFAULT_KNOWLEDGE_CONFIG.decayAmount < DEFAULT_KNOWLEDGE_CONFIG.pruneBelow - 1e-9,
    }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
})

function nextDecayAt(k: KnowledgeRow): Date {
  const since = Math.max((k.lastUsedAt ?? k.createdAt).getTime(), k.lastDecayAt?.getTime() ?? 0)
  return new Date(since + DEFAULT_KNOWLEDGE_CONFIG.decayAfterDays * 86_400_000)
}

const StoreKnowledgeInput = builder.inputType('StoreKnowledgeInput', {
  fields: (t) => ({
    agentId: t.id(),
    category: t.field({ type: KnowledgeCategoryEnum, required: true }),
    key: t.string({ required: true }),
    value: t.string({ required: true }),
    confidence: t.float({ description: 'Initial confidence (default 0.5); a repeated store adds 0.1.' }),
  }),
})

const UpdateKnowledgeInput = builder.inputType('UpdateKnowledgeInput', {
  fields: (t) => ({
    agentId: t.id(),
    id: t.id({ required: true }),
    category: t.field({ type: KnowledgeCategoryEnum }),
    key: t.string(),
    value: t.string(),
    confidence: t.float(),
  }),
})

const KnowledgeFilter = builder.inputType('KnowledgeFilter', {
  fields: (t) => ({
    category: t.field({ type: KnowledgeCategoryEnum }),
    search: t.string({ description: 'Substring of the key or the value.' }),
    minConfidence: t.float(),
  }),
})

const KnowledgeMatch = builder
  .objectRef<{ knowledge: KnowledgeRow; score: number; matchedTerms: string[] }>('KnowledgeMatch')
  .implement({
    fields: (t) => ({
      knowledge: t.field({ type: KnowledgeRef, resolve: (m) => m.knowledge }),
      score: t.exposeFloat('score'),
      matchedTerms: t.exposeStringList('matchedTerms'),
    }),
  })

const RelevantKnowledge = builder
  .objectRef<{ matches: { knowledge: KnowledgeRow; score: number; matchedTerms: string[] }[] }>(
    'RelevantKnowledge',
  )
  .implement({ fields: (t) => ({ matches: t.field({ type: [KnowledgeMatch], resolve: (r) => r.matches }) }) })

const KnowledgeOrderEnum = builder.enumType('KnowledgeOrder', {
  values: {
    CONFIDENCE: { value: 'confidence', description: 'Highest confidence first' },
    LAST_USED: { value: 'lastUsedAt', description: 'Most recently used first; never used last' },
    USES: { value: 'useCount', description: 'Most used first' },
    UPDATED: { value: 'updatedAt', description: 'Most recently changed first' },
  } as const,
})

builder.queryFields((t) => ({
  knowledge: t.connection(
    {
      type: KnowledgeRef,
      errors: {},
      description: 'Cross-session knowledge. Admin keys list every agent unless one is named.',
      args: {
        agentId: t.arg.id(),
        filter: t.arg({ type: KnowledgeFilter }),
        orderBy: t.arg({ type: KnowledgeOrderEnum, defaultValue: 'confidence' }),
      },
      resolve: async (_root, args, ctx) => {
        assertOffsetPage(args, ctx.services.limits)
        const scope = await listScope(ctx, args.agentId)
        const { totalCount, page } = await ctx.services.knowledge.list(
          scope,
          args.filter ?? {},
          args.orderBy ?? 'confidence',
        )
        const connection = await resolveOffsetConnection(
          { args, defaultSize: 50, maxSize: ctx.services.limits.maxPageSize, totalCount },
          ({ offset, limit }) => page(offset, limit),
        )
        return { ...connection, totalCount }
      },
    },
    {
      fields: (c) => ({
        totalCount: c.int({ resolve: (parent) => (parent as { totalCount: number }).totalCount }),
      }),
    },
  ),
  relevantKnowledge: t.field({
    type: RelevantKnowledge,
    errors: {},
    description:
      'The knowledge that bears on a domain or text (spec data flow, step 10), best first. Call recordKnowledgeUse for what you use.',
    args: {
      agentId: t.arg.id(),
      text: t.arg.string({ required: true, description: 'A domain ("example.com") or a task or message.' }),
      limit: t.arg.int({ defaultValue: 10 }),
      minConfidence: t.arg.float({ defaultValue: 0 }),
    },
    resolve: async (_root, args, ctx) => {
      const scope = await agentScope(ctx, args.agentId)
      return {
        matches: await ctx.services.knowledge.relevant(
          scope,
          args.text,
          args.limit ?? 10,
          args.minConfidence ?? 0,
        ),
      }
    },
  }),
}))

builder.mutationFields((t) => ({
  storeKnowledge: t.field({
    type: KnowledgeRef,
    errors: {},
    description:
      'Stores a fact; storing the same (category, key) again updates it and raises its confidence.',
    args: { input: t.arg({ type: StoreKnowledgeInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const scope = await agentScope(ctx, input.agentId)
      const [key, value] = (
        await ctx.services.privacy.guard(scope, [
          { field: 'key', text: input.key },
          { field: 'value', text: input.value },
        ])
      ).texts
      return ctx.services.knowledge.store(scope, { ...input, key: key as string, value: value as string })
    },
  }),
  recordKnowledgeUse: t.field({
    type: KnowledgeRef,
    errors: {},
    args: { agentId: t.arg.id(), id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) =>
      ctx.services.knowledge.recordUse(await agentScope(ctx, args.agentId), String(args.id)),
  }),
  updateKnowledge: t.field({
    type: KnowledgeRef,
    errors: {},
    args: { input: t.arg({ type: UpdateKnowledgeInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const { agentId, id, ...changes } = input
      const scope = await agentScope(ctx, agentId)
      const texts = (['key', 'value'] as const).flatMap((field) =>
        changes[field] == null ? [] : [{ field, text: changes[field] as string }],
      )
      const guarded = (await ctx.services.privacy.guard(scope, texts)).texts
      texts.forEach((t, i) => {
        changes[t.field] = guarded[i] as string
      })
      const clean = Object.fromEntries(Object.entries(changes).filter(([, v]) => v != null))
      return ctx.services.knowledge.update(scope, String(id), clean)
    },
  }),
  deleteKnowledgeItems: t.field({
    type: builder.objectRef<{ deletedCount: number }>('DeleteKnowledgeItemsPayload').implement({
      fields: (f) => ({ deletedCount: f.exposeInt('deletedCount') }),
    }),
    errors: {},
    description: 'Deletes several facts at once: all of them, or none when any is missing.',
    args: { agentId: t.arg.id(), ids: t.arg.idList({ required: true }) },
    resolve: async (_root, args, ctx) =>
      ctx.services.knowledge.deleteMany(await listScope(ctx, args.agentId), args.ids.map(String)),
  }),
  deleteKnowledge: t.field({
    type: KnowledgeRef,
    errors: {},
    args: { agentId: t.arg.id(), id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) =>
      ctx.services.knowledge.delete(await agentScope(ctx, args.agentId), String(args.id)),
  }),
}))

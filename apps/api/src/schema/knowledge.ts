import { KNOWLEDGE_CATEGORIES, type KnowledgeCategory, ValidationError } from '@engram/core'
import { type ResolveCursorConnectionArgs, resolveCursorConnection } from '@pothos/plugin-relay'
import { builder } from '../builder.ts'
import type { Knowledge as KnowledgeRow } from '../generated/prisma/client.ts'
import { agentScope } from '../scope.ts'
import { assertPageSize } from '../services/cursor.ts'

export const KnowledgeCategoryEnum = builder.enumType('KnowledgeCategory', {
  values: Object.fromEntries(KNOWLEDGE_CATEGORIES.map((c) => [c.toUpperCase(), { value: c }])) as Record<
    Uppercase<KnowledgeCategory>,
    { value: KnowledgeCategory }
  >,
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
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
})

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

// Knowledge is listed by confidence, highest first; the cursor pins (confidence, id).
function encodeKnowledgeCursor(row: KnowledgeRow): string {
  return Buffer.from(`${row.confidence}:${row.id}`, 'utf8').toString('base64url')
}

builder.queryFields((t) => ({
  knowledge: t.connection({
    type: KnowledgeRef,
    errors: {},
    args: { agentId: t.arg.id(), filter: t.arg({ type: KnowledgeFilter }) },
    resolve: async (_root, args, ctx) => {
      assertPageSize(args, ctx.services.limits)
      const scope = await agentScope(ctx, args.agentId)
      const base = ctx.services.knowledge.where(scope, args.filter ?? {})
      return resolveCursorConnection(
        { args, toCursor: encodeKnowledgeCursor, defaultSize: 50, maxSize: ctx.services.limits.maxPageSize },
        async ({ after, before, limit, inverted }: ResolveCursorConnectionArgs) => {
          const conditions: Record<string, unknown>[] = []
          const beyond = (cursor: string, field: string, lower: boolean) => {
            const [confidence, id] = Buffer.from(cursor, 'base64url').toString('utf8').split(':').map(Number)
            if (!Number.isFinite(confidence) || !Number.isInteger(id)) {
              throw new ValidationError([{ field, message: 'is not a cursor returned by this API' }])
            }
            const cmp = lower ? 'lt' : 'gt'
            return { OR: [{ confidence: { [cmp]: confidence } }, { confidence, id: { [cmp]: id } }] }
          }
          if (after) conditions.push(beyond(after, 'after', true))
          if (before) conditions.push(beyond(before, 'before', false))
          const direction = inverted ? 'asc' : 'desc'
          return ctx.services.db.knowledge.findMany({
            where: { ...base, ...(conditions.length ? { AND: conditions } : {}) },
            orderBy: [{ confidence: direction }, { id: direction }],
            take: limit,
          })
        },
      )
    },
  }),
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
    resolve: async (_root, { input }, ctx) =>
      ctx.services.knowledge.store(await agentScope(ctx, input.agentId), input),
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
      const clean = Object.fromEntries(Object.entries(changes).filter(([, v]) => v != null))
      return ctx.services.knowledge.update(await agentScope(ctx, agentId), String(id), clean)
    },
  }),
  deleteKnowledge: t.field({
    type: KnowledgeRef,
    errors: {},
    args: { agentId: t.arg.id(), id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) =>
      ctx.services.knowledge.delete(await agentScope(ctx, args.agentId), String(args.id)),
  }),
}))

import {
  CONTEXT_SECTIONS,
  type ContextBudgets,
  MEMORY_CATEGORIES,
  type MemoryCategory,
  type MemorySettings,
} from '@engram/core'
import {
  assertOffsetPage,
  type MemoryFilter,
  type MemoryItemView,
  type MemoryWriteResult,
  rememberThisMemory,
  type StoredSettings,
} from '@engram/engine'
import { resolveOffsetConnection } from '@pothos/plugin-relay'
import { builder, upperCaseValues } from '../builder.ts'
import { agentScope, listScope } from '../scope.ts'

export const MemoryCategoryEnum = builder.enumType('MemoryCategory', {
  description: "A memory's kind: the union of spec 001's and spec 003's categories.",
  values: upperCaseValues(MEMORY_CATEGORIES),
})

export const MemoryItemRef = builder.objectRef<MemoryItemView>('MemoryItem')
MemoryItemRef.implement({
  description: 'A long-term memory: what an agent remembers across conversations, valid over a time span.',
  fields: (t) => ({
    id: t.exposeID('id'),
    agentId: t.exposeID('agentId'),
    userId: t.exposeString('userId', { nullable: true }),
    content: t.exposeString('content'),
    category: t.field({ type: MemoryCategoryEnum, resolve: (m) => m.category }),
    tags: t.exposeStringList('tags'),
    importance: t.exposeFloat('importance'),
    confidence: t.exposeFloat('confidence'),
    pinned: t.exposeBoolean('pinned', {
      description: 'A user override: always part of the assembled context.',
    }),
    sourceConversationId: t.exposeString('sourceConversationId', { nullable: true }),
    sourceMessageId: t.exposeString('sourceMessageId', { nullable: true }),
    accessCount: t.exposeInt('accessCount'),
    lastAccessedAt: t.expose('lastAccessedAt', { type: 'DateTime', nullable: true }),
    validFrom: t.expose('validFrom', { type: 'DateTime' }),
    validUntil: t.expose('validUntil', { type: 'DateTime', nullable: true }),
    supersededById: t.exposeID('supersededById', { nullable: true }),
    supersededBy: t.field({
      type: MemoryItemRef,
      nullable: true,
      resolve: (m, _args, ctx) =>
        m.supersededById ? ctx.services.memoryItems.find(m.agentId, m.supersededById) : null,
    }),
    isCurrent: t.boolean({
      description: 'Valid now: validFrom has passed and validUntil has not.',
      resolve: (m, _args, ctx) => {
        const now = ctx.services.clock.now()
        return m.validFrom <= now && (m.validUntil == null || m.validUntil > now)
      },
    }),
    metadata: t.expose('metadata', { type: 'JSON' }),
    tokenCount: t.exposeInt('tokenCount'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
})

const WriteOutcomeEnum = builder.enumType('MemoryWriteOutcome', {
  values: {
    STORED: { description: 'Stored as a new memory' },
    DUPLICATE: { description: 'Not stored: it repeats an existing memory (duplicateOf)' },
    SUPERSEDED: { description: 'Stored, and it replaces an older memory of its category (superseded)' },
  } as const,
})

const VerificationLayerEnum = builder.enumType('VerificationLayer', {
  values: {
    JACCARD: { value: 'jaccard', description: 'Word overlap at or above jaccardDedupThreshold' },
    SEMANTIC: { value: 'semantic', description: 'Embedding cosine at or above semanticDedupThreshold' },
  } as const,
})

const MemoryWriteRef = builder.objectRef<MemoryWriteResult>('MemoryWrite').implement({
  description: 'What a write did: the verification pipeline may store, skip or supersede.',
  fields: (t) => ({
    outcome: t.field({ type: WriteOutcomeEnum, resolve: (r) => r.outcome }),
    memory: t.field({
      type: MemoryItemRef,
      description: 'The stored memory, or the existing one it duplicates.',
      resolve: (r) => r.item,
    }),
    duplicateOf: t.field({ type: MemoryItemRef, nullable: true, resolve: (r) => r.duplicateOf }),
    superseded: t.field({ type: MemoryItemRef, nullable: true, resolve: (r) => r.superseded }),
    layer: t.field({ type: VerificationLayerEnum, nullable: true, resolve: (r) => r.layer }),
    similarity: t.exposeFloat('similarity', { nullable: true }),
    evicted: t.field({
      type: [MemoryItemRef],
      description: 'Least important memories that stopped being current to stay within maxEntriesPerAgent.',
      resolve: (r) => r.evicted,
    }),
  }),
})

const CreateMemoryInput = builder.inputType('CreateMemoryInput', {
  fields: (t) => ({
    agentId: t.id(),
    content: t.string({ required: true }),
    category: t.field({ type: MemoryCategoryEnum, required: true }),
    tags: t.stringList(),
    importance: t.float({ description: '0..1, default 0.5' }),
    confidence: t.float({ description: '0..1, default 1' }),
    pinned: t.boolean({ description: 'A user override, always in context (default false)' }),
    userId: t.string({ description: 'The user of the agent this memory is about (optional scope)' }),
    sourceConversationId: t.string(),
    sourceMessageId: t.string(),
    validFrom: t.field({ type: 'DateTime', description: 'Default now' }),
    validUntil: t.field({ type: 'DateTime' }),
    metadata: t.field({ type: 'JSON' }),
  }),
})

const UpdateMemoryInput = builder.inputType('UpdateMemoryInput', {
  fields: (t) => ({
    agentId: t.id(),
    id: t.id({ required: true }),
    content: t.string(),
    category: t.field({ type: MemoryCategoryEnum }),
    tags: t.stringList(),
    importance: t.float(),
    confidence: t.float(),
    pinned: t.boolean(),
    validFrom: t.field({ type: 'DateTime' }),
    validUntil: t.field({ type: 'DateTime' }),
    clearValidUntil: t.boolean({ description: 'Makes the memory valid again with no end.' }),
    metadata: t.field({ type: 'JSON' }),
  }),
})

const RememberThisInput = builder.inputType('RememberThisInput', {
  fields: (t) => ({
    agentId: t.id(),
    text: t.string({
      required: true,
      description: 'What the user asked to remember, e.g. "Remember that I prefer tabs".',
    }),
    category: t.field({ type: MemoryCategoryEnum, description: 'Default: inferred from the wording' }),
    importance: t.float({ description: 'Default 0.8: an explicit request is important' }),
    tags: t.stringList(),
    userId: t.string(),
    conversationId: t.string(),
    messageId: t.string(),
    pinned: t.boolean(),
  }),
})

export const MemoryFilterInput = builder.inputType('MemoryFilterInput', {
  fields: (t) => ({
    userId: t.string(),
    categories: t.field({ type: [MemoryCategoryEnum] }),
    tags: t.stringList({ description: 'Memories with all of these tags' }),
    minImportance: t.float(),
    createdAfter: t.field({ type: 'DateTime' }),
    createdBefore: t.field({ type: 'DateTime' }),
    asOf: t.field({ type: 'DateTime', description: 'What was valid at this time (default now)' }),
    includeSuperseded: t.boolean({ description: 'Superseded and expired memories too' }),
    pinned: t.boolean(),
    search: t.string({ description: 'Substring of the content' }),
  }),
})

export function toMemoryFilter(input: typeof MemoryFilterInput.$inferInput | null | undefined): MemoryFilter {
  return {
    userId: input?.userId,
    categories: input?.categories as MemoryCategory[] | null | undefined,
    tags: input?.tags,
    minImportance: input?.minImportance,
    createdAfter: input?.createdAfter,
    createdBefore: input?.createdBefore,
    asOf: input?.asOf,
    includeSuperseded: input?.includeSuperseded,
    pinned: input?.pinned,
    search: input?.search,
  }
}

const MemoryOrderEnum = builder.enumType('MemoryOrder', {
  values: {
    NEWEST: { value: 'createdAt', description: 'Most recently created first' },
    UPDATED: { value: 'updatedAt', description: 'Most recently changed first' },
    IMPORTANCE: { value: 'importance', description: 'Most important first' },
    ACCESSED: { value: 'lastAccessedAt', description: 'Most recently recalled first; never recalled last' },
    ACCESS_COUNT: { value: 'accessCount', description: 'Most recalled first' },
  } as const,
})

const CategoryCount = builder
  .objectRef<{ category: MemoryCategory; count: number }>('MemoryCategoryCount')
  .implement({
    fields: (t) => ({
      category: t.field({ type: MemoryCategoryEnum, resolve: (c) => c.category }),
      count: t.exposeInt('count'),
    }),
  })

const EmbeddingCoverageRef = builder
  .objectRef<{ kind: string; total: number; embedded: number; queued: number; failed: number }>(
    'EmbeddingCoverage',
  )
  .implement({
    description:
      'How many of a kind (memory, message, knowledge, summary) have a vector of the current model.',
    fields: (t) => ({
      kind: t.exposeString('kind'),
      total: t.exposeInt('total'),
      embedded: t.exposeInt('embedded'),
      queued: t.exposeInt('queued', {
        description:
          'Rows waiting in the job queue for their vector (written moments ago, or being retried).',
      }),
      failed: t.exposeInt('failed', {
        description: 'Rows whose embed job used up its attempts (see failedJobs, retryFailedJobs).',
      }),
    }),
  })

type Stats = Awaited<ReturnType<import('@engram/engine').MemoryItemService['stats']>>
const MemoryStatsRef = builder.objectRef<Stats>('MemoryStats').implement({
  fields: (t) => ({
    agentId: t.exposeID('agentId'),
    total: t.exposeInt('total', { description: 'Every memory, current or not' }),
    current: t.exposeInt('current'),
    superseded: t.exposeInt('superseded', { description: 'Superseded or expired' }),
    pinned: t.exposeInt('pinned'),
    byCategory: t.field({
      type: [CategoryCount],
      description: 'Current memories per category',
      resolve: (s) => s.byCategory,
    }),
    storageBytes: t.exposeInt('storageBytes', {
      description: 'Text, tags, metadata and vectors of memories',
    }),
    vectorBytes: t.exposeInt('vectorBytes'),
    embeddingModel: t.exposeString('embeddingModel'),
    embedded: t.exposeInt('embedded'),
    embeddingCoverage: t.exposeFloat('embeddingCoverage', {
      description: 'Share of memories with a vector (0..1)',
    }),
    coverage: t.field({ type: [EmbeddingCoverageRef], resolve: (s) => s.coverage }),
  }),
})

const MemorySettingsRef = builder.objectRef<StoredSettings>('MemorySettings').implement({
  description: "An agent's memory settings: spec 003's defaults unless changed.",
  fields: (t) => ({
    verificationEnabled: t.boolean({ resolve: (s) => s.settings.verificationEnabled }),
    jaccardDedupThreshold: t.float({ resolve: (s) => s.settings.jaccardDedupThreshold }),
    contradictionThreshold: t.float({ resolve: (s) => s.settings.contradictionThreshold }),
    semanticDedupThreshold: t.float({ resolve: (s) => s.settings.semanticDedupThreshold }),
    maxEntriesPerAgent: t.int({ resolve: (s) => s.settings.maxEntriesPerAgent }),
    recallTopK: t.int({ resolve: (s) => s.settings.recallTopK }),
    temporalDecayHalfLifeDays: t.float({ resolve: (s) => s.settings.temporalDecayHalfLifeDays }),
    mmrLambda: t.float({ resolve: (s) => s.settings.mmrLambda }),
    mmrFetchMultiplier: t.float({ resolve: (s) => s.settings.mmrFetchMultiplier }),
    conversationWindowDays: t.int({ resolve: (s) => s.settings.conversationWindowDays }),
    contextBudgets: t.field({
      type: 'JSON',
      description: `Token budget per context section (${CONTEXT_SECTIONS.filter((s) => s !== 'user_overrides').join(', ')})`,
      resolve: (s) => s.contextBudgets as unknown as Record<string, unknown>,
    }),
  }),
})

const MemorySettingsInput = builder.inputType('MemorySettingsInput', {
  fields: (t) => ({
    verificationEnabled: t.boolean(),
    jaccardDedupThreshold: t.float(),
    contradictionThreshold: t.float(),
    semanticDedupThreshold: t.float(),
    maxEntriesPerAgent: t.int(),
    recallTopK: t.int(),
    temporalDecayHalfLifeDays: t.float(),
    mmrLambda: t.float(),
    mmrFetchMultiplier: t.float(),
    conversationWindowDays: t.int(),
  }),
})

const ContextBudgetsInput = builder.inputType('ContextBudgetsInput', {
  fields: (t) => ({
    profile: t.int(),
    working_memory: t.int(),
    summaries: t.int(),
    relationships: t.int(),
    relevant_memories: t.int(),
    knowledge: t.int(),
    pools: t.int(),
    conversation: t.int(),
  }),
})

builder.queryFields((t) => ({
  memory: t.field({
    type: MemoryItemRef,
    errors: {},
    description: 'One memory by id (counts as an access).',
    args: { agentId: t.arg.id(), id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) =>
      ctx.services.memoryItems.get(await agentScope(ctx, args.agentId), String(args.id)),
  }),
  memories: t.connection(
    {
      type: MemoryItemRef,
      errors: {},
      description: 'Memories, by default those valid now. Admin keys list every agent unless one is named.',
      args: {
        agentId: t.arg.id(),
        filter: t.arg({ type: MemoryFilterInput }),
        orderBy: t.arg({ type: MemoryOrderEnum, defaultValue: 'createdAt' }),
      },
      resolve: async (_root, args, ctx) => {
        assertOffsetPage(args, ctx.services.limits)
        const scope = await listScope(ctx, args.agentId)
        const { totalCount, page } = await ctx.services.memoryItems.list(
          scope,
          toMemoryFilter(args.filter),
          args.orderBy ?? 'createdAt',
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
  memoryStats: t.field({
    type: MemoryStatsRef,
    errors: {},
    description: "Counts per category, storage size and embedding coverage of an agent's memories.",
    args: { agentId: t.arg.id() },
    resolve: async (_root, args, ctx) => ctx.services.memoryItems.stats(await agentScope(ctx, args.agentId)),
  }),
  memorySettings: t.field({
    type: MemorySettingsRef,
    errors: {},
    args: { agentId: t.arg.id() },
    resolve: async (_root, args, ctx) =>
      ctx.services.memoryItems.settings(await agentScope(ctx, args.agentId)),
  }),
}))

builder.mutationFields((t) => ({
  createMemory: t.field({
    type: MemoryWriteRef,
    errors: {},
    description: 'Stores a memory through the verification pipeline; the outcome says what happened.',
    args: { input: t.arg({ type: CreateMemoryInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const { agentId, ...fields } = input
      return ctx.services.memoryItems.create(await agentScope(ctx, agentId), fields)
    },
  }),
  rememberThis: t.field({
    type: MemoryWriteRef,
    errors: {},
    description:
      'The explicit path: "remember that …" stores the statement directly (the request words and trailing filler such as "for next time" are stripped, the category inferred unless given).',
    args: { input: t.arg({ type: RememberThisInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const scope = await agentScope(ctx, input.agentId)
      return ctx.services.memoryItems.create(
        scope,
        rememberThisMemory({ ...input, category: input.category as MemoryCategory | null | undefined }),
      )
    },
  }),
  updateMemory: t.field({
    type: MemoryItemRef,
    errors: {},
    args: { input: t.arg({ type: UpdateMemoryInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const { agentId, id, clearValidUntil, ...changes } = input
      const clean = Object.fromEntries(Object.entries(changes).filter(([, v]) => v != null))
      const scope = await agentScope(ctx, agentId)
      const updated = await ctx.services.memoryItems.update(scope, String(id), {
        ...clean,
        ...(clearValidUntil ? { validUntil: null } : {}),
      })
      // Its user may have changed: search's participants are rebuilt.
      ctx.services.search.forgetAgent(scope)
      return updated
    },
  }),
  deleteMemory: t.field({
    type: MemoryItemRef,
    errors: {},
    args: { agentId: t.arg.id(), id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const scope = await agentScope(ctx, args.agentId)
      const deleted = await ctx.services.memoryItems.delete(scope, String(args.id))
      ctx.services.search.forgetAgent(scope)
      // Its search accesses not yet written go with it (search-access.ts).
      ctx.services.search.forgetAccesses(scope, [deleted.id])
      return deleted
    },
  }),
  updateMemorySettings: t.field({
    type: MemorySettingsRef,
    errors: {},
    description: "Changes some of an agent's memory settings; the rest keep their values.",
    args: {
      agentId: t.arg.id(),
      settings: t.arg({ type: MemorySettingsInput }),
      contextBudgets: t.arg({ type: ContextBudgetsInput }),
    },
    resolve: async (_root, args, ctx) =>
      ctx.services.memoryItems.updateSettings(await agentScope(ctx, args.agentId), {
        settings: (args.settings ?? {}) as Partial<MemorySettings>,
        contextBudgets: (args.contextBudgets ?? {}) as Partial<ContextBudgets>,
      }),
  }),
}))

import { MEMORY_TYPES, NotFoundError, type SuggestedAction } from '@engram/core'
import type { EntryView, SearchHit } from '@engram/engine'
import { assertPageSize, encodeCursor, type ListOrder, timeIdPage } from '@engram/engine'
import { type ResolveCursorConnectionArgs, resolveCursorConnection } from '@pothos/plugin-relay'
import { builder, upperCaseValues } from '../builder.ts'
import { agentScope } from '../scope.ts'
import { RoleEnum } from './session.ts'

export const MemoryTypeEnum = builder.enumType('MemoryType', {
  values: upperCaseValues(MEMORY_TYPES),
})

export const ListOrderEnum = builder.enumType('ListOrder', {
  values: { OLDEST_FIRST: { value: 'OLDEST_FIRST' }, NEWEST_FIRST: { value: 'NEWEST_FIRST' } } as const,
})

const ActionEnum = builder.enumType('MemoryAction', {
  values: {
    COMPRESS: { value: 'compress' },
    DROP: { value: 'drop' },
    PROMOTE: { value: 'promote' },
  } as const,
})

export const MemoryEntryRef = builder.objectRef<EntryView>('MemoryEntry').implement({
  description: 'A memory entry: short-term (one per message) or long-term (promoted).',
  fields: (t) => ({
    id: t.exposeID('id'),
    agentId: t.exposeID('agentId'),
    type: t.field({ type: MemoryTypeEnum, resolve: (e) => e.type }),
    role: t.field({ type: RoleEnum, resolve: (e) => e.role }),
    content: t.exposeString('content'),
    tokenCount: t.exposeInt('tokenCount'),
    relevance: t.exposeFloat('relevance'),
    isCompressed: t.exposeBoolean('isCompressed'),
    timestamp: t.expose('timestamp', { type: 'DateTime' }),
    sessionId: t.exposeID('sessionId', { nullable: true }),
    messageId: t.exposeID('messageId', { nullable: true }),
    metadata: t.expose('metadata', { type: 'JSON' }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
  }),
})

const MemoryEntryFilter = builder.inputType('MemoryEntryFilter', {
  fields: (t) => ({
    type: t.field({ type: MemoryTypeEnum }),
    conversationId: t.string(),
    isCompressed: t.boolean(),
    minRelevance: t.float(),
    search: t.string({ description: 'Substring of the content.' }),
  }),
})

const EntryScore = builder
  .objectRef<{ entryId: string; relevance: number; hasKeyFacts: boolean }>('EntryScore')
  .implement({
    fields: (t) => ({
      entryId: t.exposeID('entryId'),
      relevance: t.exposeFloat('relevance'),
      hasKeyFacts: t.exposeBoolean('hasKeyFacts'),
    }),
  })

const SuggestedActionRef = builder.objectRef<SuggestedAction>('SuggestedAction').implement({
  fields: (t) => ({
    entryId: t.exposeID('entryId'),
    action: t.field({ type: ActionEnum, resolve: (a) => a.action }),
    relevance: t.exposeFloat('relevance'),
    reason: t.exposeString('reason'),
  }),
})

const MemoryAnalysis = builder
  .objectRef<{
    scores: { entryId: string; relevance: number; hasKeyFacts: boolean }[]
    actions: SuggestedAction[]
  }>('MemoryAnalysis')
  .implement({
    description: "The analyzer's verdict, without executing it.",
    fields: (t) => ({
      scores: t.field({ type: [EntryScore], resolve: (a) => a.scores }),
      actions: t.field({ type: [SuggestedActionRef], resolve: (a) => a.actions }),
    }),
  })

const SearchHitRef = builder.objectRef<SearchHit>('VectorSearchHit').implement({
  fields: (t) => ({
    entry: t.field({ type: MemoryEntryRef, resolve: (h) => h.entry }),
    similarity: t.exposeFloat('similarity'),
  }),
})

const VectorSearchResult = builder.objectRef<{ hits: SearchHit[] }>('VectorSearchResult').implement({
  fields: (t) => ({ hits: t.field({ type: [SearchHitRef], resolve: (r) => r.hits }) }),
})

async function sessionIdFor(
  ctx: Parameters<typeof agentScope>[0],
  scope: string,
  conversationId?: string | null,
) {
  if (!conversationId) return null
  const session = await ctx.services.sessions.find(scope, conversationId)
  if (!session) throw new NotFoundError('Session', conversationId)
  return session.id
}

builder.queryFields((t) => ({
  memoryEntries: t.connection({
    type: MemoryEntryRef,
    errors: {},
    args: {
      agentId: t.arg.id(),
      filter: t.arg({ type: MemoryEntryFilter }),
      order: t.arg({ type: ListOrderEnum, defaultValue: 'NEWEST_FIRST' }),
    },
    resolve: async (_root, args, ctx) => {
      assertPageSize(args, ctx.services.limits)
      const scope = await agentScope(ctx, args.agentId)
      const filter = args.filter ?? {}
      const sessionId = await sessionIdFor(ctx, scope, filter.conversationId)
      const entryFilter = {
        ...(sessionId ? { sessionId } : {}),
        ...(filter.type ? { type: filter.type } : {}),
        ...(filter.isCompressed != null ? { isCompressed: filter.isCompressed } : {}),
        ...(filter.minRelevance != null ? { minRelevance: filter.minRelevance } : {}),
        ...(filter.search ? { contentContains: filter.search.slice(0, 1_000) } : {}),
      }
      return resolveCursorConnection(
        { args, toCursor: encodeCursor, defaultSize: 50, maxSize: ctx.services.limits.maxPageSize },
        (page: ResolveCursorConnectionArgs) =>
          timeIdPage(page, (args.order ?? 'NEWEST_FIRST') as ListOrder, (query) =>
            ctx.services.memory.entryPage(scope, entryFilter, query),
          ),
      )
    },
  }),
  memoryEntry: t.field({
    type: MemoryEntryRef,
    errors: {},
    args: { agentId: t.arg.id(), id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) =>
      ctx.services.memory.getEntry(await agentScope(ctx, args.agentId), String(args.id)),
  }),
  analyzeMemory: t.field({
    type: MemoryAnalysis,
    errors: {},
    args: { agentId: t.arg.id(), conversationId: t.arg.string() },
    resolve: async (_root, args, ctx) => {
      const scope = await agentScope(ctx, args.agentId)
      return ctx.services.memory.analyze(scope, await sessionIdFor(ctx, scope, args.conversationId))
    },
  }),
  searchByVector: t.field({
    type: VectorSearchResult,
    errors: {},
    description: "Cosine top-k over the agent's stored embeddings.",
    args: {
      agentId: t.arg.id(),
      vector: t.arg.floatList({ required: true }),
      limit: t.arg.int({ defaultValue: 10 }),
    },
    resolve: async (_root, args, ctx) => {
      const scope = await agentScope(ctx, args.agentId)
      return { hits: await ctx.services.memory.searchByVector(scope, args.vector, args.limit ?? 10) }
    },
  }),
}))

const entryMutation = (
  name: 'promoteEntry' | 'compressEntry' | 'dropEntry',
  description: string,
  run: 'promote' | 'compress' | 'drop',
) =>
  builder.mutationField(name, (t) =>
    t.field({
      type: MemoryEntryRef,
      errors: {},
      description,
      args: { agentId: t.arg.id(), id: t.arg.id({ required: true }) },
      resolve: async (_root, args, ctx) =>
        ctx.services.memory[run](await agentScope(ctx, args.agentId), String(args.id)),
    }),
  )

entryMutation('promoteEntry', 'Moves an entry to long-term memory with relevance 1.0.', 'promote')
entryMutation('compressEntry', 'Replaces the content with its fact-preserving compression.', 'compress')
entryMutation('dropEntry', 'Deletes the entry (and its embedding); returns it as it was.', 'drop')

builder.mutationField('upsertEmbedding', (t) =>
  t.field({
    type: MemoryEntryRef,
    errors: {},
    description: "Stores (or replaces) an entry's embedding. All of an agent's vectors share one dimension.",
    args: {
      agentId: t.arg.id(),
      entryId: t.arg.id({ required: true }),
      vector: t.arg.floatList({ required: true }),
    },
    resolve: async (_root, args, ctx) =>
      ctx.services.memory.upsertEmbedding(
        await agentScope(ctx, args.agentId),
        String(args.entryId),
        args.vector,
      ),
  }),
)

import { builder } from '../builder.ts'
import { agentScope } from '../scope.ts'
import type { MessageHit } from '../services/search-service.ts'
import { MessageRef } from './session.ts'

const SearchScopeEnum = builder.enumType('SearchScope', {
  description: 'What to search. Memory items, knowledge and summaries join as the retrieval work lands.',
  values: {
    MESSAGES: { value: 'MESSAGES', description: 'Raw conversation messages, turn by turn' },
  } as const,
})

const ScoreComponents = builder.objectRef<MessageHit['components']>('ScoreComponents').implement({
  description: 'Why a hit scored what it did: each component of its score.',
  fields: (t) => ({
    bm25: t.exposeFloat('bm25', { description: 'Lexical relevance (SQLite FTS5 bm25, higher is better)' }),
  }),
})

const SearchHitRef = builder.objectRef<MessageHit>('SearchHit').implement({
  fields: (t) => ({
    scope: t.field({ type: SearchScopeEnum, resolve: () => 'MESSAGES' as const }),
    score: t.exposeFloat('score'),
    components: t.field({ type: ScoreComponents, resolve: (h) => h.components }),
    conversationId: t.exposeString('conversationId'),
    message: t.field({ type: MessageRef, resolve: (h) => h.message }),
  }),
})

const SearchResult = builder.objectRef<{ hits: MessageHit[] }>('SearchResult').implement({
  fields: (t) => ({ hits: t.field({ type: [SearchHitRef], resolve: (r) => r.hits }) }),
})

const SearchInput = builder.inputType('SearchInput', {
  fields: (t) => ({
    agentId: t.id(),
    query: t.string({ required: true }),
    scopes: t.field({ type: [SearchScopeEnum], defaultValue: ['MESSAGES'] }),
    conversationId: t.string({ description: 'Only this conversation.' }),
    limit: t.int({ defaultValue: 10 }),
  }),
})

builder.queryField('search', (t) =>
  t.field({
    type: SearchResult,
    errors: {},
    description: "Ranked search over an agent's memory, each hit with its score broken down.",
    args: { input: t.arg({ type: SearchInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const scope = await agentScope(ctx, input.agentId)
      const hits = await ctx.services.search.messages(scope, input.query, {
        limit: input.limit ?? 10,
        conversationId: input.conversationId,
      })
      return { hits }
    },
  }),
)

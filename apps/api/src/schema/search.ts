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
    bm25: t.exposeFloat('bm25', {
      description: 'Lexical relevance (SQLite FTS5 bm25, higher is better; 0 when no word matches)',
    }),
    vector: t.exposeFloat('vector', {
      description: 'Cosine similarity of the embeddings (0 when it was not a vector candidate)',
    }),
    context: t.exposeFloat('context', {
      description: 'Half the scores of the candidate turns beside it (dialogue context), before weighting',
    }),
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

const SearchStrategyEnum = builder.enumType('SearchStrategy', {
  values: {
    HYBRID: { value: 'HYBRID', description: 'BM25 and vector candidates, fused by weight (default)' },
    LEXICAL: { value: 'LEXICAL', description: 'BM25 only' },
  } as const,
})

const SearchWeightsInput = builder.inputType('SearchWeightsInput', {
  fields: (t) => ({ bm25: t.float(), vector: t.float(), context: t.float() }),
})

const SearchInput = builder.inputType('SearchInput', {
  fields: (t) => ({
    agentId: t.id(),
    query: t.string({ required: true }),
    scopes: t.field({ type: [SearchScopeEnum], defaultValue: ['MESSAGES'] }),
    conversationId: t.string({ description: 'Only this conversation.' }),
    limit: t.int({ defaultValue: 10 }),
    strategy: t.field({ type: SearchStrategyEnum, defaultValue: 'HYBRID' }),
    weights: t.field({
      type: SearchWeightsInput,
      description: 'Each 0..1; defaults bm25 0.7, vector 0.3, context 1.',
    }),
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
        strategy: input.strategy,
        weights: input.weights
          ? {
              bm25: input.weights.bm25 ?? undefined,
              vector: input.weights.vector ?? undefined,
              context: input.weights.context ?? undefined,
            }
          : null,
      })
      return { hits }
    },
  }),
)

import { graphEntityOut, graphRelationshipOut, searchOptionsOf } from '@engram/engine'
import {
  DEFAULT_CONTEXT_TURNS,
  DEFAULT_MENTIONED_TIMES,
  DEFAULT_SEARCH_WEIGHTS,
  knowledgeRecordOf,
  MAX_CONTEXT_TURNS,
  MAX_WINDOW_DAYS,
  type ScoreComponents,
  SEARCH_SCOPES,
  SEARCH_STRATEGIES,
  type SearchHit,
  type SearchScope,
  type SearchStrategy,
} from '@engram/engine/search'
import { builder } from '../builder.ts'
import { agentScope } from '../scope.ts'
import { GraphEntityRef, GraphRelationshipRef } from './graph.ts'
import { KnowledgeRef } from './knowledge.ts'
import { MemoryFilterInput, MemoryItemRef, toMemoryFilter } from './memory-item.ts'
import { MessageRef } from './session.ts'

const SCOPE_DESCRIPTIONS: Record<SearchScope, string> = {
  MEMORIES: 'Long-term memory items (by default those valid now)',
  MESSAGES: 'Raw conversation messages, turn by turn',
  KNOWLEDGE: 'Cross-session knowledge (key: value)',
  SUMMARIES: 'Conversation summaries ([CONTEXT SUMMARY] messages)',
  GRAPH:
    'The knowledge graph: entities and relationships, all time (ended ones too), matched by names, aliases and relations',
  POOLS:
    "The memories of every shared pool the agent is a member of (reader or contributor), each ranked by its pool's search as queryPool ranks it; each hit names its poolId",
}

const SearchScopeEnum = builder.enumType('SearchScope', {
  description: 'What to search.',
  values: Object.fromEntries(
    SEARCH_SCOPES.map((s) => [s, { value: s, description: SCOPE_DESCRIPTIONS[s] }]),
  ) as Record<SearchScope, { value: SearchScope; description: string }>,
})

const STRATEGY_DESCRIPTIONS: Record<SearchStrategy, string> = {
  HYBRID:
    'Default. BM25 (with pseudo-relevance feedback) and vector candidates (×3 each) fused by weight (spec 003), dialogue context for messages (for memories formed from chat, the score of their source turn over messages), a time boost for hits in a period the query names, a speaker boost for the participant it names, temporal decay for memories and summaries, MMR reranking (λ 0.7, over-fetch ×2)',
  LEXICAL: 'BM25 only (SQLite FTS5)',
  SIMILARITY: 'Embedding cosine only (spec 002 strategy 2)',
  RECENCY: 'Newest first (spec 002 strategy 1)',
  IMPORTANCE: 'Most important first (spec 002 strategy 3; knowledge by confidence)',
  WEIGHTED: 'Spec 002 hybrid: recency 0.3, similarity 0.5, importance 0.2 over candidates ×3',
  SIMILARITY_IMPORTANCE: "Spec 001's 0.7 · similarity + 0.3 · importance",
}

const SearchStrategyEnum = builder.enumType('SearchStrategy', {
  values: Object.fromEntries(
    SEARCH_STRATEGIES.map((s) => [s, { value: s, description: STRATEGY_DESCRIPTIONS[s] }]),
  ) as Record<SearchStrategy, { value: SearchStrategy; description: string }>,
})

const ScoreComponentsRef = builder.objectRef<ScoreComponents>('ScoreComponents').implement({
  description: 'Why a hit scored what it did: each component of its score, before weighting.',
  fields: (t) => ({
    bm25: t.exposeFloat('bm25', {
      description: 'Lexical relevance (SQLite FTS5 bm25, higher is better; 0 when no word matches)',
    }),
    vector: t.exposeFloat('vector', {
      description: 'Cosine similarity of the embeddings (0 when it was not a vector candidate)',
    }),
    importance: t.exposeFloat('importance', {
      description: "The memory's importance (knowledge: its confidence; messages 0.5)",
    }),
    recency: t.exposeFloat('recency', { description: '1 for the newest candidate, falling with rank' }),
    confidence: t.exposeFloat('confidence'),
    context: t.exposeFloat('context', {
      description:
        "Dialogue context: half the scores of the candidate turns up to contextTurns away in the same episode, each over its distance; for a memory formed from chat, its source turn's score as search over messages ranks it, relative to the best turn's (weighted by weights.context)",
    }),
    episode: t.exposeFloat('episode', {
      description: "weights.episode × the best score among the candidate turns of the turn's episode",
    }),
    time: t.exposeFloat('time', {
      description:
        'Time factor applied: 1 + weights.time inside a period the query names (a date, a month, "last week"), else 1',
    }),
    speaker: t.exposeFloat('speaker', {
      description:
        'Speaker factor applied: 1 + weights.speaker for a turn of the participant the query names (a memory of that user), else 1',
    }),
    feedback: t.exposeFloat('feedback', {
      description:
        'BM25 of the pseudo-relevance feedback terms (the words standing out in the best lexical hits)',
    }),
    cooccurrence: t.exposeFloat('cooccurrence', {
      description:
        "BM25 of the words that keep company with the query's words in the agent's own history (PMI)",
    }),
    graph: t.exposeFloat('graph', {
      description:
        "Graph expansion's score (0..1): how relevant the best relationship it was learnt from is, around the entities the query names (weighted by weights.graph); 0 when none reached it",
    }),
    decay: t.exposeFloat('decay', {
      description: 'Temporal decay factor applied (1: none; 0.5 after one half-life)',
    }),
  }),
})

const SearchHitRef = builder.objectRef<SearchHit>('SearchHit').implement({
  description:
    'One hit. Hits come in rank order. Without MMR (mmrLambda 1) that is score order. With MMR each next hit is the one with the highest mmrScore = λ·relevance − (1−λ)·redundancy among those left, so a hit can rank above one with a higher score when that one repeats a hit above it: e.g. rank 6 score 0.46 (mmrScore 0.30) above rank 7 score 0.61, redundancy 0.8 with rank 2 (mmrScore 0.25). mmrScore never increases with rank.',
  fields: (t) => ({
    scope: t.field({ type: SearchScopeEnum, resolve: (h) => h.scope }),
    id: t.exposeID('id'),
    rank: t.exposeInt('rank', { description: '1-based position in the results: the order they come in.' }),
    score: t.exposeFloat('score', {
      description:
        "The strategy's relevance score (see components). With MMR the hits are not in score order: see rank and mmrScore.",
    }),
    relevance: t.exposeFloat('relevance', {
      description: 'score over the best score among the candidates: the relevance term of MMR (at most 1).',
    }),
    redundancy: t.exposeFloat('redundancy', {
      description:
        'Highest word overlap (Jaccard of content words, 0..1) with a hit ranked above it; what MMR held against it. 0 without MMR.',
    }),
    redundantWithRank: t.exposeInt('redundantWithRank', {
      nullable: true,
      description:
        'Rank of the hit above it that redundancy was measured against; null when it overlaps none.',
    }),
    mmrScore: t.exposeFloat('mmrScore', {
      description:
        "λ·relevance − (1−λ)·redundancy, λ being the result's mmrLambda: what the hit was ranked on. Non-increasing with rank; equal to relevance without MMR.",
    }),
    components: t.field({ type: ScoreComponentsRef, resolve: (h) => h.components }),
    text: t.exposeString('text', { description: 'What was matched: the memory, message or "key: value"' }),
    timestamp: t.expose('timestamp', { type: 'DateTime' }),
    conversationId: t.exposeString('conversationId', { nullable: true }),
    memory: t.field({ type: MemoryItemRef, nullable: true, resolve: (h) => h.memory ?? null }),
    message: t.field({ type: MessageRef, nullable: true, resolve: (h) => h.message ?? null }),
    knowledge: t.field({
      type: KnowledgeRef,
      nullable: true,
      resolve: (h) => (h.knowledge ? knowledgeRecordOf(h.knowledge) : null),
    }),
    entity: t.field({
      type: GraphEntityRef,
      nullable: true,
      description: 'A GRAPH hit on an entity.',
      resolve: (h) => (h.entity ? graphEntityOut(h.entity) : null),
    }),
    relationship: t.field({
      type: GraphRelationshipRef,
      nullable: true,
      description: 'A GRAPH hit on a relationship, with its ends and sources.',
      resolve: (h, _args, ctx) =>
        h.relationship ? graphRelationshipOut(h.relationship, ctx.services.clock.now()) : null,
    }),
    poolId: t.id({
      nullable: true,
      description: 'A POOLS hit: the shared pool its memory is in (see memory); null for the other scopes.',
      resolve: (h) => h.poolId ?? null,
    }),
  }),
})

const SearchResult = builder.objectRef<{ hits: SearchHit[]; mmrLambda: number }>('SearchResult').implement({
  fields: (t) => ({
    hits: t.field({ type: [SearchHitRef], description: 'In rank order.', resolve: (r) => r.hits }),
    mmrLambda: t.exposeFloat('mmrLambda', {
      description:
        'The MMR λ the hits were ranked with: 1 is plain score order, below 1 is MMR order (see SearchHit).',
    }),
  }),
})

const SearchWeightsInput = builder.inputType('SearchWeightsInput', {
  description: `Each 0..1. HYBRID: bm25 ${DEFAULT_SEARCH_WEIGHTS.bm25}, vector ${DEFAULT_SEARCH_WEIGHTS.vector}, context ${DEFAULT_SEARCH_WEIGHTS.context}, episode ${DEFAULT_SEARCH_WEIGHTS.episode}, time ${DEFAULT_SEARCH_WEIGHTS.time}, speaker ${DEFAULT_SEARCH_WEIGHTS.speaker}, feedback ${DEFAULT_SEARCH_WEIGHTS.feedback}, cooccurrence ${DEFAULT_SEARCH_WEIGHTS.cooccurrence}, graph ${DEFAULT_SEARCH_WEIGHTS.graph} (0 turns a signal off). WEIGHTED: recency 0.3, similarity 0.5, importance 0.2.`,
  fields: (t) => ({
    bm25: t.float(),
    vector: t.float(),
    context: t.float({
      description:
        "Share of the neighbouring turns' scores a turn gains, and of its source turn's score a memory formed from chat gains (dialogue context)",
    }),
    episode: t.float({ description: "Share of the best score in the turn's episode a turn gains" }),
    time: t.float({ description: 'A hit inside a period the query names scores ×(1 + time)' }),
    speaker: t.float({
      description: 'A turn of the participant the query names scores ×(1 + speaker); never a filter',
    }),
    feedback: t.float({ description: 'Weight of the pseudo-relevance feedback terms in the lexical score' }),
    cooccurrence: t.float({
      description: "Weight of the words co-occurring with the query's in the agent's history",
    }),
    graph: t.float({
      description:
        'Graph expansion over MESSAGES and MEMORIES: entities the query names pull in the turns and memories their relationships (up to 2 hops) were learnt from, each gaining graph × its graph score; 0 turns it off',
    }),
    recency: t.float(),
    similarity: t.float(),
    importance: t.float(),
  }),
})

const SearchFiltersInput = builder.inputType('SearchFiltersInput', {
  fields: (t) => ({
    memories: t.field({ type: MemoryFilterInput, description: 'For MEMORIES' }),
    conversationId: t.string({ description: 'MESSAGES and SUMMARIES of this conversation only' }),
    since: t.field({ type: 'DateTime', description: 'MESSAGES and SUMMARIES at or after' }),
    until: t.field({ type: 'DateTime', description: 'MESSAGES and SUMMARIES at or before' }),
  }),
})

const SearchInput = builder.inputType('SearchInput', {
  fields: (t) => ({
    agentId: t.id(),
    query: t.string({ required: true }),
    scopes: t.field({ type: [SearchScopeEnum], defaultValue: ['MESSAGES'] }),
    conversationId: t.string({ description: 'Only this conversation (same as filters.conversationId).' }),
    limit: t.int({ description: "Default: the agent's recallTopK (10)" }),
    filters: t.field({ type: SearchFiltersInput }),
    strategy: t.field({ type: SearchStrategyEnum, defaultValue: 'HYBRID' }),
    weights: t.field({ type: SearchWeightsInput }),
    threshold: t.float({ description: 'Leave out hits scoring below it' }),
    mmrLambda: t.float({
      description: "0..1; 1 turns MMR off. Default: the agent's mmrLambda (0.7) for HYBRID, 1 otherwise",
    }),
    decay: t.boolean({
      description: 'Temporal decay (half-life 30 days). Default: on for HYBRID over MEMORIES and SUMMARIES',
    }),
    contextTurns: t.int({
      description: `Dialogue context reaches this many turns each side, 1 to ${MAX_CONTEXT_TURNS} (default ${DEFAULT_CONTEXT_TURNS})`,
    }),
    mentionedTimes: t.boolean({
      description: `Periods a turn names ("yesterday I…", resolved against its own time) count for the time boost (default ${DEFAULT_MENTIONED_TIMES})`,
    }),
    windowDays: t.int({
      description: `MESSAGES and SUMMARIES of the last N days, counted back from the agent's newest message, 0 to ${MAX_WINDOW_DAYS}. Default: the agent's conversationWindowDays setting (0: all history)`,
    }),
  }),
})

builder.queryField('search', (t) =>
  t.field({
    type: SearchResult,
    errors: {},
    description:
      "Ranked search over an agent's memory, each hit with its score broken down. Hits count as accesses.",
    args: { input: t.arg({ type: SearchInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const scope = await agentScope(ctx, input.agentId)
      return ctx.services.search.rank(
        scope,
        input.query,
        searchOptionsOf(input, {
          memoryFilter: toMemoryFilter(input.filters?.memories),
          since: input.filters?.since,
          until: input.filters?.until,
        }),
      )
    },
  }),
)

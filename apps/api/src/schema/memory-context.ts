import {
  type BuiltMessage,
  CONTEXT_SECTIONS,
  type ContextBuilderBudget,
  type ContextSectionName,
  type ContextSectionReport,
  MAX_BUILD_TOOL_COUNT,
  MAX_CONTEXT_WINDOW_TOKENS,
  MIN_CONTEXT_WINDOW_TOKENS,
} from '@engram/core'
import type { BuiltContext, MemoryContextResult } from '@engram/engine'
import { builder, upperCaseValues } from '../builder.ts'
import { agentScope } from '../scope.ts'
import { withoutNulls } from './runs.ts'

const ContextSectionEnum = builder.enumType('ContextSection', {
  description: 'Sections of the assembled context, in priority order (lower priorities are trimmed first).',
  values: upperCaseValues(CONTEXT_SECTIONS),
})

const ContextSectionReportRef = builder.objectRef<ContextSectionReport>('ContextSectionReport').implement({
  description:
    'Accounting for one section: its budget, the tokens it used, what went in and what was left out.',
  fields: (t) => ({
    section: t.field({ type: ContextSectionEnum, resolve: (s) => s.name }),
    title: t.exposeString('title'),
    budgetTokens: t.exposeInt('budgetTokens', {
      nullable: true,
      description: 'null: no budget (user overrides)',
    }),
    usedTokens: t.exposeInt('usedTokens'),
    included: t.exposeStringList('included', {
      description: 'Ids as kind:id (memory:12, message:40, knowledge:3)',
    }),
    omitted: t.exposeStringList('omitted'),
    includedCount: t.int({ resolve: (s) => s.included.length }),
    omittedCount: t.int({ resolve: (s) => s.omitted.length }),
  }),
})

// Spec 002's context builder (issue 17): the buildContext option and the prompt it builds.
const BuiltMessageRoleEnum = builder.enumType('BuiltMessageRole', {
  values: upperCaseValues(['system', 'user', 'assistant'] as const),
})
const BuiltMessageKindEnum = builder.enumType('BuiltMessageKind', {
  description:
    'What a built message is: the instructions, a memory item, a stored turn, the overflow summary or the input.',
  values: upperCaseValues(['instructions', 'memory', 'turn', 'summary', 'input'] as const),
})

const BuiltMessageRef = builder.objectRef<BuiltMessage>('BuiltMessage').implement({
  description: 'One chat message of the built prompt, ready for a chat API.',
  fields: (t) => ({
    role: t.field({ type: BuiltMessageRoleEnum, resolve: (m) => m.role }),
    content: t.exposeString('content'),
    kind: t.field({ type: BuiltMessageKindEnum, resolve: (m) => m.kind }),
    sourceId: t.exposeString('sourceId', {
      nullable: true,
      description: 'The memory or stored turn shown (memory:12, message:40); null for the others',
    }),
    tokenCount: t.exposeInt('tokenCount'),
  }),
})

const ContextBuilderBudgetRef = builder.objectRef<ContextBuilderBudget>('ContextBuilderBudget').implement({
  description:
    "Spec 002's budget: the window, its system (min(4000, 5%)), tools (500 each) and output (min(4000, 10%)) reserves, the input, and memory (70% of what is left).",
  fields: (t) => ({
    total: t.exposeInt('total'),
    system: t.exposeInt('system'),
    tools: t.exposeInt('tools'),
    output: t.exposeInt('output'),
    input: t.exposeInt('input'),
    memory: t.exposeInt('memory'),
  }),
})

const BuiltMemoriesRef = builder.objectRef<BuiltContext['memories']>('BuiltMemories').implement({
  description: 'Which ranked memories went in, which did not fit, and which of those the summary covers.',
  fields: (t) => ({
    included: t.exposeStringList('included'),
    overflowed: t.exposeStringList('overflowed'),
    summarized: t.exposeStringList('summarized'),
  }),
})

const BuiltContextRef = builder.objectRef<BuiltContext>('BuiltContext').implement({
  description:
    "Spec 002's built prompt: [instructions], the agent's memories and stored turns ranked by recency, similarity and importance while they fit, '[Previous context summary]: …' for the rest when it fits, then the input.",
  fields: (t) => ({
    messages: t.field({ type: [BuiltMessageRef], resolve: (b) => b.messages }),
    budget: t.field({ type: ContextBuilderBudgetRef, resolve: (b) => b.budget }),
    tokenCount: t.exposeInt('tokenCount', { description: "Every message's tokens, the input included" }),
    memories: t.field({ type: BuiltMemoriesRef, resolve: (b) => b.memories }),
  }),
})

const ContextBuilderWeightsInput = builder.inputType('ContextBuilderWeightsInput', {
  description:
    "Spec 002's hybrid weights, each 0 to 1 (defaults recency 0.3, similarity 0.5, importance 0.2).",
  fields: (t) => ({
    recency: t.float(),
    similarity: t.float(),
    importance: t.float(),
  }),
})

const BuildContextInput = builder.inputType('BuildContextInput', {
  description: "Spec 002's context builder: a whole prompt for a model window beside the sections.",
  fields: (t) => ({
    contextWindow: t.int({
      description: `The model's window in tokens (default 128000, ${MIN_CONTEXT_WINDOW_TOKENS} to ${MAX_CONTEXT_WINDOW_TOKENS})`,
    }),
    instructions: t.string({ description: 'The system prompt, the first message' }),
    toolCount: t.int({
      description: `Tools given to the model: 500 tokens reserved each (at most ${MAX_BUILD_TOOL_COUNT})`,
    }),
    currentInput: t.string({ description: "The user's message, the last one (default: query)" }),
    candidateLimit: t.int({ description: 'Memories ranked before the budget decides (default 100)' }),
    weights: t.field({ type: ContextBuilderWeightsInput }),
  }),
})

const MemoryContextRef = builder.objectRef<MemoryContextResult>('MemoryContext').implement({
  description: "The block an agent injects into its prompt, as spec 001's <memory_context>.",
  fields: (t) => ({
    text: t.exposeString('text'),
    totalTokens: t.exposeInt('totalTokens', {
      description: 'Counted with the configured tokenizer on the whole text',
    }),
    budgetTokens: t.exposeInt('budgetTokens'),
    sections: t.field({ type: [ContextSectionReportRef], resolve: (c) => c.sections }),
    cached: t.exposeBoolean('cached', { description: 'Served from the 10-second cache' }),
    generatedAt: t.expose('generatedAt', { type: 'DateTime' }),
    built: t.field({
      type: BuiltContextRef,
      nullable: true,
      description: "Spec 002's built prompt; null unless buildContext was given",
      resolve: (c) => c.built ?? null,
    }),
  }),
})

const MemoryContextInput = builder.inputType('MemoryContextInput', {
  fields: (t) => ({
    agentId: t.id(),
    query: t.string({ description: 'The current message or task: selects relevant memories and knowledge' }),
    conversationId: t.string({ description: "Adds this conversation's recent turns (lowest priority)" }),
    userId: t.string({ description: "Only this user's memories" }),
    budgetTokens: t.int({ description: 'Total token budget (default 8000, at most 200000)' }),
    sections: t.field({ type: [ContextSectionEnum], description: 'Which sections (default all)' }),
    buildContext: t.field({
      type: BuildContextInput,
      description: "Also build spec 002's whole prompt (answered as built)",
    }),
  }),
})

builder.queryField('memoryContext', (t) =>
  t.field({
    type: MemoryContextRef,
    errors: {},
    description:
      'Assembles memory for a prompt: sections in priority order, each within its token budget, lower priorities trimmed first. Cached 10 s per agent and request; any write to the agent invalidates it.',
    args: { input: t.arg({ type: MemoryContextInput, required: true }) },
    resolve: async (_root, { input }, ctx) =>
      ctx.services.context.build(await agentScope(ctx, input.agentId), {
        query: input.query,
        conversationId: input.conversationId,
        userId: input.userId,
        budgetTokens: input.budgetTokens,
        sections: input.sections as ContextSectionName[] | null,
        buildContext: input.buildContext ? withoutNulls(input.buildContext) : undefined,
      }),
  }),
)

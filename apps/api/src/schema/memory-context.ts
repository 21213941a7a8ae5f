import { CONTEXT_SECTIONS, type ContextSectionName, type ContextSectionReport } from '@engram/core'
import type { MemoryContextResult } from '@engram/engine'
import { builder, upperCaseValues } from '../builder.ts'
import { agentScope } from '../scope.ts'

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
      }),
  }),
)

// Automatic conversation summaries (issue 13 §3): the list and "summarise now", answered through
// the operations layer like the SDK's.
import type { OutputOf } from '@engram/contract'
import { builder } from '../builder.ts'
import { operate } from '../operations.ts'
import { SummaryStrategyEnum } from './formation-settings.ts'

export const FormationWriterEnum = builder.enumType('FormationWriter', {
  description:
    'Who wrote a summary or a profile version: the language model, or the offline extractive writer.',
  values: ['LLM', 'EXTRACTIVE'] as const,
})

const SummaryTriggerEnum = builder.enumType('SummaryTrigger', {
  description:
    'What started a summary: a pause (DEBOUNCE), a switch to another conversation, the token THRESHOLD, or a REQUEST.',
  values: ['DEBOUNCE', 'SWITCH', 'THRESHOLD', 'REQUEST'] as const,
})

const SummaryRef = builder.objectRef<OutputOf<'summaries'>[number]>('Summary').implement({
  description:
    'An automatic summary of part of a conversation: a record of its own (not a message), kept for the agent’s summary retention.',
  fields: (t) => ({
    id: t.exposeID('id'),
    agentId: t.exposeID('agentId'),
    conversationId: t.exposeString('conversationId'),
    content: t.exposeString('content'),
    strategy: t.field({ type: SummaryStrategyEnum, resolve: (s) => s.strategy }),
    writer: t.field({ type: FormationWriterEnum, resolve: (s) => s.writer }),
    trigger: t.field({ type: SummaryTriggerEnum, resolve: (s) => s.trigger }),
    firstMessageId: t.exposeString('firstMessageId', { description: 'The first message it covers.' }),
    lastMessageId: t.exposeString('lastMessageId', { description: 'The last message it covers.' }),
    messageCount: t.exposeInt('messageCount'),
    tokenCount: t.exposeInt('tokenCount'),
    createdAt: t.expose('createdAt', {
      type: 'DateTime',
      description: 'When Engram stored it; retention counts from here.',
    }),
  }),
})

const SummarizePayload = builder.objectRef<OutputOf<'summarize'>>('SummarizePayload').implement({
  fields: (t) => ({
    summary: t.field({
      type: SummaryRef,
      nullable: true,
      description: 'Null when every turn of the conversation is already in a summary.',
      resolve: (p) => p.summary,
    }),
  }),
})

builder.queryFields((t) => ({
  summary: t.field({
    type: SummaryRef,
    errors: {},
    description: 'One automatic summary by its id; NotFoundError when the agent has none by that id.',
    args: { agentId: t.arg.id(), id: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => operate(ctx, 'summary', args),
  }),
  summaries: t.field({
    type: [SummaryRef],
    errors: {},
    description:
      'The automatic summaries of the agent’s conversations (of one when named), newest first, at most `limit` (1-100, 20 when not given).',
    args: { agentId: t.arg.id(), conversationId: t.arg.string(), limit: t.arg.int() },
    resolve: (_root, args, ctx) => operate(ctx, 'summaries', args),
  }),
}))

builder.mutationFields((t) => ({
  summarize: t.field({
    type: SummarizePayload,
    errors: {},
    description:
      'Summarises a conversation’s turns not yet in a summary now; the strategy is the call’s, else the agent’s setting.',
    args: {
      agentId: t.arg.id(),
      conversationId: t.arg.string({ required: true }),
      strategy: t.arg({ type: SummaryStrategyEnum }),
    },
    resolve: (_root, args, ctx) => operate(ctx, 'summarize', args),
  }),
}))

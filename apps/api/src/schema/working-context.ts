// Spec 002's L1 working memory, the working context in Engram (issue 17), and recency retrieval
// (spec 002's strategy 1). Every field answers through the operations layer, as the SDK's embedded
// client and MCP do.
import type { OutputOf } from '@engram/contract'
import type { Role } from '@engram/core'
import { builder } from '../builder.ts'
import type { Context } from '../context.ts'
import { operate } from '../operations.ts'
import { RoleEnum } from './session.ts'

type WorkingContext = OutputOf<'workingContext'>
type WorkingMessage = WorkingContext['messages'][number]
type WorkingToolResult = WorkingContext['toolResults'][number]
type WorkingContextChange = OutputOf<'appendWorkingContext'>
type WorkingContextFlush = NonNullable<WorkingContextChange['flush']>
type RecentMemoryItem = OutputOf<'recentMemory'>[number]

// The Role enum's values are core's lower-case roles; the catalog speaks upper case.
const roleOf = (role: string) => role.toLowerCase() as Role

const FlushReasonEnum = builder.enumType('WorkingContextFlushReason', {
  description:
    'THRESHOLD: an append took the context past the flush threshold. REQUEST: flushWorkingContext.',
  values: ['THRESHOLD', 'REQUEST'] as const,
})

const RecentSourceEnum = builder.enumType('RecentMemorySource', {
  description:
    'Where recentMemory read an item (spec 002’s order): WORKING_CONTEXT (L1, not yet stored), L2 (the Redis episodic layer), DATABASE.',
  values: ['WORKING_CONTEXT', 'L2', 'DATABASE'] as const,
})

const WorkingMessageRef = builder.objectRef<WorkingMessage>('WorkingMessage').implement({
  description: 'A message of the current execution, held in the working context until a flush stores it.',
  fields: (t) => ({
    id: t.exposeID('id', { description: '`wc-<n>`: unique within the context, not a stored message’s id.' }),
    conversationId: t.exposeString('conversationId', { description: 'Where a flush stores it.' }),
    role: t.field({ type: RoleEnum, resolve: (m) => roleOf(m.role) }),
    content: t.exposeString('content'),
    name: t.exposeString('name', { nullable: true, description: 'The participant or tool that said it.' }),
    toolCallId: t.exposeString('toolCallId', { nullable: true, description: 'The tool call it answers.' }),
    tokenCount: t.exposeInt('tokenCount'),
    at: t.expose('at', { type: 'DateTime', description: 'When it was appended (stored with this time).' }),
  }),
})

const WorkingToolResultRef = builder.objectRef<WorkingToolResult>('WorkingToolResult').implement({
  description: 'An active tool call’s result; a flush stores it as a TOOL message.',
  fields: (t) => ({
    toolCallId: t.exposeString('toolCallId'),
    conversationId: t.exposeString('conversationId'),
    name: t.exposeString('name', { description: 'The tool.' }),
    content: t.exposeString('content'),
    isError: t.exposeBoolean('isError'),
    tokenCount: t.exposeInt('tokenCount'),
    at: t.expose('at', { type: 'DateTime' }),
  }),
})

const WorkingContextRef = builder.objectRef<WorkingContext>('WorkingContext').implement({
  description:
    'Spec 002’s L1 working memory of an agent: the messages and tool results of the current execution not yet stored, a scratchpad, and their token count. It lives 30 minutes after its last write (configurable) and flushes into the stored conversation past the threshold.',
  fields: (t) => ({
    agentId: t.exposeID('agentId'),
    conversationId: t.exposeString('conversationId', {
      nullable: true,
      description: 'The conversation of the latest append.',
    }),
    messages: t.field({ type: [WorkingMessageRef], resolve: (c) => c.messages }),
    toolResults: t.field({ type: [WorkingToolResultRef], resolve: (c) => c.toolResults }),
    scratchpad: t.exposeString('scratchpad'),
    tokenCount: t.exposeInt('tokenCount', {
      description: 'Messages + tool results + scratchpad, by the server’s tokenizer.',
    }),
    flushThresholdTokens: t.exposeInt('flushThresholdTokens', {
      description: 'Past this many tokens after an append the context flushes (32,000 by default).',
    }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime', nullable: true }),
    expiresAt: t.expose('expiresAt', {
      type: 'DateTime',
      nullable: true,
      description: 'When it is dropped unless written again.',
    }),
  }),
})

const WorkingContextFlushRef = builder.objectRef<WorkingContextFlush>('WorkingContextFlush').implement({
  description: 'What a flush stored in the agent’s conversations.',
  fields: (t) => ({
    reason: t.field({ type: FlushReasonEnum, resolve: (f) => f.reason }),
    messages: t.exposeInt('messages', { description: 'Messages stored, tool results included.' }),
    toolResults: t.exposeInt('toolResults'),
    tokens: t.exposeInt('tokens'),
    conversationIds: t.exposeStringList('conversationIds'),
  }),
})

const WorkingContextChangeRef = builder.objectRef<WorkingContextChange>('WorkingContextChange').implement({
  description: 'The working context after a change, and the flush it caused, if any.',
  fields: (t) => ({
    context: t.field({ type: WorkingContextRef, resolve: (c) => c.context }),
    flush: t.field({ type: WorkingContextFlushRef, nullable: true, resolve: (c) => c.flush }),
  }),
})

const RecentMemoryItemRef = builder.objectRef<RecentMemoryItem>('RecentMemoryItem').implement({
  description: 'One of the agent’s newest items, and where it was read.',
  fields: (t) => ({
    id: t.exposeID('id'),
    source: t.field({ type: RecentSourceEnum, resolve: (i) => i.source }),
    conversationId: t.exposeString('conversationId'),
    role: t.field({ type: RoleEnum, resolve: (i) => roleOf(i.role) }),
    content: t.exposeString('content'),
    name: t.exposeString('name', { nullable: true }),
    toolCallId: t.exposeString('toolCallId', { nullable: true }),
    tokenCount: t.exposeInt('tokenCount'),
    at: t.expose('at', { type: 'DateTime' }),
  }),
})

const WorkingMessageInput = builder.inputType('WorkingMessageInput', {
  fields: (t) => ({
    role: t.field({ type: RoleEnum, required: true }),
    content: t.string({ required: true }),
    name: t.string({ description: 'The participant or tool that said it (a chat API’s `name`).' }),
    toolCallId: t.string({ description: 'The tool call a TOOL message answers.' }),
  }),
})

/** The catalog's shape of the arguments: roles in upper case. */
function appendArgs(args: Record<string, unknown>): Record<string, unknown> {
  const messages = args.messages as { role: string }[] | undefined
  return messages ? { ...args, messages: messages.map((m) => ({ ...m, role: m.role.toUpperCase() })) } : args
}

const answer =
  <N extends Parameters<typeof operate>[1]>(
    name: N,
    shape: (a: Record<string, unknown>) => Record<string, unknown> = (a) => a,
  ) =>
  (_root: unknown, args: Record<string, unknown>, ctx: Context) =>
    operate(ctx, name, shape(withoutNullsIn(args)))

/** Optional GraphQL arguments may arrive as null, nested ones too; the catalog's optional fields are absent. */
function withoutNullsIn(value: Record<string, unknown>): Record<string, unknown> {
  const clean = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(clean)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(
            Object.entries(v)
              .filter(([, x]) => x != null)
              .map(([k, x]) => [k, clean(x)]),
          )
        : v
  return clean(value) as Record<string, unknown>
}

builder.queryFields((t) => ({
  workingContext: t.field({
    type: WorkingContextRef,
    errors: {},
    description:
      'The agent’s working context (spec 002’s L1): messages and tool results not yet stored, the scratchpad, the token count against the flush threshold.',
    args: { agentId: t.arg.id() },
    resolve: answer('workingContext'),
  }),
  recentMemory: t.field({
    type: [RecentMemoryItemRef],
    errors: {},
    description:
      'The newest items, newest first (spec 002’s recency strategy): the working context first, then the Redis L2 layer when configured, then the database; each says where it came from, none twice.',
    args: {
      agentId: t.arg.id(),
      conversationId: t.arg.string({
        description: 'Only this conversation; every conversation when not given.',
      }),
      limit: t.arg.int({ description: '1-100 (20 when not given).' }),
    },
    resolve: answer('recentMemory'),
  }),
}))

builder.mutationFields((t) => ({
  appendWorkingContext: t.field({
    type: WorkingContextChangeRef,
    errors: {},
    description:
      'Appends messages to the working context. Past the flush threshold (32,000 tokens by default) it flushes into the stored conversation automatically (`flush` says so).',
    args: {
      agentId: t.arg.id(),
      messages: t.arg({ type: [WorkingMessageInput], required: true }),
      conversationId: t.arg.string({
        description:
          'Where a flush stores them; the server’s default conversation ("working-context") when not given.',
      }),
    },
    resolve: answer('appendWorkingContext', appendArgs),
  }),
  setWorkingScratchpad: t.field({
    type: WorkingContextRef,
    errors: {},
    description: 'Replaces the scratchpad (kept across flushes, never stored); an empty text empties it.',
    args: { agentId: t.arg.id(), scratchpad: t.arg.string({ required: true }) },
    resolve: answer('setWorkingScratchpad'),
  }),
  recordToolResult: t.field({
    type: WorkingContextChangeRef,
    errors: {},
    description:
      'Records a tool call’s result (the same toolCallId again replaces it); a flush stores it as a TOOL message.',
    args: {
      agentId: t.arg.id(),
      toolCallId: t.arg.string({ required: true }),
      name: t.arg.string({ required: true, description: 'The tool.' }),
      content: t.arg.string({ required: true }),
      isError: t.arg.boolean(),
      conversationId: t.arg.string({ description: 'Default: the conversation of the latest append.' }),
    },
    resolve: answer('recordToolResult'),
  }),
  flushWorkingContext: t.field({
    type: WorkingContextChangeRef,
    errors: {},
    description: 'Stores the messages and tool results in their conversations now; the scratchpad stays.',
    args: { agentId: t.arg.id() },
    resolve: answer('flushWorkingContext'),
  }),
  clearWorkingContext: t.field({
    type: WorkingContextRef,
    errors: {},
    description: 'Empties the working context, scratchpad included, storing nothing.',
    args: { agentId: t.arg.id() },
    resolve: answer('clearWorkingContext'),
  }),
}))

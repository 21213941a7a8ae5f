import {
  type ContextWindowPlan,
  MAX_SPEAKER_CHARS,
  ROLES,
  type Session,
  type StoredMessage,
} from '@engram/core'
import {
  assertOffsetPage,
  assertPageSize,
  encodeCursor,
  type GuardedMessage,
  guardMessages,
  timeIdPage,
} from '@engram/engine'
import {
  type ResolveCursorConnectionArgs,
  resolveCursorConnection,
  resolveOffsetConnection,
} from '@pothos/plugin-relay'
import { builder, upperCaseValues } from '../builder.ts'
import { operate } from '../operations.ts'
import { agentScope, listScope } from '../scope.ts'

export const RoleEnum = builder.enumType('Role', {
  values: upperCaseValues(ROLES),
})

export const MessageRef = builder.objectRef<StoredMessage>('Message').implement({
  description: 'One message of a conversation, as stored.',
  fields: (t) => ({
    id: t.exposeID('id'),
    role: t.field({ type: RoleEnum, resolve: (m) => m.role }),
    speaker: t.exposeString('speaker', {
      nullable: true,
      description:
        'Who said it (a participant, e.g. "Caroline"): the speaker it was written with, else its metadata.speaker, else its metadata.name, trimmed. Null when none was named; the role never stands in for it.',
    }),
    content: t.exposeString('content'),
    tokenCount: t.exposeInt('tokenCount'),
    isCompressed: t.exposeBoolean('isCompressed', {
      description: 'True once the message is covered by a [CONTEXT SUMMARY] message.',
    }),
    timestamp: t.expose('timestamp', { type: 'DateTime' }),
    metadata: t.expose('metadata', { type: 'JSON' }),
  }),
})

export const SessionRef = builder.objectRef<Session>('Session').implement({
  description: 'A persistent conversation history (spec 000, Persistent Sessions).',
  fields: (t) => ({
    id: t.exposeID('id'),
    agentId: t.exposeID('scope'),
    conversationId: t.exposeString('conversationId'),
    messageCount: t.exposeInt('messageCount'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    updatedAt: t.expose('updatedAt', { type: 'DateTime' }),
    messages: t.connection({
      type: MessageRef,
      args: {
        includeCompressed: t.arg.boolean({
          defaultValue: true,
          description: 'False hides messages already replaced by a summary.',
        }),
      },
      resolve: (session, args, ctx) => {
        assertPageSize(args, ctx.services.limits)
        return resolveCursorConnection(
          { args, toCursor: encodeCursor, defaultSize: 50, maxSize: ctx.services.limits.maxPageSize },
          (page: ResolveCursorConnectionArgs) =>
            timeIdPage(page, 'OLDEST_FIRST', (query) =>
              ctx.services.engine.conversations.messagePage(
                session.id,
                args.includeCompressed !== false,
                query,
              ),
            ),
        )
      },
    }),
  }),
})

const SPEAKER_INPUT_DESCRIPTION = `Who said it, e.g. a participant's name: 1 to ${MAX_SPEAKER_CHARS} characters after trimming. Omitted or null, it is taken from metadata.speaker, else metadata.name.`

const MessageInput = builder.inputType('MessageInput', {
  fields: (t) => ({
    role: t.field({ type: RoleEnum, required: true }),
    speaker: t.string({ description: SPEAKER_INPUT_DESCRIPTION }),
    content: t.string({ required: true }),
    tokenCount: t.int({ description: 'Pre-computed token count; counted by the server when omitted.' }),
    timestamp: t.field({
      type: 'DateTime',
      description: 'When it was said; defaults to now (for importing history).',
    }),
    metadata: t.field({ type: 'JSON' }),
  }),
})

const AddMessageInput = builder.inputType('AddMessageInput', {
  fields: (t) => ({
    agentId: t.id({ description: 'Only with an admin key: the agent to act for.' }),
    conversationId: t.string({ required: true }),
    role: t.field({ type: RoleEnum, required: true }),
    speaker: t.string({ description: SPEAKER_INPUT_DESCRIPTION }),
    content: t.string({ required: true }),
    tokenCount: t.int(),
    timestamp: t.field({ type: 'DateTime' }),
    metadata: t.field({ type: 'JSON' }),
  }),
})

const AddMessagesInput = builder.inputType('AddMessagesInput', {
  fields: (t) => ({
    agentId: t.id(),
    conversationId: t.string({ required: true }),
    messages: t.field({ type: [MessageInput], required: true }),
  }),
})

const AddMessagesPayload = builder
  .objectRef<{ session: Session; messages: StoredMessage[] }>('AddMessagesPayload')
  .implement({
    fields: (t) => ({
      session: t.field({ type: SessionRef, resolve: (p) => p.session }),
      messages: t.field({ type: [MessageRef], resolve: (p) => p.messages }),
    }),
  })

const CompressMessagesInput = builder.inputType('CompressMessagesInput', {
  fields: (t) => ({
    agentId: t.id(),
    conversationId: t.string({ required: true }),
    olderThanId: t.id({ required: true, description: 'Messages before this one are compressed.' }),
    summary: t.string({ description: 'The summary text; built from the messages when omitted.' }),
  }),
})

const CompressMessagesPayload = builder
  .objectRef<{ session: Session; compressedCount: number; summaryMessage: StoredMessage | null }>(
    'CompressMessagesPayload',
  )
  .implement({
    fields: (t) => ({
      session: t.field({ type: SessionRef, resolve: (p) => p.session }),
      compressedCount: t.exposeInt('compressedCount'),
      summaryMessage: t.field({ type: MessageRef, nullable: true, resolve: (p) => p.summaryMessage }),
    }),
  })

const DeleteSessionPayload = builder
  .objectRef<{ conversationId: string; deleted: boolean }>('DeleteSessionPayload')
  .implement({
    fields: (t) => ({
      conversationId: t.exposeString('conversationId'),
      deleted: t.exposeBoolean('deleted'),
    }),
  })

const BudgetInput = builder.inputType('TokenBudgetInput', {
  description: 'Overrides of the token budget; omitted fields use the learned parameters, then the defaults.',
  fields: (t) => ({
    maxContextTokens: t.int(),
    systemPromptTokens: t.int(),
    responseReserveTokens: t.int(),
    fullMessageWindow: t.int(),
    compressionTriggerRatio: t.float(),
  }),
})

type ContextWindowShape = ContextWindowPlan<StoredMessage> & { budget: Record<string, number> }

const CompressedMessage = builder
  .objectRef<ContextWindowShape['compressed'][number]>('CompressedMessage')
  .implement({
    fields: (t) => ({
      message: t.field({ type: MessageRef, resolve: (c) => c.message }),
      content: t.exposeString('content', {
        description: 'The fact-preserving compressed text to send: always shorter than the message.',
      }),
      estimatedTokens: t.exposeInt('estimatedTokens', {
        description: "Spec 000's 20% estimate of the compressed size, for comparison only.",
        deprecationReason: 'The window is costed on tokenCount, the compressed text counted.',
      }),
      tokenCount: t.exposeInt('tokenCount', {
        description: 'Tokens of the compressed text, counted with the configured tokenizer.',
      }),
    }),
  })

const EffectiveBudget = builder.objectRef<Record<string, number>>('EffectiveBudget').implement({
  fields: (t) => ({
    maxContextTokens: t.int({ resolve: (b) => b.maxContextTokens ?? 0 }),
    systemPromptTokens: t.int({ resolve: (b) => b.systemPromptTokens ?? 0 }),
    responseReserveTokens: t.int({ resolve: (b) => b.responseReserveTokens ?? 0 }),
    fullMessageWindow: t.int({ resolve: (b) => b.fullMessageWindow ?? 0 }),
    compressionTriggerRatio: t.float({ resolve: (b) => b.compressionTriggerRatio ?? 0 }),
  }),
})

const ContextWindow = builder.objectRef<ContextWindowShape>('ContextWindow').implement({
  description:
    'What to send to the LLM: the full / compressed / dropped partition of a conversation. Every token figure is the configured tokenizer (ENGRAM_TOKENIZER) counting the text returned, each message on its own; totalTokens never exceeds availableBudget.',
  fields: (t) => ({
    full: t.field({
      type: [MessageRef],
      description: 'Sent as they are, oldest first: the most recent window, then older ones that fit whole.',
      resolve: (w) => w.full,
    }),
    compressed: t.field({
      type: [CompressedMessage],
      description: 'Sent as their compressed content, oldest first.',
      resolve: (w) => w.compressed,
    }),
    dropped: t.field({
      type: [MessageRef],
      description: 'Not sent, oldest first.',
      resolve: (w) => w.dropped,
    }),
    fullTokens: t.exposeInt('fullTokens', { description: "Tokens of the full messages' content." }),
    compressedTokens: t.exposeInt('compressedTokens', { description: 'Tokens of the compressed contents.' }),
    droppedTokens: t.exposeInt('droppedTokens', {
      description: 'What the dropped messages would cost whole.',
    }),
    totalTokens: t.exposeInt('totalTokens', {
      description: 'fullTokens + compressedTokens: what the window costs, at most availableBudget.',
    }),
    originalTokens: t.exposeInt('originalTokens', { description: 'Every message at full size.' }),
    availableBudget: t.exposeInt('availableBudget', {
      description: 'maxContextTokens - systemPromptTokens - responseReserveTokens.',
    }),
    usageRatio: t.exposeFloat('usageRatio', { description: 'originalTokens / availableBudget.' }),
    underPressure: t.exposeBoolean('underPressure', {
      description:
        'originalTokens is over compressionTriggerRatio of the budget: older messages were compressed or dropped.',
    }),
    overBudget: t.exposeBoolean('overBudget', {
      description:
        'The most recent fullMessageWindow messages alone exceed availableBudget, so the full window was shrunk (see trimmedFullMessages).',
    }),
    trimmedFullMessages: t.exposeInt('trimmedFullMessages', {
      description:
        'How many of the most recent fullMessageWindow messages were taken out of the full set, oldest first, to fit the budget; each is then compressed if that fits, else dropped.',
    }),
    budget: t.field({ type: EffectiveBudget, resolve: (w) => w.budget }),
  }),
})

builder.queryFields((t) => ({
  sessions: t.connection(
    {
      type: SessionRef,
      errors: {},
      description:
        'Conversations, most recently active first. Admin keys list every agent unless one is named.',
      args: { agentId: t.arg.id() },
      resolve: async (_root, args, ctx) => {
        assertOffsetPage(args, ctx.services.limits)
        const scope = await listScope(ctx, args.agentId)
        const { conversations } = ctx.services.engine
        const totalCount = await conversations.sessionCount(scope)
        const connection = await resolveOffsetConnection(
          { args, defaultSize: 50, maxSize: ctx.services.limits.maxPageSize, totalCount },
          async ({ offset, limit }) => conversations.sessionPage(scope, { offset, limit }),
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
  session: t.field({
    type: SessionRef,
    nullable: true,
    errors: {},
    args: { agentId: t.arg.id(), conversationId: t.arg.string({ required: true }) },
    resolve: async (_root, args, ctx) => {
      const scope = await agentScope(ctx, args.agentId)
      return ctx.services.sessions.find(scope, args.conversationId)
    },
  }),
  contextWindow: t.field({
    type: ContextWindow,
    errors: {},
    args: {
      agentId: t.arg.id(),
      conversationId: t.arg.string({ required: true }),
      budget: t.arg({ type: BudgetInput }),
    },
    resolve: async (_root, args, ctx) => {
      const scope = await agentScope(ctx, args.agentId)
      return ctx.services.engine.conversations.contextWindow(scope, args.conversationId, args.budget ?? {})
    },
  }),
}))

builder.mutationFields((t) => ({
  addMessage: t.field({
    type: MessageRef,
    errors: {},
    description:
      'Appends a message to a conversation (created on first use) and stores it as a short-term memory entry.',
    args: { input: t.arg({ type: AddMessageInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const scope = await agentScope(ctx, input.agentId)
      const [guarded] = await guardMessages(ctx.services.privacy, scope, [input], () => 'message')
      return ctx.services.sessions.addMessage(scope, input.conversationId, {
        ...input,
        ...(guarded as GuardedMessage),
      })
    },
  }),
  addMessages: t.field({
    type: AddMessagesPayload,
    errors: {},
    description: 'Appends a batch in one transaction: all of it is stored, or none.',
    args: { input: t.arg({ type: AddMessagesInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const scope = await agentScope(ctx, input.agentId)
      const guarded = await guardMessages(ctx.services.privacy, scope, input.messages, (i) => `messages.${i}`)
      const messages = await ctx.services.sessions.addMessages(
        scope,
        input.conversationId,
        input.messages.map((m, i) => ({ ...m, ...(guarded[i] as GuardedMessage) })),
      )
      const session = await ctx.services.sessions.getOrCreate(scope, input.conversationId)
      return { session, messages }
    },
  }),
  compressMessages: t.field({
    type: CompressMessagesPayload,
    errors: {},
    args: { input: t.arg({ type: CompressMessagesInput, required: true }) },
    resolve: async (_root, { input }, ctx) => {
      const scope = await agentScope(ctx, input.agentId)
      const summary =
        input.summary == null
          ? input.summary
          : (await ctx.services.privacy.guard(scope, [{ field: 'summary', text: input.summary }])).texts[0]
      const result = await ctx.services.sessions.compressMessages(
        scope,
        input.conversationId,
        String(input.olderThanId),
        summary,
      )
      const session = await ctx.services.sessions.getOrCreate(scope, input.conversationId)
      return { session, ...result }
    },
  }),
  deleteSession: t.field({
    type: DeleteSessionPayload,
    errors: {},
    description: 'Deletes a conversation with all its messages and memory entries.',
    args: { agentId: t.arg.id(), conversationId: t.arg.string({ required: true }) },
    resolve: (_root, args, ctx) => operate(ctx, 'deleteSession', args),
  }),
}))

import { PRIVACY_MODES } from '@engram/core'
import {
  type AgentRecord,
  type ApiKeyRecord,
  assertAgentId,
  type DeletionReport,
  type StoredPrivacyPolicy,
  type StoreRemainder,
} from '@engram/engine'
import { requireAdmin } from '../auth.ts'
import { builder, upperCaseValues } from '../builder.ts'
import { operate } from '../operations.ts'

const PrivacyModeEnum = builder.enumType('PrivacyMode', {
  description: 'What happens to sensitive data (SSNs, payment cards, own patterns) written for an agent.',
  values: upperCaseValues(PRIVACY_MODES),
})

const PrivacyPatternRef = builder.objectRef<{ name: string; pattern: string }>('PrivacyPattern').implement({
  fields: (t) => ({ name: t.exposeString('name'), pattern: t.exposeString('pattern') }),
})

const PrivacyPolicyRef = builder.objectRef<StoredPrivacyPolicy>('PrivacyPolicy').implement({
  fields: (t) => ({
    mode: t.field({ type: PrivacyModeEnum, resolve: (p) => p.mode }),
    patterns: t.field({ type: [PrivacyPatternRef], resolve: (p) => p.patterns }),
  }),
})

const PrivacyPatternInput = builder.inputType('PrivacyPatternInput', {
  fields: (t) => ({
    name: t.string({ required: true, description: 'How findings are named, e.g. employee_id' }),
    pattern: t.string({
      required: true,
      description:
        'A regular expression in JavaScript syntax, at most 200 characters, run on a linear-time (RE2) engine: no backreferences or lookaround, at most 200 compiled instructions (1,000 for the whole policy)',
    }),
  }),
})

// An agent record of the services (deleteAgent) or the catalog's answer (agents: an ISO date).
const AgentRef = builder
  .objectRef<Omit<AgentRecord, 'createdAt'> & { createdAt: Date | string }>('Agent')
  .implement({
    description: 'An agent: the owner of every session, entry, vector, fact and snapshot.',
    fields: (t) => ({
      id: t.exposeID('id'),
      name: t.exposeString('name'),
      createdAt: t.expose('createdAt', { type: 'DateTime' }),
      privacyPolicy: t.field({
        type: PrivacyPolicyRef,
        resolve: (agent, _args, ctx) => ctx.services.privacy.policy(agent.id),
      }),
    }),
  })

const ApiKeyRef = builder.objectRef<ApiKeyRecord>('ApiKey').implement({
  description: 'A key as stored: its hash and prefix, never the key itself.',
  fields: (t) => ({
    id: t.exposeID('id'),
    agentId: t.exposeID('agentId', { nullable: true }),
    role: t.exposeString('role'),
    label: t.exposeString('label'),
    keyPrefix: t.exposeString('keyPrefix'),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    revokedAt: t.expose('revokedAt', { type: 'DateTime', nullable: true }),
  }),
})

const CreatedApiKey = builder.objectRef<{ key: string; apiKey: ApiKeyRecord }>('CreatedApiKey').implement({
  fields: (t) => ({
    key: t.exposeString('key', {
      description: 'The secret, shown this once. Send it as Authorization: Bearer <key>.',
    }),
    apiKey: t.field({ type: ApiKeyRef, resolve: (c) => c.apiKey }),
  }),
})

const ViewerRef = builder.objectRef<{ role: string; agentId: string | null }>('Viewer').implement({
  description: 'Who the key in this request belongs to.',
  fields: (t) => ({
    role: t.exposeString('role'),
    agentId: t.exposeID('agentId', { nullable: true }),
  }),
})

const StoreKindEnum = builder.enumType('StoreKind', {
  description: 'Where something of an agent is kept.',
  values: {
    TABLE: { description: 'Rows of a database table' },
    FULL_TEXT: { description: 'Documents in a full-text index, read from the index itself' },
    FILE: { description: 'Files beside the database (saved vector graphs)' },
    CACHE: { description: 'Held in the server process memory' },
    QUEUE: { description: 'Background work waiting to run' },
  } as const,
})

const StoreRemainderRef = builder.objectRef<StoreRemainder>('StoreRemainder').implement({
  fields: (t) => ({
    store: t.exposeString('store', { description: 'The table, index, folder or cache' }),
    kind: t.field({ type: StoreKindEnum, resolve: (s) => s.kind }),
    count: t.exposeInt('count', { description: 'Rows, documents, files or entries of the agent there' }),
  }),
})

const DeletionReportRef = builder.objectRef<DeletionReport>('DeletionReport').implement({
  description: 'What remains of an agent, store by store: every count is 0 after deleteAgent.',
  fields: (t) => ({
    agentId: t.exposeID('agentId'),
    remaining: t.exposeInt('remaining', { description: 'The sum of every count' }),
    stores: t.field({ type: [StoreRemainderRef], resolve: (r) => r.stores }),
  }),
})

builder.queryFields((t) => ({
  deletionReport: t.field({
    type: DeletionReportRef,
    errors: {},
    description:
      'Admin only: what remains of an agent in every store (tables, full-text indexes, vector files, caches, queues), to verify a deletion. Works for agents that no longer exist.',
    args: { agentId: t.arg.id({ required: true }) },
    resolve: (_root, args, ctx) => {
      requireAdmin(ctx.viewer)
      const agentId = String(args.agentId)
      assertAgentId(agentId)
      return ctx.services.lifecycle.report(agentId)
    },
  }),
  viewer: t.field({
    type: ViewerRef,
    resolve: (_root, _args, ctx) =>
      ctx.viewer.kind === 'admin'
        ? { role: 'ADMIN', agentId: null }
        : { role: 'AGENT', agentId: ctx.viewer.agentId },
  }),
  agents: t.field({
    type: [AgentRef],
    description: 'Admin: every agent. Agent key: its own agent.',
    resolve: (_root, _args, ctx) => operate(ctx, 'agents'),
  }),
  apiKeys: t.field({
    type: [ApiKeyRef],
    errors: { directResult: false },
    description: 'Admin only.',
    args: { agentId: t.arg.id() },
    resolve: (_root, args, ctx) => {
      requireAdmin(ctx.viewer)
      return ctx.services.agents.listApiKeys(args.agentId ? String(args.agentId) : null)
    },
  }),
}))

const LiveTokenRef = builder.objectRef<{ token: string; expiresAt: Date }>('LiveToken').implement({
  description: 'A short-lived token that can only subscribe to optimizer snapshots (for browsers).',
  fields: (t) => ({
    token: t.exposeString('token'),
    expiresAt: t.expose('expiresAt', { type: 'DateTime' }),
  }),
})

builder.mutationFields((t) => ({
  setPrivacyPolicy: t.field({
    type: PrivacyPolicyRef,
    errors: {},
    description:
      'Admin only: reject, redact or allow sensitive data written for the agent, with its own patterns.',
    args: {
      agentId: t.arg.id({ required: true }),
      mode: t.arg({ type: PrivacyModeEnum, required: true }),
      patterns: t.arg({ type: [PrivacyPatternInput], defaultValue: [] }),
    },
    resolve: async (_root, args, ctx) => {
      requireAdmin(ctx.viewer)
      const agent = await ctx.services.agents.requireAgent(String(args.agentId))
      return ctx.services.privacy.setPolicy(agent.id, args.mode, args.patterns ?? [])
    },
  }),
  createLiveToken: t.field({
    type: LiveTokenRef,
    errors: {},
    description: 'Admin only: a token for graphql-ws subscriptions, valid for 10 minutes.',
    args: { agentId: t.arg.id({ description: 'Limit it to one agent; all agents when omitted.' }) },
    resolve: async (_root, args, ctx) => {
      requireAdmin(ctx.viewer)
      if (args.agentId) await ctx.services.agents.requireAgent(String(args.agentId))
      return ctx.services.liveTokens.issue(args.agentId ? String(args.agentId) : null)
    },
  }),
  createAgent: t.field({
    type: AgentRef,
    errors: {},
    description: 'Admin only: creates (or renames) an agent.',
    args: { id: t.arg.id({ required: true }), name: t.arg.string() },
    resolve: (_root, args, ctx) => {
      requireAdmin(ctx.viewer)
      return ctx.services.agents.createAgent(String(args.id), args.name)
    },
  }),
  deleteAgent: t.field({
    type: AgentRef,
    errors: {},
    description:
      'Admin only: deletes an agent with all of its data and keys, and what was derived from them (caches, vector files, full-text segments, WAL); its open subscriptions end. deletionReport shows what remains.',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => {
      requireAdmin(ctx.viewer)
      return ctx.services.lifecycle.deleteAgent(String(args.id))
    },
  }),
  createApiKey: t.field({
    type: CreatedApiKey,
    errors: {},
    description: 'Admin only: a new key for an agent (created if new). The secret is returned once.',
    args: { agentId: t.arg.id({ required: true }), label: t.arg.string() },
    resolve: (_root, args, ctx) => {
      requireAdmin(ctx.viewer)
      return ctx.services.agents.createApiKey(String(args.agentId), args.label)
    },
  }),
  revokeApiKey: t.field({
    type: ApiKeyRef,
    errors: {},
    description: 'Admin only: the key stops working at once.',
    args: { id: t.arg.id({ required: true }) },
    resolve: async (_root, args, ctx) => {
      requireAdmin(ctx.viewer)
      const key = await ctx.services.agents.revokeApiKey(String(args.id))
      // Subscriptions opened with it end now rather than at their next event.
      ctx.services.lifecycle.accessChanged()
      return key
    },
  }),
}))

// Shared memory pools (issue 17, spec 002's SharedMemoryPool): pools and their members (admin
// keys change them), the pool's memories, its hybrid search, contributions and the sync into an
// agent's own memory. Every field answers through the operations layer, as the SDK's embedded
// client and MCP do; membership is checked there on every request.
import type { OutputOf } from '@engram/contract'
import { ConflictError, type MemoryCategory, POOL_ROLES } from '@engram/core'
import type { MemoryItemView, QueryOrMutationName } from '@engram/engine'
import { builder } from '../builder.ts'
import type { Context } from '../context.ts'
import { operate } from '../operations.ts'
import { MemoryCategoryEnum, MemoryItemRef } from './memory-item.ts'

type Pool = OutputOf<'pool'>
type WireMemory = OutputOf<'memory'>

/** The operations answer memories as the catalog's wire shape; the MemoryItem type reads the engine's view. */
function memoryView(m: WireMemory): MemoryItemView {
  const { isCurrent: _current, ...fields } = m
  const date = (value: string | null) => (value === null ? null : new Date(value))
  return {
    ...fields,
    category: m.category.toLowerCase() as MemoryCategory,
    lastAccessedAt: date(m.lastAccessedAt),
    validFrom: new Date(m.validFrom),
    validUntil: date(m.validUntil),
    createdAt: new Date(m.createdAt),
    updatedAt: new Date(m.updatedAt),
  }
}

const PoolRoleEnum = builder.enumType('PoolRole', {
  description:
    'READER reads the pool (its memories, its search, a sync into its own memory); CONTRIBUTOR also contributes.',
  values: POOL_ROLES,
})

const PoolMemberRef = builder.objectRef<Pool['members'][number]>('PoolMember').implement({
  fields: (t) => ({
    agentId: t.exposeID('agentId'),
    role: t.field({ type: PoolRoleEnum, resolve: (m) => m.role }),
    addedAt: t.expose('addedAt', { type: 'DateTime' }),
  }),
})

const MemoryPoolRef = builder.objectRef<Pool>('MemoryPool').implement({
  description:
    'A shared memory pool: memories several agents read (READER) and contribute to (CONTRIBUTOR), searched like an agent’s own memories.',
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name', { description: 'Unique across the server.' }),
    description: t.exposeString('description', { nullable: true }),
    createdAt: t.expose('createdAt', { type: 'DateTime' }),
    members: t.field({ type: [PoolMemberRef], resolve: (p) => p.members }),
    memberCount: t.exposeInt('memberCount'),
    memoryCount: t.exposeInt('memoryCount', { description: 'Memories currently valid in the pool.' }),
    role: t.field({
      type: PoolRoleEnum,
      nullable: true,
      description: 'The caller’s role (an agent key); null for an admin key.',
      resolve: (p) => p.role,
    }),
  }),
})

const DeletePoolPayloadRef = builder.objectRef<OutputOf<'deletePool'>>('DeletePoolPayload').implement({
  fields: (t) => ({
    id: t.exposeID('id'),
    name: t.exposeString('name'),
    deleted: t.exposeBoolean('deleted'),
  }),
})

const PoolMemoryRef = builder.objectRef<OutputOf<'removePoolMemory'>>('PoolMemory').implement({
  fields: (t) => ({
    memory: t.field({ type: MemoryItemRef, resolve: (m) => memoryView(m.memory) }),
    contributorAgentId: t.exposeID('contributorAgentId', {
      nullable: true,
      description: 'The agent that contributed it.',
    }),
  }),
})

const PoolMemoryPageRef = builder.objectRef<OutputOf<'poolMemories'>>('PoolMemoryPage').implement({
  fields: (t) => ({
    totalCount: t.exposeInt('totalCount'),
    pageInfo: t.field({ type: builder.pageInfoRef(), resolve: (p) => p.pageInfo }),
    memories: t.field({ type: [PoolMemoryRef], resolve: (p) => p.memories }),
  }),
})

const PoolHitRef = builder.objectRef<OutputOf<'queryPool'>['hits'][number]>('PoolHit').implement({
  fields: (t) => ({
    memory: t.field({ type: MemoryItemRef, resolve: (h) => memoryView(h.memory) }),
    score: t.exposeFloat('score'),
    contributorAgentId: t.exposeID('contributorAgentId', { nullable: true }),
  }),
})

const PoolQueryResultRef = builder.objectRef<OutputOf<'queryPool'>>('PoolQueryResult').implement({
  fields: (t) => ({
    poolId: t.exposeID('poolId'),
    hits: t.field({ type: [PoolHitRef], resolve: (r) => r.hits }),
  }),
})

const WriteOutcomeRef = builder.enumType('PoolContributionOutcome', {
  description:
    'STORED: a new memory of the pool. DUPLICATE: the pool has it already (duplicateOf). SUPERSEDED: stored, replacing an older one.',
  values: ['STORED', 'DUPLICATE', 'SUPERSEDED'] as const,
})

const PoolContributionRef = builder.objectRef<OutputOf<'contributeToPool'>>('PoolContribution').implement({
  fields: (t) => ({
    poolId: t.exposeID('poolId'),
    contributorAgentId: t.exposeID('contributorAgentId'),
    outcome: t.field({ type: WriteOutcomeRef, resolve: (c) => c.outcome }),
    memory: t.field({
      type: MemoryItemRef,
      description: 'The stored memory, or the pool’s memory it duplicates.',
      resolve: (c) => memoryView(c.memory),
    }),
    duplicateOf: t.field({
      type: MemoryItemRef,
      nullable: true,
      resolve: (c) => (c.duplicateOf ? memoryView(c.duplicateOf) : null),
    }),
    superseded: t.field({
      type: MemoryItemRef,
      nullable: true,
      resolve: (c) => (c.superseded ? memoryView(c.superseded) : null),
    }),
    similarity: t.exposeFloat('similarity', { nullable: true }),
  }),
})

const PoolSyncRef = builder.objectRef<OutputOf<'syncPoolToAgent'>>('PoolSync').implement({
  description: 'What a sync copied into the agent’s own memory (a repeated sync stores nothing new).',
  fields: (t) => ({
    poolId: t.exposeID('poolId'),
    agentId: t.exposeID('agentId'),
    stored: t.exposeInt('stored'),
    duplicates: t.exposeInt('duplicates'),
    superseded: t.exposeInt('superseded'),
    memories: t.field({ type: [MemoryItemRef], resolve: (s) => s.memories.map(memoryView) }),
  }),
})

const PoolMemberInput = builder.inputType('PoolMemberInput', {
  fields: (t) => ({
    agentId: t.id({ required: true }),
    role: t.field({ type: PoolRoleEnum, required: true }),
  }),
})

const CreatePoolInput = builder.inputType('CreatePoolInput', {
  fields: (t) => ({
    name: t.string({ required: true }),
    description: t.string(),
    members: t.field({ type: [PoolMemberInput] }),
  }),
})

const UpdatePoolInput = builder.inputType('UpdatePoolInput', {
  fields: (t) => ({
    id: t.id({ required: true }),
    name: t.string(),
    description: t.string({ description: 'Null or blank clears it.' }),
  }),
})

const ContributeToPoolInput = builder.inputType('ContributeToPoolInput', {
  fields: (t) => ({
    agentId: t.id({ description: 'An admin key names the contributing agent (a CONTRIBUTOR member).' }),
    poolId: t.id({ required: true }),
    content: t.string({ required: true }),
    category: t.field({ type: MemoryCategoryEnum, required: true }),
    importance: t.float(),
    tags: t.stringList(),
    source: t.string({
      description: 'Where the knowledge comes from ("MDN documentation"), kept in its metadata.',
    }),
  }),
})

// The catalog spells ids as strings and categories in upper case; GraphQL's ID and the enum's
// internal values are turned back into them here.
function wireArgs(args: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(args)) {
    if (key === 'category' && typeof value === 'string') out[key] = value.toUpperCase()
    else if (Array.isArray(value))
      out[key] = value.map((v) =>
        v !== null && typeof v === 'object' ? wireArgs(v as Record<string, unknown>) : v,
      )
    else if (typeof value === 'number' || typeof value === 'boolean' || value === null) out[key] = value
    else out[key] = value === undefined ? undefined : String(value)
  }
  return out
}

const poolOperation =
  <N extends QueryOrMutationName>(name: N, nullMeans: readonly string[] = []) =>
  (_root: unknown, args: Record<string, unknown>, ctx: Context) =>
    operate(ctx, name, wireArgs(args), nullMeans)
const poolInputOperation =
  <N extends QueryOrMutationName>(name: N, nullMeans: readonly string[] = []) =>
  (_root: unknown, args: { input: Record<string, unknown> }, ctx: Context) =>
    operate(ctx, name, wireArgs(args.input), nullMeans)

const conflicts = { types: [ConflictError] }

builder.queryFields((t) => ({
  pools: t.field({
    type: [MemoryPoolRef],
    errors: {},
    description:
      'The shared memory pools this agent belongs to, with its role in each (an admin key: every pool, or one agent’s with agentId).',
    args: { agentId: t.arg.id() },
    resolve: poolOperation('pools'),
  }),
  pool: t.field({
    type: MemoryPoolRef,
    errors: {},
    description: 'One pool the agent belongs to, with its members and counts (a non-member: NOT_FOUND).',
    args: { id: t.arg.id({ required: true }) },
    resolve: poolOperation('pool'),
  }),
  poolMemories: t.field({
    type: PoolMemoryPageRef,
    errors: {},
    description:
      'A pool’s current memories, newest first, a page at a time, each with the agent that contributed it.',
    args: {
      poolId: t.arg.id({ required: true }),
      first: t.arg.int(),
      after: t.arg.string(),
      last: t.arg.int(),
      before: t.arg.string(),
    },
    resolve: poolOperation('poolMemories'),
  }),
  queryPool: t.field({
    type: PoolQueryResultRef,
    errors: {},
    description:
      'Searches a pool’s memories with the same hybrid search (words and meaning) as an agent’s own memories, best first.',
    args: {
      poolId: t.arg.id({ required: true }),
      query: t.arg.string({ required: true }),
      limit: t.arg.int(),
    },
    resolve: poolOperation('queryPool'),
  }),
}))

builder.mutationFields((t) => ({
  createPool: t.field({
    type: MemoryPoolRef,
    errors: conflicts,
    description:
      'Creates a shared memory pool with its first members (admin key). A name another pool has: CONFLICT (field name).',
    args: { input: t.arg({ type: CreatePoolInput, required: true }) },
    resolve: poolInputOperation('createPool'),
  }),
  updatePool: t.field({
    type: MemoryPoolRef,
    errors: conflicts,
    description: 'Renames a pool or changes its description (admin key).',
    args: { input: t.arg({ type: UpdatePoolInput, required: true }) },
    resolve: poolInputOperation('updatePool', ['description']),
  }),
  deletePool: t.field({
    type: DeletePoolPayloadRef,
    errors: {},
    description: 'Deletes a pool with every memory in it, from every store (admin key).',
    args: { id: t.arg.id({ required: true }) },
    resolve: poolOperation('deletePool'),
  }),
  addPoolMember: t.field({
    type: MemoryPoolRef,
    errors: {},
    description: 'Adds an agent to a pool, or changes its role (admin key).',
    args: {
      poolId: t.arg.id({ required: true }),
      agentId: t.arg.id({ required: true }),
      role: t.arg({ type: PoolRoleEnum, required: true }),
    },
    resolve: poolOperation('addPoolMember'),
  }),
  removePoolMember: t.field({
    type: MemoryPoolRef,
    errors: {},
    description:
      'Removes an agent from a pool (admin key), from its next request on; removeContributions also removes the memories it contributed.',
    args: {
      poolId: t.arg.id({ required: true }),
      agentId: t.arg.id({ required: true }),
      removeContributions: t.arg.boolean(),
    },
    resolve: poolOperation('removePoolMember'),
  }),
  contributeToPool: t.field({
    type: PoolContributionRef,
    errors: {},
    description:
      'Adds a memory to a pool (CONTRIBUTOR members; an admin key names the agent), through the pool’s verification: STORED, DUPLICATE or SUPERSEDED.',
    args: { input: t.arg({ type: ContributeToPoolInput, required: true }) },
    resolve: poolInputOperation('contributeToPool'),
  }),
  removePoolMemory: t.field({
    type: PoolMemoryRef,
    errors: {},
    description: 'Removes a memory from a pool: the agent that contributed it, or an admin key.',
    args: { poolId: t.arg.id({ required: true }), memoryId: t.arg.id({ required: true }) },
    resolve: poolOperation('removePoolMemory'),
  }),
  syncPoolToAgent: t.field({
    type: PoolSyncRef,
    errors: {},
    description:
      'Copies a pool’s memories into a member’s own memory through its verification (a second sync stores nothing new); each copy’s metadata names its provenance pool:<id>.',
    args: { poolId: t.arg.id({ required: true }), agentId: t.arg.id() },
    resolve: poolOperation('syncPoolToAgent'),
  }),
}))

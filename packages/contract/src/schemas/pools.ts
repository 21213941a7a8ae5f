import { z } from 'zod'
import { CONTRACT_LIMITS as L } from '../limits.ts'
import { MemoryCategorySchema, MemoryWriteOutcomeSchema } from './enums.ts'
import {
  AgentIdSchema,
  agent,
  cursor,
  IdSchema,
  limitIssue,
  memoryContent,
  pageSize,
  tags,
  unit,
} from './fields.ts'
import { MemoryItemSchema, PageInfoSchema } from './outputs.ts'

// Shared memory pools (issue 17, spec 002's SharedMemoryPool): pools, members with roles, the
// pool's memories (memory items of an internal storage agent), its hybrid search, contributions
// and the sync into an agent's own memory. One file for the family.

export const PoolRoleSchema = z.enum(['READER', 'CONTRIBUTOR'])

const date = z.string()
const poolId = IdSchema
const poolName = z
  .string()
  .max(L.maxPoolNameChars)
  .refine((s) => s.trim().length > 0, { message: 'must not be blank', ...limitIssue(1) })
const poolDescription = z.string().max(L.maxPoolDescriptionChars)

export const PoolMemberInputSchema = z.object({ agentId: AgentIdSchema, role: PoolRoleSchema })

export const CreatePoolInputSchema = z.object({
  name: poolName,
  description: poolDescription.optional(),
  members: z.array(PoolMemberInputSchema).max(L.maxPoolMembersPerCall).optional(),
})
export const UpdatePoolInputSchema = z.object({
  id: poolId,
  name: poolName.optional(),
  /** Null or blank clears it. */
  description: poolDescription.nullable().optional(),
})
export const DeletePoolInputSchema = z.object({ id: poolId })
export const AddPoolMemberInputSchema = z.object({ poolId, agentId: AgentIdSchema, role: PoolRoleSchema })
export const RemovePoolMemberInputSchema = z.object({
  poolId,
  agentId: AgentIdSchema,
  /** Also remove the memories this agent contributed to the pool (default false: they stay). */
  removeContributions: z.boolean().optional(),
})
/** An agent key: its memberships. An admin key: every pool, or one agent's (agentId). */
export const PoolsInputSchema = z.object({ ...agent })
export const PoolInputSchema = z.object({ id: poolId })
export const PoolMemoriesInputSchema = z.object({
  poolId,
  first: pageSize.optional(),
  after: cursor.optional(),
  last: pageSize.optional(),
  before: cursor.optional(),
})
export const QueryPoolInputSchema = z.object({
  poolId,
  query: z.string().max(L.maxQueryChars),
  limit: z.number().int().min(1).max(L.maxPoolQueryLimit).optional(),
})
export const ContributeToPoolInputSchema = z.object({
  ...agent,
  poolId,
  content: memoryContent,
  category: MemoryCategorySchema,
  importance: unit.optional(),
  tags: tags.optional(),
  /** Where the knowledge comes from ("MDN documentation"), kept in the memory's metadata. */
  source: z.string().min(1).max(L.maxSourceIdChars).optional(),
})
export const RemovePoolMemoryInputSchema = z.object({ poolId, memoryId: IdSchema })
export const SyncPoolToAgentInputSchema = z.object({ ...agent, poolId })

export const PoolMemberSchema = z.object({ agentId: z.string(), role: PoolRoleSchema, addedAt: date })
export const MemoryPoolSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  createdAt: date,
  members: z.array(PoolMemberSchema),
  memberCount: z.number().int(),
  /** Memories currently valid in the pool. */
  memoryCount: z.number().int(),
  /** The caller's role (an agent key); null for an admin key. */
  role: PoolRoleSchema.nullable(),
})
export const DeletePoolPayloadSchema = z.object({ id: z.string(), name: z.string(), deleted: z.boolean() })
export const PoolMemorySchema = z.object({
  memory: MemoryItemSchema,
  /** The agent that contributed it (null when no contribution is recorded). */
  contributorAgentId: z.string().nullable(),
})
export const PoolMemoryPageSchema = z.object({
  totalCount: z.number().int(),
  pageInfo: PageInfoSchema,
  memories: z.array(PoolMemorySchema),
})
export const PoolHitSchema = z.object({
  memory: MemoryItemSchema,
  score: z.number(),
  contributorAgentId: z.string().nullable(),
})
export const PoolQueryResultSchema = z.object({ poolId: z.string(), hits: z.array(PoolHitSchema) })
export const PoolContributionSchema = z.object({
  poolId: z.string(),
  contributorAgentId: z.string(),
  outcome: MemoryWriteOutcomeSchema,
  memory: MemoryItemSchema,
  duplicateOf: MemoryItemSchema.nullable(),
  superseded: MemoryItemSchema.nullable(),
  similarity: z.number().nullable(),
})
export const PoolSyncSchema = z.object({
  poolId: z.string(),
  agentId: z.string(),
  stored: z.number().int(),
  duplicates: z.number().int(),
  superseded: z.number().int(),
  /** The memories this sync stored in the agent's memory (none when repeated). */
  memories: z.array(MemoryItemSchema),
})

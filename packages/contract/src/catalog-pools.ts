import { operation } from './operation.ts'
import * as s from './schemas.ts'

/**
 * Shared memory pools (issue 17, spec 002's SharedMemoryPool). Only admin keys create pools and
 * change membership; members read (READER) or read and write (CONTRIBUTOR); a non-member is told a
 * pool does not exist. Part of the catalog (spread into it in catalog.ts).
 */
export const poolOperations = {
  createPool: operation({
    kind: 'mutation',
    admin: true,
    description:
      'Creates a shared memory pool (admin key): a unique name, an optional description, and its first members, each a READER (reads the pool) or a CONTRIBUTOR (reads and contributes).',
    input: s.CreatePoolInputSchema,
    output: s.MemoryPoolSchema,
    graphql: { field: 'createPool', inputArg: 'input' },
  }),
  updatePool: operation({
    kind: 'mutation',
    admin: true,
    description:
      'Renames a pool or changes its description (admin key); a null or blank description clears it.',
    input: s.UpdatePoolInputSchema,
    output: s.MemoryPoolSchema,
    graphql: { field: 'updatePool', inputArg: 'input' },
  }),
  deletePool: operation({
    kind: 'mutation',
    admin: true,
    destructive: true,
    description:
      'Deletes a pool with every memory in it, from every store (admin key). Copies members synced into their own memory stay theirs.',
    input: s.DeletePoolInputSchema,
    output: s.DeletePoolPayloadSchema,
    graphql: { field: 'deletePool' },
  }),
  addPoolMember: operation({
    kind: 'mutation',
    admin: true,
    description:
      'Adds an agent to a pool with a role, or changes its role if it is a member already (admin key).',
    input: s.AddPoolMemberInputSchema,
    output: s.MemoryPoolSchema,
    graphql: { field: 'addPoolMember' },
  }),
  removePoolMember: operation({
    kind: 'mutation',
    admin: true,
    description:
      'Removes an agent from a pool (admin key), effective from its next request. With removeContributions the memories it contributed leave the pool too; otherwise they stay.',
    input: s.RemovePoolMemberInputSchema,
    output: s.MemoryPoolSchema,
    graphql: { field: 'removePoolMember' },
  }),
  pools: operation({
    kind: 'query',
    description:
      'The shared memory pools this agent belongs to, with its role in each (an admin key: every pool, or one agent’s with agentId).',
    input: s.PoolsInputSchema,
    output: s.MemoryPoolSchema.array(),
    graphql: { field: 'pools' },
  }),
  pool: operation({
    kind: 'query',
    description: 'One pool the agent belongs to: its members and how many memories it holds.',
    input: s.PoolInputSchema,
    output: s.MemoryPoolSchema,
    graphql: { field: 'pool' },
  }),
  poolMemories: operation({
    kind: 'query',
    description:
      'A pool’s current memories, newest first, a page at a time, each with the agent that contributed it.',
    input: s.PoolMemoriesInputSchema,
    output: s.PoolMemoryPageSchema,
    graphql: { field: 'poolMemories' },
  }),
  queryPool: operation({
    kind: 'query',
    description:
      'Searches a pool’s shared memories with the same hybrid search (words and meaning) as the agent’s own memories, best first.',
    input: s.QueryPoolInputSchema,
    output: s.PoolQueryResultSchema,
    graphql: { field: 'queryPool' },
  }),
  contributeToPool: operation({
    kind: 'mutation',
    description:
      'Adds a memory to a shared pool for its other members (CONTRIBUTOR members only; an admin key names the contributing agent). It passes the pool’s verification: STORED, DUPLICATE of a memory the pool has, or SUPERSEDED an older one.',
    input: s.ContributeToPoolInputSchema,
    output: s.PoolContributionSchema,
    graphql: { field: 'contributeToPool', inputArg: 'input' },
  }),
  removePoolMemory: operation({
    kind: 'mutation',
    destructive: true,
    description: 'Removes a memory from a pool: the agent that contributed it, or an admin key.',
    input: s.RemovePoolMemoryInputSchema,
    output: s.PoolMemorySchema,
    graphql: { field: 'removePoolMemory' },
  }),
  syncPoolToAgent: operation({
    kind: 'mutation',
    description:
      'Copies a pool’s memories into this agent’s own long-term memory (it must be a member), through its verification: a second sync stores nothing new. Each copy records its provenance (pool:<id>) in its metadata.',
    input: s.SyncPoolToAgentInputSchema,
    output: s.PoolSyncSchema,
    graphql: { field: 'syncPoolToAgent' },
  }),
}

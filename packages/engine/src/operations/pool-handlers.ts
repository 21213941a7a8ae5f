import type { OutputOf } from '@engram/contract'
import type { MemoryCategory } from '@engram/core'
import type { Engine } from '../engine.ts'
import { offsetConnection } from '../paging/offset-connection.ts'
import type { PoolView } from '../pools/pool-service.ts'
import type { OperationHandlers } from './handlers.ts'
import { memoryOut } from './wire.ts'

// Shared memory pools' handlers (issue 17). The admin-only operations are refused to agent keys
// by the catalog (admin: true) before they get here; membership is checked by the pool service on
// every call, so a removed member is refused from its next request on.

export type PoolHandlerName =
  | 'createPool'
  | 'updatePool'
  | 'deletePool'
  | 'addPoolMember'
  | 'removePoolMember'
  | 'pools'
  | 'pool'
  | 'poolMemories'
  | 'queryPool'
  | 'contributeToPool'
  | 'removePoolMemory'
  | 'syncPoolToAgent'

function poolOut(p: PoolView): OutputOf<'pool'> {
  return {
    id: p.id,
    name: p.name,
    description: p.description,
    createdAt: p.createdAt.toISOString(),
    members: p.members.map((m) => ({ agentId: m.agentId, role: m.role, addedAt: m.addedAt.toISOString() })),
    memberCount: p.members.length,
    memoryCount: p.memoryCount,
    role: p.role,
  }
}

export function poolHandlers(engine: Engine): Pick<OperationHandlers, PoolHandlerName> {
  const { pools } = engine
  const now = () => engine.clock.now()
  return {
    async createPool(_call, input) {
      return poolOut(await pools.create(input))
    },
    async updatePool(_call, input) {
      const { id, ...changes } = input
      return poolOut(await pools.update(id, changes))
    },
    async deletePool(_call, input) {
      const deleted = await pools.delete(input.id)
      return { id: deleted.id, name: deleted.name, deleted: true }
    },
    async addPoolMember(_call, input) {
      return poolOut(await pools.addMember(input.poolId, input.agentId, input.role))
    },
    async removePoolMember(_call, input) {
      return poolOut(
        await pools.removeMember(input.poolId, input.agentId, input.removeContributions ?? false),
      )
    },
    async pools(call, input) {
      const scope = await call.listScope(input.agentId)
      return (await pools.list(call.principal, scope)).map(poolOut)
    },
    async pool(call, input) {
      return poolOut(await pools.get(call.principal, input.id))
    },
    async poolMemories(call, input) {
      const { poolId, ...paging } = input
      const { totalCount, page } = await pools.memories(call.principal, poolId)
      const connection = await offsetConnection(paging, engine.limits, totalCount, ({ offset, limit }) =>
        page(offset, limit),
      )
      const at = now()
      return {
        totalCount,
        pageInfo: connection.pageInfo,
        memories: connection.nodes.map((m) => ({
          memory: memoryOut(m.memory, at),
          contributorAgentId: m.contributorAgentId,
        })),
      }
    },
    async queryPool(call, input) {
      const hits = await pools.query(call.principal, input.poolId, input.query, input.limit)
      const at = now()
      return {
        poolId: input.poolId,
        hits: hits.map((h) => ({
          memory: memoryOut(h.memory, at),
          score: h.score,
          contributorAgentId: h.contributorAgentId,
        })),
      }
    },
    async contributeToPool(call, input) {
      const { agentId, poolId, category, ...memory } = input
      const contributor = await call.agentScope(agentId)
      const written = await pools.contribute(call.principal, poolId, contributor, {
        ...memory,
        category: category.toLowerCase() as MemoryCategory,
      })
      const at = now()
      return {
        poolId,
        contributorAgentId: contributor,
        outcome: written.outcome,
        memory: memoryOut(written.item, at),
        duplicateOf: written.duplicateOf ? memoryOut(written.duplicateOf, at) : null,
        superseded: written.superseded ? memoryOut(written.superseded, at) : null,
        similarity: written.similarity ?? null,
      }
    },
    async removePoolMemory(call, input) {
      const removed = await pools.removeMemory(call.principal, input.poolId, input.memoryId)
      return { memory: memoryOut(removed.memory, now()), contributorAgentId: removed.contributorAgentId }
    },
    async syncPoolToAgent(call, input) {
      const agentId = await call.agentScope(input.agentId)
      const synced = await pools.syncToAgent(call.principal, input.poolId, agentId)
      const at = now()
      return { ...synced, memories: synced.memories.map((m) => memoryOut(m, at)) }
    },
  }
}

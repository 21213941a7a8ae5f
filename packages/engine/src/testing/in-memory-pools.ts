import type { PoolContributionRecord, PoolMemberRecord, PoolRecord, PoolRepository } from '../ports/pools.ts'

const byName = (a: PoolRecord, b: PoolRecord) => a.name.localeCompare(b.name)
const byAdded = (a: PoolMemberRecord, b: PoolMemberRecord) => a.addedAt.getTime() - b.addedAt.getTime()
const memberKey = (poolId: string, agentId: string) => `${poolId}\u0000${agentId}`

/** Pools in memory (tests), with the SQL schema's cascades: an agent's or a pool's rows go with it. */
export class InMemoryPools {
  private readonly pools = new Map<string, PoolRecord>()
  private readonly members = new Map<string, PoolMemberRecord>()
  private readonly contributions = new Map<string, PoolContributionRecord>()
  readonly repository: PoolRepository = this.build()

  /** An agent's deletion: its memberships and contribution records go (the schema's cascades). */
  forgetAgent(agentId: string): void {
    for (const [key, m] of this.members) if (m.agentId === agentId) this.members.delete(key)
    for (const [key, c] of this.contributions) if (c.sourceAgentId === agentId) this.contributions.delete(key)
  }

  /** What an agent owns here, for the deletion report. */
  owned(agentId: string): { memberships: number; contributions: number } {
    return {
      memberships: [...this.members.values()].filter((m) => m.agentId === agentId).length,
      contributions: [...this.contributions.values()].filter((c) => c.sourceAgentId === agentId).length,
    }
  }

  private build(): PoolRepository {
    const { pools, members, contributions } = this
    const nameTaken = (name: string, except?: string) =>
      [...pools.values()].some((p) => p.name === name && p.id !== except)
    return {
      create: async (pool, initial) => {
        if (nameTaken(pool.name)) return null
        pools.set(pool.id, { ...pool })
        for (const m of initial) members.set(memberKey(m.poolId, m.agentId), { ...m })
        return { ...pool }
      },
      find: async (id) => {
        const pool = pools.get(id)
        return pool ? { ...pool } : null
      },
      findByName: async (name) => {
        const pool = [...pools.values()].find((p) => p.name === name)
        return pool ? { ...pool } : null
      },
      list: async () => [...pools.values()].sort(byName).map((p) => ({ ...p })),
      listByIds: async (ids) =>
        ids
          .map((id) => pools.get(id))
          .filter((p): p is PoolRecord => p !== undefined)
          .sort(byName)
          .map((p) => ({ ...p })),
      update: async (id, changes) => {
        const pool = pools.get(id)
        if (!pool) return null
        if (changes.name !== undefined && nameTaken(changes.name, id)) return null
        const updated = { ...pool, ...changes }
        pools.set(id, updated)
        return { ...updated }
      },
      delete: async (id) => {
        if (!pools.delete(id)) return false
        for (const [key, m] of members) if (m.poolId === id) members.delete(key)
        for (const [key, c] of contributions) if (c.poolId === id) contributions.delete(key)
        return true
      },
      members: async (poolId) =>
        [...members.values()]
          .filter((m) => m.poolId === poolId)
          .sort(byAdded)
          .map((m) => ({ ...m })),
      membership: async (poolId, agentId) => {
        const m = members.get(memberKey(poolId, agentId))
        return m ? { ...m } : null
      },
      membershipsOf: async (agentId) =>
        [...members.values()]
          .filter((m) => m.agentId === agentId)
          .sort(byAdded)
          .map((m) => ({ ...m })),
      putMember: async (member) => {
        const key = memberKey(member.poolId, member.agentId)
        const existing = members.get(key)
        const stored = existing ? { ...existing, role: member.role } : { ...member }
        members.set(key, stored)
        return { ...stored }
      },
      removeMember: async (poolId, agentId) => members.delete(memberKey(poolId, agentId)),
      recordContribution: async (c) => {
        contributions.set(memberKey(c.poolId, c.memoryId), { ...c })
      },
      contributionsTo: async (poolId, memoryIds) =>
        memoryIds
          .map((id) => contributions.get(memberKey(poolId, id)))
          .filter((c): c is PoolContributionRecord => c !== undefined)
          .map((c) => ({ ...c })),
      contributionsBy: async (sourceAgentId, poolId) =>
        [...contributions.values()]
          .filter((c) => c.sourceAgentId === sourceAgentId && (poolId === null || c.poolId === poolId))
          .map((c) => ({ ...c })),
      forgetContribution: async (poolId, memoryId) => {
        contributions.delete(memberKey(poolId, memoryId))
      },
    }
  }
}

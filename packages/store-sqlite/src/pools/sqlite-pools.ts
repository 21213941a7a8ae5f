import type { PoolRole } from '@engram/core'
import type { PoolMemberRecord, PoolRecord, PoolRepository } from '@engram/engine'
import type { Database } from '../db/client.ts'

type MemberRow = { poolId: string; agentId: string; role: string; addedAt: Date }

const memberOf = (row: MemberRow): PoolMemberRecord => ({
  poolId: row.poolId,
  agentId: row.agentId,
  role: row.role as PoolRole,
  addedAt: row.addedAt,
})
const poolOf = (row: PoolRecord): PoolRecord => ({
  id: row.id,
  name: row.name,
  description: row.description,
  createdAt: row.createdAt,
})
/** A unique constraint met (the pool's name, taken by a concurrent request). */
const isUniqueViolation = (error: unknown) => (error as { code?: string }).code === 'P2002'

/**
 * Shared memory pools on SQLite (and on Postgres through the shared view): Prisma's model API, the
 * same statements on both. Members and contribution records go with their pool and with their
 * agent (the schema's cascades).
 */
export function sqlitePools(db: Database): PoolRepository {
  return {
    async create(pool, members) {
      try {
        await db.$transaction(async (tx) => {
          await tx.memoryPool.create({ data: pool })
          if (members.length > 0) await tx.poolMember.createMany({ data: members.map((m) => ({ ...m })) })
        })
        return poolOf(pool)
      } catch (error) {
        if (isUniqueViolation(error)) return null
        throw error
      }
    },
    async find(id) {
      const row = await db.memoryPool.findUnique({ where: { id } })
      return row ? poolOf(row) : null
    },
    async findByName(name) {
      const row = await db.memoryPool.findUnique({ where: { name } })
      return row ? poolOf(row) : null
    },
    async list() {
      return (await db.memoryPool.findMany({ orderBy: { name: 'asc' } })).map(poolOf)
    },
    async listByIds(ids) {
      if (ids.length === 0) return []
      return (
        await db.memoryPool.findMany({ where: { id: { in: [...ids] } }, orderBy: { name: 'asc' } })
      ).map(poolOf)
    },
    async update(id, changes) {
      try {
        const row = await db.memoryPool.update({ where: { id }, data: changes })
        return poolOf(row)
      } catch (error) {
        if (isUniqueViolation(error)) return null
        throw error
      }
    },
    async delete(id) {
      const { count } = await db.memoryPool.deleteMany({ where: { id } })
      return count > 0
    },
    async members(poolId) {
      return (
        await db.poolMember.findMany({ where: { poolId }, orderBy: [{ addedAt: 'asc' }, { agentId: 'asc' }] })
      ).map(memberOf)
    },
    async membership(poolId, agentId) {
      const row = await db.poolMember.findUnique({ where: { poolId_agentId: { poolId, agentId } } })
      return row ? memberOf(row) : null
    },
    async membershipsOf(agentId) {
      return (
        await db.poolMember.findMany({ where: { agentId }, orderBy: [{ addedAt: 'asc' }, { poolId: 'asc' }] })
      ).map(memberOf)
    },
    async putMember(member) {
      const row = await db.poolMember.upsert({
        where: { poolId_agentId: { poolId: member.poolId, agentId: member.agentId } },
        create: { ...member },
        // A role change keeps when the agent joined.
        update: { role: member.role },
      })
      return memberOf(row)
    },
    async removeMember(poolId, agentId) {
      const { count } = await db.poolMember.deleteMany({ where: { poolId, agentId } })
      return count > 0
    },
    async recordContribution(c) {
      await db.poolContribution.upsert({
        where: { poolId_memoryId: { poolId: c.poolId, memoryId: c.memoryId } },
        create: {
          poolId: c.poolId,
          memoryId: c.memoryId,
          agentId: c.sourceAgentId,
          contributedAt: c.contributedAt,
        },
        update: { agentId: c.sourceAgentId, contributedAt: c.contributedAt },
      })
    },
    async contributionsTo(poolId, memoryIds) {
      if (memoryIds.length === 0) return []
      const rows = await db.poolContribution.findMany({ where: { poolId, memoryId: { in: [...memoryIds] } } })
      return rows.map((r) => ({
        poolId: r.poolId,
        memoryId: r.memoryId,
        sourceAgentId: r.agentId,
        contributedAt: r.contributedAt,
      }))
    },
    async contributionsBy(sourceAgentId, poolId) {
      const rows = await db.poolContribution.findMany({
        where: { agentId: sourceAgentId, ...(poolId !== null ? { poolId } : {}) },
        orderBy: [{ poolId: 'asc' }, { contributedAt: 'asc' }],
      })
      return rows.map((r) => ({
        poolId: r.poolId,
        memoryId: r.memoryId,
        sourceAgentId: r.agentId,
        contributedAt: r.contributedAt,
      }))
    },
    async forgetContribution(poolId, memoryId) {
      await db.poolContribution.deleteMany({ where: { poolId, memoryId } })
    },
  }
}

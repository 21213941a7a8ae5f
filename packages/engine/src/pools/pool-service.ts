import { randomUUID } from 'node:crypto'
import {
  type Clock,
  ConflictError,
  DEFAULT_POOL_LIMITS,
  distinctMembers,
  ForbiddenError,
  type MemoryCategory,
  mayContribute,
  NotFoundError,
  normalizePoolDescription,
  normalizePoolName,
  type PoolLimits,
  type PoolRole,
  poolProvenance,
  poolStorageAgentId,
  ValidationError,
} from '@engram/core'
import { AgentVersionCache } from '../agents/agent-version-cache.ts'
import type { AgentWrites } from '../agents/agent-writes.ts'
import type { MemoryItemService, MemoryWriteResult } from '../memory-items/memory-item-service.ts'
import type { MemoryItemView } from '../ports/memory-items.ts'
import type { PoolContributionRecord, PoolMemberRecord, PoolRecord, PoolRepository } from '../ports/pools.ts'
import type { AgentRepository } from '../ports/repositories.ts'
import type { SearchService } from '../search/search-service.ts'
import type { SearchHit } from '../search/search-types.ts'

/** Who asks: an agent (its own key) or the operator (an admin key), as the operations see them. */
export type PoolViewer = { kind: 'agent'; agentId: string } | { kind: 'operator' }

/** A pool with what a caller is shown of it. */
export interface PoolView extends PoolRecord {
  members: PoolMemberRecord[]
  /** Memories currently valid in the pool. */
  memoryCount: number
  /** The caller's role; null for the operator. */
  role: PoolRole | null
}

export interface PoolMemoryView {
  memory: MemoryItemView
  /** The agent that contributed it; null when it was deleted with that agent's record gone. */
  contributorAgentId: string | null
}

export interface PoolHit {
  memory: MemoryItemView
  score: number
  contributorAgentId: string | null
}

export interface SyncResult {
  poolId: string
  agentId: string
  stored: number
  duplicates: number
  superseded: number
  /** The memories this sync stored in the agent's memory (none on a repeated sync). */
  memories: MemoryItemView[]
}

export interface PoolServiceDeps {
  pools: PoolRepository
  /** Agent rows: a pool's storage agent is one (so its memories have an owner), kept out of agent lists. */
  agents: AgentRepository
  /** Member agents must exist (NOT_FOUND otherwise, like every operator call naming an agent). */
  requireAgent(agentId: string): Promise<unknown>
  memoryItems: MemoryItemService
  search: SearchService
  /** A deleted pool's storage agent ends like a deleted agent: caches, vector files and store bytes. */
  endStorageAgent(storageAgentId: string): Promise<void>
  /** What a contributing agent writes passes its own sensitive-data policy first. */
  guard(agentId: string, texts: { field: string; text: string }[]): Promise<string[]>
  clock: Clock
  limits?: PoolLimits
  newId?: () => string
  /**
   * What these agents may read through pools changed (joined, left, role changed, pool deleted):
   * the engine bumps their write versions, so caches keyed by them (the readable pools, the
   * memory context) are not served from before, here and on the other replicas.
   */
  membershipChanged?(agentIds: readonly string[]): void
}

// Pages of a pool's memories read when syncing: memory items are listed newest first.
const SYNC_PAGE = 200

/**
 * Shared memory pools (spec 002's SharedMemoryPool, issue 17). Membership is read on every call,
 * never cached, so a removal holds from the next request on. A non-member is told the pool does
 * not exist (NOT_FOUND), as for another agent's data.
 */
export class PoolService {
  readonly limits: PoolLimits
  private readonly newId: () => string

  constructor(private readonly deps: PoolServiceDeps) {
    this.limits = deps.limits ?? DEFAULT_POOL_LIMITS
    this.newId = deps.newId ?? (() => randomUUID())
  }

  // --- the operator's side ---------------------------------------------------------------------

  async create(input: {
    name: string
    description?: string | null
    members?: readonly { agentId: string; role: PoolRole }[] | null
  }): Promise<PoolView> {
    const name = normalizePoolName(input.name, this.limits)
    const description = normalizePoolDescription(input.description, this.limits)
    const members = distinctMembers(input.members ?? [], this.limits)
    for (const m of members) await this.deps.requireAgent(m.agentId)
    if (await this.deps.pools.findByName(name)) throw nameTaken(name)
    const id = this.newId()
    const at = this.deps.clock.now()
    const storage = poolStorageAgentId(id)
    await this.deps.agents.upsert(storage, `pool ${name}`)
    const created = await this.deps.pools.create(
      { id, name, description, createdAt: at },
      members.map((m) => ({ poolId: id, agentId: m.agentId, role: m.role, addedAt: at })),
    )
    if (!created) {
      // Another request took the name between the check and the insert.
      await this.deps.agents.delete(storage)
      throw nameTaken(name)
    }
    this.deps.membershipChanged?.(members.map((m) => m.agentId))
    return this.view(created, null)
  }

  async update(
    id: string,
    changes: { name?: string | null; description?: string | null },
  ): Promise<PoolView> {
    await this.requirePool(id)
    const name = changes.name != null ? normalizePoolName(changes.name, this.limits) : undefined
    const description =
      changes.description !== undefined
        ? normalizePoolDescription(changes.description, this.limits)
        : undefined
    const updated = await this.deps.pools.update(id, {
      ...(name !== undefined ? { name } : {}),
      ...(description !== undefined ? { description } : {}),
    })
    if (!updated) throw nameTaken(name ?? '')
    return this.view(updated, null)
  }

  /** Deletes a pool and every memory in it, from every store (its storage agent ends like a deleted agent). */
  async delete(id: string): Promise<PoolRecord> {
    const pool = await this.requirePool(id)
    const members = (await this.deps.pools.members(id)).map((m) => m.agentId)
    await this.deps.pools.delete(id)
    this.deps.membershipChanged?.(members)
    const storage = poolStorageAgentId(id)
    await this.deps.agents.delete(storage)
    await this.deps.endStorageAgent(storage)
    return pool
  }

  async addMember(poolId: string, agentId: string, role: PoolRole): Promise<PoolView> {
    const pool = await this.requirePool(poolId)
    await this.deps.requireAgent(agentId)
    const existing = await this.deps.pools.membership(poolId, agentId)
    if (!existing && (await this.deps.pools.members(poolId)).length >= this.limits.maxPoolMembers)
      throw new ValidationError([
        {
          field: 'agentId',
          message: `the pool already has ${this.limits.maxPoolMembers} members, its limit`,
          limit: this.limits.maxPoolMembers,
        },
      ])
    await this.deps.pools.putMember({ poolId, agentId, role, addedAt: this.deps.clock.now() })
    this.deps.membershipChanged?.([agentId])
    return this.view(pool, null)
  }

  /** Ends a membership; with `removeContributions` the memories the agent contributed leave the pool too. */
  async removeMember(poolId: string, agentId: string, removeContributions = false): Promise<PoolView> {
    const pool = await this.requirePool(poolId)
    if (!(await this.deps.pools.membership(poolId, agentId))) throw new NotFoundError('PoolMember', agentId)
    if (removeContributions) await this.removeContributions(agentId, poolId)
    await this.deps.pools.removeMember(poolId, agentId)
    this.deps.membershipChanged?.([agentId])
    return this.view(pool, null)
  }

  // --- members and the operator ----------------------------------------------------------------

  /** An agent's pools (its memberships); the operator's: every pool, or one agent's. */
  async list(viewer: PoolViewer, agentId?: string | null): Promise<PoolView[]> {
    const memberAgent = viewer.kind === 'agent' ? viewer.agentId : (agentId ?? null)
    if (memberAgent === null) {
      const pools = await this.deps.pools.list()
      return Promise.all(pools.map((p) => this.view(p, null)))
    }
    const memberships = await this.deps.pools.membershipsOf(memberAgent)
    const roles = new Map(memberships.map((m) => [m.poolId, m.role]))
    const pools = await this.deps.pools.listByIds(memberships.map((m) => m.poolId))
    return Promise.all(
      pools.map((p) => this.view(p, viewer.kind === 'agent' ? (roles.get(p.id) ?? null) : null)),
    )
  }

  async get(viewer: PoolViewer, poolId: string): Promise<PoolView> {
    const { pool, role } = await this.access(viewer, poolId)
    return this.view(pool, role)
  }

  /** The pool's memories, newest first, with who contributed each. */
  async memories(
    viewer: PoolViewer,
    poolId: string,
  ): Promise<{ totalCount: number; page: (offset: number, limit: number) => Promise<PoolMemoryView[]> }> {
    await this.access(viewer, poolId)
    const listed = await this.deps.memoryItems.list(poolStorageAgentId(poolId), {}, 'createdAt')
    return {
      totalCount: listed.totalCount,
      page: async (offset, limit) => this.withContributors(poolId, await listed.page(offset, limit)),
    }
  }

  /** The pool's hybrid search over its memories: the same ranking as an agent's MEMORIES scope. */
  async query(viewer: PoolViewer, poolId: string, query: string, limit?: number | null): Promise<PoolHit[]> {
    await this.access(viewer, poolId)
    const max = this.limits.maxPoolQueryLimit
    if (limit != null && (limit < 1 || limit > max))
      throw new ValidationError([{ field: 'limit', message: `must be between 1 and ${max}`, limit: max }])
    const ranked = await this.deps.search.rank(poolStorageAgentId(poolId), query, {
      scopes: ['MEMORIES'],
      strategy: 'HYBRID',
      limit: limit ?? 10,
    })
    const hits = ranked.hits.filter((h): h is SearchHit & { memory: MemoryItemView } => h.memory != null)
    const contributors = await this.contributorsOf(
      poolId,
      hits.map((h) => h.memory.id),
    )
    return hits.map((h) => ({
      memory: h.memory,
      score: h.score,
      contributorAgentId: contributors.get(h.memory.id) ?? null,
    }))
  }

  /**
   * A contributor's memory into the pool, through the verification pipeline of the pool's
   * memories (STORED, DUPLICATE of one already there, or SUPERSEDED). A reader is refused.
   */
  async contribute(
    viewer: PoolViewer,
    poolId: string,
    contributorAgentId: string,
    memory: {
      content: string
      category: MemoryCategory
      importance?: number | null
      tags?: string[] | null
      source?: string | null
    },
  ): Promise<MemoryWriteResult> {
    const { role } = await this.memberAccess(viewer, poolId, contributorAgentId)
    if (!mayContribute(role)) throw new ForbiddenError('a READER of this pool cannot contribute to it')
    const [content] = await this.deps.guard(contributorAgentId, [{ field: 'content', text: memory.content }])
    const written = await this.deps.memoryItems.create(poolStorageAgentId(poolId), {
      content: content ?? memory.content,
      category: memory.category,
      importance: memory.importance ?? null,
      tags: memory.tags ?? null,
      metadata: memory.source ? { source: memory.source } : {},
    })
    if (written.outcome !== 'DUPLICATE')
      await this.deps.pools.recordContribution({
        poolId,
        memoryId: written.item.id,
        sourceAgentId: contributorAgentId,
        contributedAt: this.deps.clock.now(),
      })
    this.deps.search.forgetAgent(poolStorageAgentId(poolId))
    return written
  }

  /** Removes one of the pool's memories: its contributor (still a member) or the operator. */
  async removeMemory(viewer: PoolViewer, poolId: string, memoryId: string): Promise<PoolMemoryView> {
    await this.access(viewer, poolId)
    const storage = poolStorageAgentId(poolId)
    const [contribution] = await this.deps.pools.contributionsTo(poolId, [memoryId])
    // A member who may not remove it learns no more than that it is not theirs.
    if (viewer.kind === 'agent' && contribution?.sourceAgentId !== viewer.agentId) {
      if (!(await this.deps.memoryItems.find(storage, memoryId)))
        throw new NotFoundError('MemoryItem', memoryId)
      throw new ForbiddenError('only the agent that contributed a memory (or an admin key) can remove it')
    }
    const deleted = await this.deps.memoryItems.delete(storage, memoryId)
    await this.deps.pools.forgetContribution(poolId, memoryId)
    this.deps.search.forgetAgent(storage)
    this.deps.search.forgetAccesses(storage, [memoryId])
    return { memory: deleted, contributorAgentId: contribution?.sourceAgentId ?? null }
  }

  /**
   * Copies the pool's current memories into a member's own memory through its verification, so a
   * second sync stores nothing new (each is a DUPLICATE of its first copy). Each copy records its
   * provenance `pool:<id>` in its metadata.
   */
  async syncToAgent(viewer: PoolViewer, poolId: string, agentId: string): Promise<SyncResult> {
    await this.memberAccess(viewer, poolId, agentId)
    const storage = poolStorageAgentId(poolId)
    const listed = await this.deps.memoryItems.list(storage, {}, 'createdAt')
    const pool: MemoryItemView[] = []
    for (let offset = 0; offset < listed.totalCount; offset += SYNC_PAGE)
      pool.push(...(await listed.page(offset, SYNC_PAGE)))
    const result: SyncResult = { poolId, agentId, stored: 0, duplicates: 0, superseded: 0, memories: [] }
    // Oldest first, so the agent's copies keep the pool's order of learning.
    for (const item of pool.reverse()) {
      const written = await this.deps.memoryItems.create(agentId, {
        content: item.content,
        category: item.category,
        tags: item.tags,
        importance: item.importance,
        confidence: item.confidence,
        metadata: { ...item.metadata, provenance: poolProvenance(poolId) },
      })
      if (written.outcome === 'DUPLICATE') result.duplicates++
      else {
        result.memories.push(written.item)
        if (written.outcome === 'SUPERSEDED') result.superseded++
        else result.stored++
      }
    }
    if (result.memories.length > 0) this.deps.search.forgetAgent(agentId)
    return result
  }

  /**
   * Before an agent is deleted: the memories it contributed leave every pool (through the memory
   * pipeline, so full-text, vectors and caches follow). Its memberships go with its row.
   */
  async forgetAgent(agentId: string): Promise<void> {
    await this.removeContributions(agentId, null)
  }

  // --- access -------------------------------------------------------------------------------------

  private async requirePool(id: string): Promise<PoolRecord> {
    const pool = await this.deps.pools.find(id)
    if (!pool) throw new NotFoundError('MemoryPool', id)
    return pool
  }

  /** The pool and the caller's role: a non-member is told it does not exist. */
  private async access(
    viewer: PoolViewer,
    poolId: string,
  ): Promise<{ pool: PoolRecord; role: PoolRole | null }> {
    const pool = await this.requirePool(poolId)
    if (viewer.kind === 'operator') return { pool, role: null }
    const membership = await this.deps.pools.membership(poolId, viewer.agentId)
    if (!membership) throw new NotFoundError('MemoryPool', poolId)
    return { pool, role: membership.role }
  }

  /**
   * Work done for one member agent: an agent key only for itself (naming another is FORBIDDEN,
   * as everywhere), the operator for any agent; the agent must be a member (NOT_FOUND otherwise).
   */
  private async memberAccess(viewer: PoolViewer, poolId: string, agentId: string): Promise<PoolMemberRecord> {
    if (viewer.kind === 'agent' && viewer.agentId !== agentId)
      throw new ForbiddenError('this key belongs to another agent')
    await this.requirePool(poolId)
    const membership = await this.deps.pools.membership(poolId, agentId)
    if (!membership) {
      if (viewer.kind === 'agent') throw new NotFoundError('MemoryPool', poolId)
      throw new NotFoundError('PoolMember', agentId)
    }
    return membership
  }

  private async removeContributions(agentId: string, poolId: string | null): Promise<void> {
    for (const c of await this.deps.pools.contributionsBy(agentId, poolId)) {
      const storage = poolStorageAgentId(c.poolId)
      if (await this.deps.memoryItems.find(storage, c.memoryId))
        await this.deps.memoryItems.delete(storage, c.memoryId)
      await this.deps.pools.forgetContribution(c.poolId, c.memoryId)
      this.deps.search.forgetAgent(storage)
    }
  }

  private async contributorsOf(poolId: string, memoryIds: readonly string[]): Promise<Map<string, string>> {
    const records: PoolContributionRecord[] = await this.deps.pools.contributionsTo(poolId, memoryIds)
    return new Map(records.map((c) => [c.memoryId, c.sourceAgentId]))
  }

  private async withContributors(poolId: string, items: MemoryItemView[]): Promise<PoolMemoryView[]> {
    const contributors = await this.contributorsOf(
      poolId,
      items.map((i) => i.id),
    )
    return items.map((memory) => ({ memory, contributorAgentId: contributors.get(memory.id) ?? null }))
  }

  private async view(pool: PoolRecord, role: PoolRole | null): Promise<PoolView> {
    const storage = poolStorageAgentId(pool.id)
    const [members, current] = await Promise.all([
      this.deps.pools.members(pool.id),
      this.deps.memoryItems.list(storage, {}, 'createdAt'),
    ])
    return { ...pool, members, memoryCount: current.totalCount, role }
  }
}

function nameTaken(name: string): ConflictError {
  return new ConflictError(`a pool named "${name}" already exists`, 'name')
}

/** Agents whose readable pools are kept in memory at once (a few ids each). */
const READABLE_POOLS_CACHED_AGENTS = 10_000

/**
 * The pools an agent reads (every membership), as the POOLS scope and context section ask on each
 * request: read once per agent write version. PoolService bumps the version of every agent whose
 * memberships change (membershipChanged), and deleting an agent ends its version, so an answer
 * kept here is never one from before a change.
 */
export function readablePoolsOf(
  pools: Pick<PoolRepository, 'membershipsOf'>,
  writes: Pick<AgentWrites, 'version'>,
): (agentId: string) => Promise<string[]> {
  const kept = new AgentVersionCache(
    async (agentId) => (await pools.membershipsOf(agentId)).map((m) => m.poolId),
    writes,
    { max: READABLE_POOLS_CACHED_AGENTS },
  )
  return (agentId) => kept.of(agentId)
}

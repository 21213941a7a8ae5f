import type { PoolRole } from '@engram/core'

/** A shared memory pool (issue 17). Its memories are memory items of its storage agent (core's poolStorageAgentId). */
export interface PoolRecord {
  id: string
  /** Unique across the server. */
  name: string
  description: string | null
  createdAt: Date
}

export interface PoolMemberRecord {
  poolId: string
  agentId: string
  role: PoolRole
  addedAt: Date
}

/** Which agent contributed one of a pool's memories: its deletion takes the memory out of the pool. */
export interface PoolContributionRecord {
  poolId: string
  /** The memory item's id under the pool's storage agent. */
  memoryId: string
  sourceAgentId: string
  contributedAt: Date
}

export type PoolChanges = Partial<Pick<PoolRecord, 'name' | 'description'>>

/**
 * Pools, their members and who contributed what. Membership is read on every request (never
 * cached), so a removal holds from the next request on. Deleting an agent's row removes its
 * memberships and contribution records (the schema's cascades); deleting a pool removes its
 * members and contribution records.
 */
export interface PoolRepository {
  /** A new pool with its first members, in one transaction; null when the name is taken. */
  create(pool: PoolRecord, members: readonly PoolMemberRecord[]): Promise<PoolRecord | null>
  find(id: string): Promise<PoolRecord | null>
  findByName(name: string): Promise<PoolRecord | null>
  /** Every pool, by name. */
  list(): Promise<PoolRecord[]>
  /** The pools these ids name, by name (ids of no pool are skipped). */
  listByIds(ids: readonly string[]): Promise<PoolRecord[]>
  /** The changed pool; null when the new name is taken by another pool. */
  update(id: string, changes: PoolChanges): Promise<PoolRecord | null>
  /** Removes the pool with its members and contribution records; false when there was none. */
  delete(id: string): Promise<boolean>
  /** A pool's members, oldest first. */
  members(poolId: string): Promise<PoolMemberRecord[]>
  membership(poolId: string, agentId: string): Promise<PoolMemberRecord | null>
  /** An agent's memberships, oldest first. */
  membershipsOf(agentId: string): Promise<PoolMemberRecord[]>
  /** Adds a member or changes its role (keeping when it was added). */
  putMember(member: PoolMemberRecord): Promise<PoolMemberRecord>
  /** False when the agent was no member. */
  removeMember(poolId: string, agentId: string): Promise<boolean>
  recordContribution(contribution: PoolContributionRecord): Promise<void>
  /** Who contributed these memories of the pool (memories without a record are absent). */
  contributionsTo(poolId: string, memoryIds: readonly string[]): Promise<PoolContributionRecord[]>
  /** What an agent contributed, to one pool or (null) to every pool. */
  contributionsBy(sourceAgentId: string, poolId: string | null): Promise<PoolContributionRecord[]>
  forgetContribution(poolId: string, memoryId: string): Promise<void>
}

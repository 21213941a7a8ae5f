// Shared memory pools (issue 17, spec 002) in the dashboard: the pools list, a pool's members and
// memories, its hybrid search and syncing it into an agent's memories. The GraphQL selections the
// pages ask for, the shapes they answer, and the pure steps between a form and the API (the
// members picked on the create form, a sync's outcome in words), kept here so they are tested
// without a browser. Field names follow the catalog (packages/contract/src/schemas/pools.ts).

/**
 * The API's names for the result types (the success members of the operations' unions; list
 * results come wrapped in Pothos' `<Field>Success { data }`) and for the mutations' input types.
 * One place, so the selections below follow the schema if a name changes.
 */
export const POOL_TYPENAMES = {
  pool: 'MemoryPool',
  pools: 'QueryPoolsSuccess',
  memoryPage: 'PoolMemoryPage',
  queryResult: 'PoolQueryResult',
  contribution: 'PoolContribution',
  sync: 'PoolSync',
} as const

/** The mutations taking their input as one object (the catalog's `inputArg: 'input'`). */
export const POOL_INPUT_TYPES = {
  create: 'CreatePoolInput',
  update: 'UpdatePoolInput',
  contribute: 'ContributeToPoolInput',
} as const

/** READER reads the pool; CONTRIBUTOR reads and writes (core's pool roles). */
export const POOL_ROLE_LABELS: Record<PoolRole, string> = {
  READER: 'Reader',
  CONTRIBUTOR: 'Contributor',
}
export type PoolRole = 'READER' | 'CONTRIBUTOR'
export const POOL_ROLES = Object.keys(POOL_ROLE_LABELS) as PoolRole[]

export function isPoolRole(value: unknown): value is PoolRole {
  // Own keys only: `'toString' in {}` is true.
  return typeof value === 'string' && Object.hasOwn(POOL_ROLE_LABELS, value)
}

export interface PoolMember {
  agentId: string
  role: PoolRole
  addedAt: string
}

export const POOL_MEMBER_FIELDS = 'agentId role addedAt'

export interface Pool {
  id: string
  name: string
  description: string | null
  createdAt: string
  memberCount: number
  /** Memories currently valid in the pool. */
  memoryCount: number
  members: PoolMember[]
}

export const POOL_FIELDS = `id name description createdAt memberCount memoryCount members { ${POOL_MEMBER_FIELDS} }`

export interface PoolMemoryItem {
  id: string
  content: string
  category: string
  importance: number
  createdAt: string
}

const POOL_MEMORY_ITEM_FIELDS = 'id content category importance createdAt'

/** A pool's memory: an item stored under the pool, naming the agent that contributed it. */
export interface PoolMemory {
  memory: PoolMemoryItem
  /** The contributing agent (its deletion removes the copies it contributed); null when unrecorded. */
  contributorAgentId: string | null
}

export const POOL_MEMORY_FIELDS = `memory { ${POOL_MEMORY_ITEM_FIELDS} } contributorAgentId`

/** A page of a pool's memories, the newest first. */
export interface PoolMemoryPage {
  totalCount: number
  memories: PoolMemory[]
}

export interface PoolHit {
  memory: PoolMemoryItem
  score: number
  contributorAgentId: string | null
}

export const POOL_HIT_FIELDS = `memory { ${POOL_MEMORY_ITEM_FIELDS} } score contributorAgentId`

/** What syncing a pool into an agent's memories did: new ones stored, the rest already there. */
export interface PoolSync {
  agentId: string
  stored: number
  duplicates: number
  superseded: number
}

export const POOL_SYNC_FIELDS = 'agentId stored duplicates superseded'

/**
 * The members chosen on the create form: one role select per agent, named `role:<agentId>`, whose
 * empty value leaves the agent out. In the agents' order; anything not a role is left out too (the
 * API would refuse it with a message naming the field, but a select offers nothing else).
 */
export function membersFromForm(entries: Iterable<[string, unknown]>): { agentId: string; role: PoolRole }[] {
  const members: { agentId: string; role: PoolRole }[] = []
  for (const [name, value] of entries) {
    if (!name.startsWith('role:')) continue
    const agentId = name.slice('role:'.length)
    if (agentId && isPoolRole(value)) members.push({ agentId, role: value })
  }
  return members
}

/** "2 contributors, 1 reader", "no members": a pool's membership at a glance. */
export function membershipSummary(members: readonly { role: PoolRole }[]): string {
  if (members.length === 0) return 'no members'
  const count = (role: PoolRole) => members.filter((m) => m.role === role).length
  const parts: string[] = []
  for (const [role, noun] of [
    ['CONTRIBUTOR', 'contributor'],
    ['READER', 'reader'],
  ] as const) {
    const n = count(role)
    if (n > 0) parts.push(`${n} ${noun}${n === 1 ? '' : 's'}`)
  }
  return parts.join(', ')
}

/** "Stored 3 new memories in agent-b; 2 were already there." — a sync's outcome in words. */
export function syncSummary(sync: PoolSync): string {
  const stored = `Stored ${sync.stored} new ${sync.stored === 1 ? 'memory' : 'memories'} in ${sync.agentId}`
  const already =
    sync.duplicates > 0 ? `; ${sync.duplicates} ${sync.duplicates === 1 ? 'was' : 'were'} already there` : ''
  const updated =
    sync.superseded > 0
      ? `; ${sync.superseded} replaced an older ${sync.superseded === 1 ? 'memory' : 'memories'}`
      : ''
  return `${stored}${already}${updated}.`
}

/** Agents that may be added to a pool: every agent not a member yet. */
export function agentsOutside<A extends { id: string }>(
  agents: readonly A[],
  members: readonly PoolMember[],
): A[] {
  const inside = new Set(members.map((m) => m.agentId))
  return agents.filter((a) => !inside.has(a.id))
}

/** The pool's page. */
export function poolHref(poolId: string): string {
  return `/pools/${encodeURIComponent(poolId)}`
}

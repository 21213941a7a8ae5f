'use server'

import { revalidatePath } from 'next/cache'
import { type Answer, answer, attempt, type Payload, submitted } from '../../../lib/answers'
import { ERROR_FIELDS, gql } from '../../../lib/api'
import {
  isPoolRole,
  membersFromForm,
  POOL_FIELDS,
  POOL_HIT_FIELDS,
  POOL_INPUT_TYPES,
  POOL_MEMORY_FIELDS,
  POOL_SYNC_FIELDS,
  POOL_TYPENAMES,
  type Pool,
  type PoolHit,
  type PoolMemoryPage,
  type PoolRole,
  type PoolSync,
} from '../../../lib/pools'

// The pools pages' calls to the API, as the signed-in operator (an admin key: pools are created and
// their membership changed by admins only). Reads answer data or a refusal (never throw), so a page
// can show a failed call in place; forms get their refusal back with the fields it names.

export type { Answer }

/** Memories shown on a pool's page (the API's paging; the count says when there are more). */
const MEMORIES_PAGE_SIZE = 100

/** Every pool, with its members and how many memories it holds. */
export async function readPools(): Promise<Answer<Pool[]>> {
  return attempt(async () => {
    const { pools } = await gql<{ pools: Payload }>(
      `{ pools { __typename ... on ${POOL_TYPENAMES.pools} { data { ${POOL_FIELDS} } } ${ERROR_FIELDS} } }`,
    )
    return answer<Pool[]>(pools, POOL_TYPENAMES.pools, 'Listing the pools', (p) => p.data as Pool[])
  })
}

/** One pool and its memories; null when there is no pool by that id. */
export async function readPool(
  poolId: string,
): Promise<Answer<{ pool: Pool; memories: PoolMemoryPage } | null>> {
  return attempt(async () => {
    const data = await gql<{ pool: Payload | null; poolMemories: Payload | null }>(
      `query($id: ID!, $first: Int) {
        pool(id: $id) { __typename ... on ${POOL_TYPENAMES.pool} { ${POOL_FIELDS} } ${ERROR_FIELDS} }
        poolMemories(poolId: $id, first: $first) {
          __typename ... on ${POOL_TYPENAMES.memoryPage} { totalCount memories { ${POOL_MEMORY_FIELDS} } } ${ERROR_FIELDS}
        }
      }`,
      { id: poolId, first: MEMORIES_PAGE_SIZE },
    )
    // An unknown pool is NOT_FOUND (as for another agent's data): the page says so.
    if (data.pool === null || data.pool.__typename === 'NotFoundError') return { ok: true, value: null }
    const pool = answer<Pool>(data.pool, POOL_TYPENAMES.pool, 'Reading the pool')
    if (!pool.ok) return pool
    const memories = answer<PoolMemoryPage>(
      data.poolMemories,
      POOL_TYPENAMES.memoryPage,
      'Reading its memories',
    )
    if (!memories.ok) return memories
    return { ok: true, value: { pool: pool.value, memories: memories.value } }
  })
}

/** What a form shows after its action: a refusal with the fields it names, or what was done. */
export interface PoolFormState {
  ok?: boolean
  message?: string
  issues?: { field: string; message: string; limit: string | null }[]
  /** What was submitted, when it was refused: React resets a form after its action. */
  values?: Record<string, string>
}

function refused(result: Answer<unknown>, form: FormData): PoolFormState {
  return result.ok
    ? { ok: true }
    : { ok: false, message: result.message, issues: result.issues, values: submitted(form) }
}

export interface CreatePoolState extends PoolFormState {
  created?: { id: string; name: string }
}

/** Creates a pool with the members picked on the form (one role select per agent). */
export async function createPool(_state: CreatePoolState, form: FormData): Promise<CreatePoolState> {
  const description = String(form.get('description') ?? '').trim()
  const result = await attempt(async () => {
    const { createPool } = await gql<{ createPool: Payload }>(
      `mutation($input: ${POOL_INPUT_TYPES.create}!) { createPool(input: $input) { __typename ... on ${POOL_TYPENAMES.pool} { id name } ${ERROR_FIELDS} } }`,
      {
        input: {
          name: String(form.get('name') ?? '').trim(),
          description: description || null,
          members: membersFromForm(form.entries()),
        },
      },
    )
    return answer<{ id: string; name: string }>(createPool, POOL_TYPENAMES.pool, 'Creating the pool')
  })
  if (!result.ok) return refused(result, form)
  revalidatePath('/pools')
  return { ok: true, created: result.value }
}

/** Adds an agent to a pool, or changes its role (the API's add is an upsert). */
export async function setPoolMember(poolId: string, agentId: string, role: PoolRole): Promise<Answer<null>> {
  if (!isPoolRole(role)) return { ok: false, message: `role must be one of READER, CONTRIBUTOR` }
  const result = await attempt(async () => {
    const { addPoolMember } = await gql<{ addPoolMember: Payload }>(
      `mutation($p: ID!, $a: ID!, $r: PoolRole!) { addPoolMember(poolId: $p, agentId: $a, role: $r) { __typename ... on ${POOL_TYPENAMES.pool} { id } ${ERROR_FIELDS} } }`,
      { p: poolId, a: agentId, r: role },
    )
    return answer<null>(addPoolMember, POOL_TYPENAMES.pool, 'Changing the membership', () => null)
  })
  if (result.ok) revalidatePath(`/pools/${poolId}`)
  return result
}

/** The add-member form: an agent and its role. */
export async function addPoolMember(_state: PoolFormState, form: FormData): Promise<PoolFormState> {
  const result = await setPoolMember(
    String(form.get('poolId') ?? ''),
    String(form.get('agentId') ?? ''),
    String(form.get('role') ?? '') as PoolRole,
  )
  return result.ok ? { ok: true, message: 'Added.' } : refused(result, form)
}

/** Removes a member; with `removeContributions` the memories it contributed go too. */
export async function removePoolMember(
  poolId: string,
  agentId: string,
  removeContributions: boolean,
): Promise<Answer<null>> {
  const result = await attempt(async () => {
    const { removePoolMember } = await gql<{ removePoolMember: Payload }>(
      `mutation($p: ID!, $a: ID!, $c: Boolean) { removePoolMember(poolId: $p, agentId: $a, removeContributions: $c) { __typename ... on ${POOL_TYPENAMES.pool} { id } ${ERROR_FIELDS} } }`,
      { p: poolId, a: agentId, c: removeContributions },
    )
    return answer<null>(removePoolMember, POOL_TYPENAMES.pool, 'Removing the member', () => null)
  })
  if (result.ok) revalidatePath(`/pools/${poolId}`)
  return result
}

/** Deletes a pool and every memory stored under it. */
export async function deletePool(poolId: string): Promise<Answer<null>> {
  const result = await attempt(async () => {
    const { deletePool } = await gql<{ deletePool: Payload }>(
      `mutation($id: ID!) { deletePool(id: $id) { __typename ${ERROR_FIELDS} } }`,
      { id: poolId },
    )
    // Whatever the success type is called, an error implements Error and has a message.
    return deletePool && !('message' in deletePool && deletePool.message)
      ? { ok: true as const, value: null }
      : { ok: false as const, message: deletePool?.message ?? 'Deleting the pool failed' }
  })
  if (result.ok) revalidatePath('/pools')
  return result
}

/** Removes one memory from a pool (as the admin). */
export async function removePoolMemory(poolId: string, memoryId: string): Promise<Answer<null>> {
  const result = await attempt(async () => {
    const { removePoolMemory } = await gql<{ removePoolMemory: Payload }>(
      `mutation($p: ID!, $m: ID!) { removePoolMemory(poolId: $p, memoryId: $m) { __typename ${ERROR_FIELDS} } }`,
      { p: poolId, m: memoryId },
    )
    return removePoolMemory && !('message' in removePoolMemory && removePoolMemory.message)
      ? { ok: true as const, value: null }
      : { ok: false as const, message: removePoolMemory?.message ?? 'Removing the memory failed' }
  })
  if (result.ok) revalidatePath(`/pools/${poolId}`)
  return result
}

export interface ContributeState extends PoolFormState {
  /** STORED, DUPLICATE or SUPERSEDED: the verification pipeline's outcome. */
  outcome?: string
}

/** Contributes a memory in a contributor's name (an admin names the contributing agent). */
export async function contributeToPool(_state: ContributeState, form: FormData): Promise<ContributeState> {
  const poolId = String(form.get('poolId') ?? '')
  const raw = String(form.get('importance') ?? '').trim()
  const importance = raw === '' ? null : Number(raw)
  if (importance !== null && !Number.isFinite(importance))
    return {
      ok: false,
      issues: [{ field: 'importance', message: 'must be a number between 0.0 and 1.0', limit: '0..1' }],
      values: submitted(form),
    }
  const result = await attempt(async () => {
    const { contributeToPool } = await gql<{ contributeToPool: Payload }>(
      `mutation($input: ${POOL_INPUT_TYPES.contribute}!) { contributeToPool(input: $input) { __typename ... on ${POOL_TYPENAMES.contribution} { outcome } ${ERROR_FIELDS} } }`,
      {
        input: {
          poolId,
          agentId: String(form.get('agentId') ?? ''),
          content: String(form.get('content') ?? ''),
          category: String(form.get('category') ?? ''),
          importance,
        },
      },
    )
    return answer<{ outcome: string }>(contributeToPool, POOL_TYPENAMES.contribution, 'Contributing')
  })
  if (!result.ok) return refused(result, form)
  revalidatePath(`/pools/${poolId}`)
  return { ok: true, outcome: result.value.outcome }
}

export interface QueryPoolState extends PoolFormState {
  query?: string
  hits?: PoolHit[]
}

/** The pool's hybrid search (the same pipeline as an agent's memories). */
export async function queryPool(_state: QueryPoolState, form: FormData): Promise<QueryPoolState> {
  const query = String(form.get('query') ?? '')
  const result = await attempt(async () => {
    const { queryPool } = await gql<{ queryPool: Payload }>(
      `query($p: ID!, $q: String!, $l: Int) { queryPool(poolId: $p, query: $q, limit: $l) { __typename ... on ${POOL_TYPENAMES.queryResult} { hits { ${POOL_HIT_FIELDS} } } ${ERROR_FIELDS} } }`,
      { p: String(form.get('poolId') ?? ''), q: query, l: Number(form.get('limit') ?? 10) },
    )
    return answer<PoolHit[]>(
      queryPool,
      POOL_TYPENAMES.queryResult,
      'Searching the pool',
      (p) => p.hits as PoolHit[],
    )
  })
  if (!result.ok) return { ...refused(result, form), query }
  return { ok: true, query, hits: result.value }
}

export interface SyncState extends PoolFormState {
  sync?: PoolSync
}

/** Copies the pool's memories into a member's own memories (idempotent: a second sync stores nothing new). */
export async function syncPoolToAgent(_state: SyncState, form: FormData): Promise<SyncState> {
  const poolId = String(form.get('poolId') ?? '')
  const result = await attempt(async () => {
    const { syncPoolToAgent } = await gql<{ syncPoolToAgent: Payload }>(
      `mutation($p: ID!, $a: ID) { syncPoolToAgent(poolId: $p, agentId: $a) { __typename ... on ${POOL_TYPENAMES.sync} { ${POOL_SYNC_FIELDS} } ${ERROR_FIELDS} } }`,
      { p: poolId, a: String(form.get('agentId') ?? '') },
    )
    return answer<PoolSync>(syncPoolToAgent, POOL_TYPENAMES.sync, 'Syncing')
  })
  if (!result.ok) return refused(result, form)
  return { ok: true, sync: result.value }
}

export interface UpdatePoolState extends PoolFormState {
  saved?: { name: string; description: string | null }
}

/** Renames a pool or changes its description; a blank description clears it. */
export async function updatePool(_state: UpdatePoolState, form: FormData): Promise<UpdatePoolState> {
  const poolId = String(form.get('poolId') ?? '')
  const description = String(form.get('description') ?? '').trim()
  const result = await attempt(async () => {
    const { updatePool } = await gql<{ updatePool: Payload }>(
      `mutation($input: ${POOL_INPUT_TYPES.update}!) { updatePool(input: $input) { __typename ... on ${POOL_TYPENAMES.pool} { name description } ${ERROR_FIELDS} } }`,
      {
        input: { id: poolId, name: String(form.get('name') ?? '').trim(), description: description || null },
      },
    )
    return answer<{ name: string; description: string | null }>(
      updatePool,
      POOL_TYPENAMES.pool,
      'Saving the pool',
    )
  })
  if (!result.ok) return refused(result, form)
  revalidatePath('/pools')
  revalidatePath(`/pools/${poolId}`)
  return { ok: true, saved: result.value }
}

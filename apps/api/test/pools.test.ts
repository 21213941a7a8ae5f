import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

// Shared memory pools through GraphQL (issue 17), on both backends: spec 002's example (a
// researcher contributes, a coder reads, a reviewer is not in the pool), the permissions of every
// operation per role (reader, contributor, non-member, removed member, admin), the pool's hybrid
// search, the sync into an agent's own memory, and bad input named by field and limit.

const ERRORS = `... on Error { __typename code message } ... on ValidationError { issues { field message limit } }`
/** createPool and updatePool also answer CONFLICT (a name another pool has). */
const NAME_ERRORS = `${ERRORS} ... on ConflictError { field }`
const MEMBER = 'agentId role addedAt'
const POOL = `id name description createdAt memberCount memoryCount role members { ${MEMBER} }`
const MEMORY = 'id agentId content category importance metadata isCurrent'

const CREATE = `mutation($input: CreatePoolInput!) { createPool(input: $input) { __typename ... on MemoryPool { ${POOL} } ${NAME_ERRORS} } }`
const UPDATE = `mutation($input: UpdatePoolInput!) { updatePool(input: $input) { __typename ... on MemoryPool { ${POOL} } ${NAME_ERRORS} } }`
const DELETE = `mutation($id: ID!) { deletePool(id: $id) { __typename ... on DeletePoolPayload { id name deleted } ${ERRORS} } }`
const ADD = `mutation($poolId: ID!, $agentId: ID!, $role: PoolRole!) { addPoolMember(poolId: $poolId, agentId: $agentId, role: $role) { __typename ... on MemoryPool { ${POOL} } ${ERRORS} } }`
const REMOVE = `mutation($poolId: ID!, $agentId: ID!, $removeContributions: Boolean) { removePoolMember(poolId: $poolId, agentId: $agentId, removeContributions: $removeContributions) { __typename ... on MemoryPool { ${POOL} } ${ERRORS} } }`
const POOLS = `query($agentId: ID) { pools(agentId: $agentId) { __typename ... on QueryPoolsSuccess { data { ${POOL} } } ${ERRORS} } }`
const GET = `query($id: ID!) { pool(id: $id) { __typename ... on MemoryPool { ${POOL} } ${ERRORS} } }`
const MEMORIES = `query($poolId: ID!, $first: Int, $after: String) { poolMemories(poolId: $poolId, first: $first, after: $after) { __typename ... on PoolMemoryPage { totalCount pageInfo { hasNextPage endCursor } memories { contributorAgentId memory { ${MEMORY} } } } ${ERRORS} } }`
const QUERY = `query($poolId: ID!, $query: String!, $limit: Int) { queryPool(poolId: $poolId, query: $query, limit: $limit) { __typename ... on PoolQueryResult { poolId hits { score contributorAgentId memory { ${MEMORY} } } } ${ERRORS} } }`
const CONTRIBUTE = `mutation($input: ContributeToPoolInput!) { contributeToPool(input: $input) { __typename ... on PoolContribution { poolId contributorAgentId outcome similarity memory { ${MEMORY} } duplicateOf { id } superseded { id } } ${ERRORS} } }`
const REMOVE_MEMORY = `mutation($poolId: ID!, $memoryId: ID!) { removePoolMemory(poolId: $poolId, memoryId: $memoryId) { __typename ... on PoolMemory { contributorAgentId memory { id content } } ${ERRORS} } }`
const SYNC = `mutation($poolId: ID!, $agentId: ID) { syncPoolToAgent(poolId: $poolId, agentId: $agentId) { __typename ... on PoolSync { poolId agentId stored duplicates superseded memories { ${MEMORY} } } ${ERRORS} } }`
const OWN_MEMORIES = `query($agentId: ID) { memories(agentId: $agentId) { ... on QueryMemoriesConnection { totalCount edges { node { id content metadata } } } } }`

const SHADERS = 'WebGPU requires WGSL shaders, not GLSL'

describe('shared memory pools through GraphQL: roles, search, sync, limits', () => {
  let t: TestApp
  const keys: Record<string, string> = {}

  beforeAll(async () => {
    t = await createTestApp()
    for (const id of ['researcher', 'coder', 'reviewer']) keys[id] = await createAgentKey(t, id)
  })
  afterAll(async () => {
    await t?.close()
  })

  const gql = (query: string, variables: Record<string, unknown> = {}, as?: string) =>
    t.gql(query, variables, as)
  /** A pool of spec 002's example: the researcher contributes, the coder reads. */
  const technicalDocs = async (name: string) => {
    const r = await gql(CREATE, {
      input: {
        name,
        description: 'What the team learnt',
        members: [
          { agentId: 'researcher', role: 'CONTRIBUTOR' },
          { agentId: 'coder', role: 'READER' },
        ],
      },
    })
    expect(r.data.createPool.__typename, JSON.stringify(r)).toBe('MemoryPool')
    return r.data.createPool as { id: string; name: string }
  }
  const contribute = async (
    poolId: string,
    content: string,
    as: string,
    extra: Record<string, unknown> = {},
  ) => {
    const r = await gql(CONTRIBUTE, { input: { poolId, content, category: 'FACT', ...extra } }, as)
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined()
    return r.data.contributeToPool
  }

  it('spec 002’s example: the researcher contributes, the coder finds it with the pool’s hybrid search', async () => {
    const pool = await technicalDocs('technical-docs')
    const stored = await contribute(pool.id, SHADERS, keys.researcher as string, {
      source: 'MDN documentation',
    })
    expect(stored).toMatchObject({
      __typename: 'PoolContribution',
      outcome: 'STORED',
      contributorAgentId: 'researcher',
    })
    expect(stored.memory.metadata).toEqual({ source: 'MDN documentation' })
    await contribute(pool.id, 'Compute shaders run in workgroups of invocations', keys.researcher as string)
    await contribute(pool.id, 'The office coffee machine is on the third floor', keys.researcher as string)
    // The same fact again is the pool's verification's DUPLICATE, as for an agent's own memories.
    const again = await contribute(pool.id, SHADERS, keys.researcher as string)
    expect(again).toMatchObject({ outcome: 'DUPLICATE', duplicateOf: { id: stored.memory.id } })

    const found = await gql(
      QUERY,
      { poolId: pool.id, query: 'how do shaders work in WebGPU?', limit: 2 },
      keys.coder,
    )
    expect(found.data.queryPool.__typename, JSON.stringify(found)).toBe('PoolQueryResult')
    const hits = found.data.queryPool.hits as { memory: { content: string }; contributorAgentId: string }[]
    expect(hits[0]).toMatchObject({ memory: { content: SHADERS }, contributorAgentId: 'researcher' })
    expect(hits.map((h) => h.memory.content)).not.toContain('The office coffee machine is on the third floor')

    const listed = await gql(MEMORIES, { poolId: pool.id, first: 2 }, keys.coder)
    expect(listed.data.poolMemories).toMatchObject({ totalCount: 3, pageInfo: { hasNextPage: true } })
    const next = await gql(
      MEMORIES,
      { poolId: pool.id, first: 2, after: listed.data.poolMemories.pageInfo.endCursor },
      keys.coder,
    )
    expect(next.data.poolMemories.memories).toHaveLength(1)
    expect((await gql(GET, { id: pool.id }, keys.coder)).data.pool).toMatchObject({
      role: 'READER',
      memberCount: 2,
      memoryCount: 3,
    })
  })

  it('syncs a pool into a member’s own memory once, with its provenance, and never into another agent', async () => {
    const pool = await technicalDocs('sync-docs')
    await contribute(pool.id, 'Rust borrows are checked at compile time', keys.researcher as string)
    const first = await gql(SYNC, { poolId: pool.id }, keys.coder)
    expect(first.data.syncPoolToAgent).toMatchObject({ agentId: 'coder', stored: 1, duplicates: 0 })
    expect(first.data.syncPoolToAgent.memories[0]).toMatchObject({
      agentId: 'coder',
      metadata: { provenance: `pool:${pool.id}` },
    })
    const second = await gql(SYNC, { poolId: pool.id }, keys.coder)
    expect(second.data.syncPoolToAgent).toMatchObject({ stored: 0, duplicates: 1, memories: [] })
    // The coder's key cannot sync into the researcher's memory; an admin key may, for a member.
    const other = await gql(SYNC, { poolId: pool.id, agentId: 'researcher' }, keys.coder)
    expect(other.data.syncPoolToAgent.code).toBe('FORBIDDEN')
    const admin = await gql(SYNC, { poolId: pool.id, agentId: 'reviewer' })
    expect(admin.data.syncPoolToAgent).toMatchObject({ __typename: 'NotFoundError' })
    const own = await gql(OWN_MEMORIES, {}, keys.coder)
    expect(own.data.memories.edges.map((e: { node: { content: string } }) => e.node.content)).toContain(
      'Rust borrows are checked at compile time',
    )
  })

  it('permissions of every operation: reader, contributor, non-member, removed member, admin', async () => {
    const pool = await technicalDocs('permissions')
    const mine = await contribute(pool.id, 'Postgres VACUUM reclaims dead tuples', keys.researcher as string)
    const code = (r: { data: Record<string, { __typename: string; code?: string }> }) => {
      const value = Object.values(r.data)[0] as { __typename: string; code?: string }
      return value.code ?? 'OK'
    }
    const reads = (as: string | undefined) =>
      Promise.all([
        gql(GET, { id: pool.id }, as),
        gql(MEMORIES, { poolId: pool.id }, as),
        gql(QUERY, { poolId: pool.id, query: 'vacuum' }, as),
        gql(SYNC, { poolId: pool.id }, as),
      ])
    // A reader reads and syncs, but contributes nothing and removes nothing.
    expect((await reads(keys.coder)).map(code)).toEqual(['OK', 'OK', 'OK', 'OK'])
    expect(
      code(
        await gql(CONTRIBUTE, { input: { poolId: pool.id, content: 'x y z', category: 'FACT' } }, keys.coder),
      ),
    ).toBe('FORBIDDEN')
    expect(code(await gql(REMOVE_MEMORY, { poolId: pool.id, memoryId: mine.memory.id }, keys.coder))).toBe(
      'FORBIDDEN',
    )
    // A non-member sees nothing: the pool does not exist for it.
    expect((await reads(keys.reviewer)).map(code)).toEqual([
      'NOT_FOUND',
      'NOT_FOUND',
      'NOT_FOUND',
      'NOT_FOUND',
    ])
    expect(
      code(
        await gql(
          CONTRIBUTE,
          { input: { poolId: pool.id, content: 'x y z', category: 'FACT' } },
          keys.reviewer,
        ),
      ),
    ).toBe('NOT_FOUND')
    expect(code(await gql(REMOVE_MEMORY, { poolId: pool.id, memoryId: mine.memory.id }, keys.reviewer))).toBe(
      'NOT_FOUND',
    )
    expect(
      (await gql(POOLS, {}, keys.reviewer)).data.pools.data.map((p: { id: string }) => p.id),
    ).not.toContain(pool.id)
    // Only admin keys manage pools and membership.
    for (const [query, variables] of [
      [CREATE, { input: { name: 'mine' } }],
      [UPDATE, { input: { id: pool.id, name: 'renamed' } }],
      [DELETE, { id: pool.id }],
      [ADD, { poolId: pool.id, agentId: 'reviewer', role: 'CONTRIBUTOR' }],
      [REMOVE, { poolId: pool.id, agentId: 'coder' }],
    ] as const)
      expect(code(await gql(query, variables, keys.researcher))).toBe('FORBIDDEN')
    // Promoted, the coder contributes on its very next request; removed, it reads nothing on the next.
    expect(code(await gql(ADD, { poolId: pool.id, agentId: 'coder', role: 'CONTRIBUTOR' }))).toBe('OK')
    const coders = await contribute(
      pool.id,
      'Index scans skip the heap when visibility allows',
      keys.coder as string,
    )
    expect(coders.outcome).toBe('STORED')
    expect(code(await gql(REMOVE, { poolId: pool.id, agentId: 'coder', removeContributions: true }))).toBe(
      'OK',
    )
    expect((await reads(keys.coder)).map(code)).toEqual(['NOT_FOUND', 'NOT_FOUND', 'NOT_FOUND', 'NOT_FOUND'])
    const left = await gql(MEMORIES, { poolId: pool.id })
    expect(
      left.data.poolMemories.memories.map((m: { contributorAgentId: string }) => m.contributorAgentId),
    ).toEqual(['researcher'])
    // The contributor removes its own memory; the admin key sees and removes anything.
    expect(
      code(await gql(REMOVE_MEMORY, { poolId: pool.id, memoryId: mine.memory.id }, keys.researcher)),
    ).toBe('OK')
    expect((await reads(undefined)).slice(0, 3).map(code)).toEqual(['OK', 'OK', 'OK'])
    expect((await gql(POOLS, {})).data.pools.data.map((p: { name: string }) => p.name)).toContain(
      'permissions',
    )
    expect(
      (await gql(POOLS, { agentId: 'researcher' })).data.pools.data.map((p: { name: string }) => p.name),
    ).toContain('permissions')
  })

  it('an admin key contributes as a named contributor; pools stay out of agent lists and every-agent memory lists', async () => {
    const pool = await technicalDocs('admin-contributions')
    const asAdmin = await gql(CONTRIBUTE, {
      input: { poolId: pool.id, agentId: 'researcher', content: 'HTTP/3 runs over QUIC', category: 'FACT' },
    })
    expect(asAdmin.data.contributeToPool).toMatchObject({
      outcome: 'STORED',
      contributorAgentId: 'researcher',
    })
    const named = await gql(CONTRIBUTE, {
      input: { poolId: pool.id, content: 'QUIC uses UDP', category: 'FACT' },
    })
    expect(named.data.contributeToPool.issues).toEqual([expect.objectContaining({ field: 'agentId' })])
    const agents = await gql(`{ agents { id } }`)
    expect(agents.data.agents.map((a: { id: string }) => a.id).sort()).toEqual([
      'coder',
      'researcher',
      'reviewer',
    ])
    const all = await gql(OWN_MEMORIES, {})
    expect(all.data.memories.edges.map((e: { node: { content: string } }) => e.node.content)).not.toContain(
      'HTTP/3 runs over QUIC',
    )
  })

  it('refuses bad input naming the field and the limit, and a taken name (CONFLICT on name)', async () => {
    await technicalDocs('limits')
    const taken = await gql(CREATE, { input: { name: 'limits' } })
    expect(taken.data.createPool).toMatchObject({ __typename: 'ConflictError', field: 'name' })
    const long = await gql(CREATE, { input: { name: 'n'.repeat(101) } })
    expect(long.data.createPool.issues).toEqual([expect.objectContaining({ field: 'name', limit: '100' })])
    const blank = await gql(CREATE, { input: { name: '   ' } })
    expect(blank.data.createPool.issues).toEqual([expect.objectContaining({ field: 'name', limit: '1' })])
    const description = await gql(CREATE, { input: { name: 'described', description: 'd'.repeat(2_001) } })
    expect(description.data.createPool.issues).toEqual([
      expect.objectContaining({ field: 'description', limit: '2000' }),
    ])
    const pool = (await gql(POOLS, {})).data.pools.data.find((p: { name: string }) => p.name === 'limits')
    const limit = await gql(QUERY, { poolId: pool.id, query: 'x', limit: 51 }, keys.coder)
    expect(limit.data.queryPool.issues).toEqual([expect.objectContaining({ field: 'limit', limit: '50' })])
    const content = await gql(
      CONTRIBUTE,
      { input: { poolId: pool.id, content: 'x'.repeat(10_001), category: 'FACT' } },
      keys.researcher,
    )
    expect(content.data.contributeToPool.issues).toEqual([
      expect.objectContaining({ field: 'content', limit: '10000' }),
    ])
    const renamed = await gql(UPDATE, { input: { id: pool.id, name: 'limits-renamed', description: null } })
    expect(renamed.data.updatePool).toMatchObject({ name: 'limits-renamed', description: null })
    const ghost = await gql(ADD, { poolId: pool.id, agentId: 'nobody', role: 'READER' })
    expect(ghost.data.addPoolMember.code).toBe('NOT_FOUND')
  })

  it('deleting a pool removes its memories from every store', async () => {
    const pool = await technicalDocs('short-lived')
    await contribute(pool.id, 'Temporary knowledge about caches', keys.researcher as string)
    const deleted = await gql(DELETE, { id: pool.id })
    expect(deleted.data.deletePool).toMatchObject({ id: pool.id, deleted: true })
    expect((await gql(GET, { id: pool.id })).data.pool.code).toBe('NOT_FOUND')
    // The storage agent ends like a deleted agent: no row, index entry, vector or cache of it remains.
    const report = await t.app.services.lifecycle.report(`pool:${pool.id}`)
    expect(report.stores.filter((s) => s.count > 0)).toEqual([])
    expect(report.stores.map((s) => s.store)).toContain('MemoryItem')
  })
})

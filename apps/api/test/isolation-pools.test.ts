import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'
import { ISOLATION_PARTS } from './isolation-parts.ts'

// Shared memory pools (issue 17): agent A's key pointed at every pool operation with agent B's
// data — B's own pool (A is no member), B's memories in a pool they share (A reads it), and B's
// own memory — reads nothing it may not and changes nothing. B's side is fingerprinted before and
// compared after.

const ERRORS = `... on Error { __typename code message }`
const POOL = 'id name description memberCount memoryCount members { agentId role } '
const POOL_MEMORIES = `memories { contributorAgentId memory { id content updatedAt } }`

/** Everything of B's the pools touch, as the operator reads it. */
const FINGERPRINT = `query($own: ID!, $shared: ID!) {
  own: pool(id: $own) { ... on MemoryPool { ${POOL} } }
  shared: pool(id: $shared) { ... on MemoryPool { ${POOL} } }
  ownMemories: poolMemories(poolId: $own, first: 100) { ... on PoolMemoryPage { totalCount ${POOL_MEMORIES} } }
  sharedMemories: poolMemories(poolId: $shared, first: 100) { ... on PoolMemoryPage { totalCount ${POOL_MEMORIES} } }
  pools(agentId: "agent-b") { ... on QueryPoolsSuccess { data { id } } }
  memories(agentId: "agent-b") { ... on QueryMemoriesConnection { totalCount edges { node { id content updatedAt } } } }
}`

/** One case per root field: the query, its variables (filled from the seeded ids) and what A must get. */
const CASES: Record<
  string,
  { query: string; variables: (ids: Ids) => Record<string, unknown>; expect: string }[]
> = {
  pools: [
    {
      query: `query { pools { __typename ... on QueryPoolsSuccess { data { id } } ${ERRORS} } }`,
      variables: () => ({}),
      expect: 'ONLY_SHARED',
    },
    {
      query: `query { pools(agentId: "agent-b") { __typename ${ERRORS} } }`,
      variables: () => ({}),
      expect: 'FORBIDDEN',
    },
  ],
  pool: [
    {
      query: `query($id: ID!) { pool(id: $id) { __typename ${ERRORS} } }`,
      variables: (ids) => ({ id: ids.ownPool }),
      expect: 'NOT_FOUND',
    },
  ],
  poolMemories: [
    {
      query: `query($id: ID!) { poolMemories(poolId: $id) { __typename ${ERRORS} } }`,
      variables: (ids) => ({ id: ids.ownPool }),
      expect: 'NOT_FOUND',
    },
  ],
  queryPool: [
    {
      query: `query($id: ID!) { queryPool(poolId: $id, query: "secret") { __typename ${ERRORS} } }`,
      variables: (ids) => ({ id: ids.ownPool }),
      expect: 'NOT_FOUND',
    },
  ],
  contributeToPool: [
    {
      query: `mutation($id: ID!) { contributeToPool(input: { poolId: $id, content: "injected by A", category: FACT }) { __typename ${ERRORS} } }`,
      variables: (ids) => ({ id: ids.ownPool }),
      expect: 'NOT_FOUND',
    },
    {
      query: `mutation($id: ID!) { contributeToPool(input: { poolId: $id, agentId: "agent-b", content: "injected as B", category: FACT }) { __typename ${ERRORS} } }`,
      variables: (ids) => ({ id: ids.sharedPool }),
      expect: 'FORBIDDEN',
    },
  ],
  removePoolMemory: [
    {
      query: `mutation($id: ID!, $memoryId: ID!) { removePoolMemory(poolId: $id, memoryId: $memoryId) { __typename ${ERRORS} } }`,
      variables: (ids) => ({ id: ids.sharedPool, memoryId: ids.sharedMemory }),
      expect: 'FORBIDDEN',
    },
    {
      query: `mutation($id: ID!, $memoryId: ID!) { removePoolMemory(poolId: $id, memoryId: $memoryId) { __typename ${ERRORS} } }`,
      variables: (ids) => ({ id: ids.ownPool, memoryId: ids.ownMemory }),
      expect: 'NOT_FOUND',
    },
  ],
  syncPoolToAgent: [
    {
      query: `mutation($id: ID!) { syncPoolToAgent(poolId: $id, agentId: "agent-b") { __typename ${ERRORS} } }`,
      variables: (ids) => ({ id: ids.sharedPool }),
      expect: 'FORBIDDEN',
    },
    {
      query: `mutation($id: ID!) { syncPoolToAgent(poolId: $id) { __typename ${ERRORS} } }`,
      variables: (ids) => ({ id: ids.ownPool }),
      expect: 'NOT_FOUND',
    },
  ],
  createPool: [
    {
      query: `mutation { createPool(input: { name: "a-takes-b", members: [{ agentId: "agent-b", role: READER }] }) { __typename ${ERRORS} } }`,
      variables: () => ({}),
      expect: 'FORBIDDEN',
    },
  ],
  updatePool: [
    {
      query: `mutation($id: ID!) { updatePool(input: { id: $id, name: "renamed by A" }) { __typename ${ERRORS} } }`,
      variables: (ids) => ({ id: ids.ownPool }),
      expect: 'FORBIDDEN',
    },
  ],
  deletePool: [
    {
      query: `mutation($id: ID!) { deletePool(id: $id) { __typename ${ERRORS} } }`,
      variables: (ids) => ({ id: ids.ownPool }),
      expect: 'FORBIDDEN',
    },
  ],
  addPoolMember: [
    {
      query: `mutation($id: ID!) { addPoolMember(poolId: $id, agentId: "agent-a", role: CONTRIBUTOR) { __typename ${ERRORS} } }`,
      variables: (ids) => ({ id: ids.ownPool }),
      expect: 'FORBIDDEN',
    },
  ],
  removePoolMember: [
    {
      query: `mutation($id: ID!) { removePoolMember(poolId: $id, agentId: "agent-b", removeContributions: true) { __typename ${ERRORS} } }`,
      variables: (ids) => ({ id: ids.sharedPool }),
      expect: 'FORBIDDEN',
    },
  ],
}

interface Ids {
  ownPool: string
  sharedPool: string
  ownMemory: string
  sharedMemory: string
}

describe("shared memory pools: an agent key never reads or changes another agent's pool data", () => {
  let t: TestApp
  let keyA: string
  let keyB: string
  const ids: Ids = { ownPool: '', sharedPool: '', ownMemory: '', sharedMemory: '' }

  beforeAll(async () => {
    t = await createTestApp()
    keyA = await createAgentKey(t, 'agent-a')
    keyB = await createAgentKey(t, 'agent-b')
    const create = async (name: string, members: { agentId: string; role: string }[]) => {
      const r = await t.gql(
        `mutation($input: CreatePoolInput!) { createPool(input: $input) { ... on MemoryPool { id } } }`,
        { input: { name, members } },
      )
      return r.data.createPool.id as string
    }
    ids.ownPool = await create('b-only', [{ agentId: 'agent-b', role: 'CONTRIBUTOR' }])
    ids.sharedPool = await create('shared', [
      { agentId: 'agent-a', role: 'READER' },
      { agentId: 'agent-b', role: 'CONTRIBUTOR' },
    ])
    const contribute = async (poolId: string, content: string) => {
      const r = await t.gql(
        `mutation($input: ContributeToPoolInput!) { contributeToPool(input: $input) { ... on PoolContribution { memory { id } } } }`,
        { input: { poolId, content, category: 'FACT' } },
        keyB,
      )
      return r.data.contributeToPool.memory.id as string
    }
    ids.ownMemory = await contribute(ids.ownPool, 'B secret: the launch code is 0000')
    ids.sharedMemory = await contribute(ids.sharedPool, 'Shared: WebGPU requires WGSL shaders')
    await t.gql(
      `mutation { createMemory(input: { content: "B's own memory", category: FACT }) { __typename } }`,
      {},
      keyB,
    )
  })
  afterAll(async () => {
    await t?.close()
  })

  it('covers exactly the pool fields it registers in ISOLATION_PARTS', () => {
    expect(Object.keys(CASES).sort()).toEqual([...(ISOLATION_PARTS.pools ?? [])].sort())
  })

  it.each(Object.entries(CASES))(
    '%s: agent A gets nothing of B and changes nothing of B',
    async (field, cases) => {
      const fingerprint = async () =>
        (await t.gql(FINGERPRINT, { own: ids.ownPool, shared: ids.sharedPool })).data
      const before = await fingerprint()
      expect(before.ownMemories.totalCount).toBe(1)
      for (const c of cases) {
        const r = await t.gql(c.query, c.variables(ids), keyA)
        expect(r.errors, JSON.stringify(r.errors)).toBeUndefined()
        const answer = r.data[field]
        if (c.expect === 'ONLY_SHARED') {
          expect(answer.data.map((p: { id: string }) => p.id)).toEqual([ids.sharedPool])
          continue
        }
        expect(answer, `${field}: ${JSON.stringify(answer)}`).toMatchObject({ code: c.expect })
        // A refusal names nothing of B's.
        expect(JSON.stringify(answer)).not.toContain('launch code')
      }
      expect(await fingerprint()).toEqual(before)
    },
  )
})

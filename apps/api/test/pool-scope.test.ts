import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

// Pools as a search scope and a context section (issue 17), on both backends: a member's search
// (POOLS) and memoryContext (POOLS, "Shared knowledge") include the pool's memory with its
// poolId; a non-member's and a removed member's (from the next request on) do not; another
// agent's key never gets them by naming the member.

const ERRORS = `... on Error { __typename code message }`
const SEARCH = `query($input: SearchInput!) { search(input: $input) { __typename
  ... on SearchResult { hits { scope id poolId text memory { id content } } } ${ERRORS} } }`
const CONTEXT = `query($input: MemoryContextInput!) { memoryContext(input: $input) { __typename
  ... on MemoryContext { text cached sections { section title budgetTokens included } } ${ERRORS} } }`
const CREATE_POOL = `mutation($input: CreatePoolInput!) { createPool(input: $input) { __typename ... on MemoryPool { id } ${ERRORS} } }`
const CONTRIBUTE = `mutation($input: ContributeToPoolInput!) { contributeToPool(input: $input) { __typename ... on PoolContribution { outcome memory { id } } ${ERRORS} } }`
const REMOVE_MEMBER = `mutation($poolId: ID!, $agentId: ID!) { removePoolMember(poolId: $poolId, agentId: $agentId) { __typename ${ERRORS} } }`
const CREATE_MEMORY = `mutation($i: CreateMemoryInput!) { createMemory(input: $i) { __typename ... on MemoryWrite { outcome memory { id } } } }`

const SHADERS = 'WebGPU requires WGSL shaders, not GLSL'
const QUERY = 'how do WebGPU shaders work?'

describe('pools as a search scope and a memory-context section', () => {
  let t: TestApp
  const keys: Record<string, string> = {}
  let poolId = ''
  let memoryId = ''

  beforeAll(async () => {
    t = await createTestApp()
    for (const id of ['researcher', 'coder', 'leaver', 'outsider']) keys[id] = await createAgentKey(t, id)
    const pool = await t.gql(CREATE_POOL, {
      input: {
        name: 'technical-docs',
        members: [
          { agentId: 'researcher', role: 'CONTRIBUTOR' },
          { agentId: 'coder', role: 'READER' },
          { agentId: 'leaver', role: 'READER' },
        ],
      },
    })
    poolId = pool.data.createPool.id
    const shared = await t.gql(
      CONTRIBUTE,
      { input: { poolId, content: SHADERS, category: 'FACT' } },
      keys.researcher,
    )
    expect(shared.data.contributeToPool.outcome, JSON.stringify(shared)).toBe('STORED')
    memoryId = shared.data.contributeToPool.memory.id
    // Each agent's own memory on the topic: POOLS is merged beside MEMORIES, not instead of it.
    for (const id of ['coder', 'leaver', 'outsider'])
      await t.gql(
        CREATE_MEMORY,
        { i: { content: `${id} writes WebGPU shaders for the renderer`, category: 'FACT' } },
        keys[id],
      )
  })
  afterAll(async () => {
    await t?.close()
  })

  const search = async (as: string, input: Record<string, unknown> = {}) => {
    const r = await t.gql(SEARCH, { input: { query: QUERY, scopes: ['MEMORIES', 'POOLS'], ...input } }, as)
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined()
    return r.data.search
  }
  const context = async (as: string, input: Record<string, unknown> = {}) => {
    const r = await t.gql(CONTEXT, { input: { query: QUERY, ...input } }, as)
    expect(r.errors, JSON.stringify(r.errors)).toBeUndefined()
    return r.data.memoryContext
  }
  type Section = { section: string; title: string; budgetTokens: number | null; included: string[] }
  const poolSection = (c: { sections: Section[] }) => c.sections.find((s) => s.section === 'POOLS')
  type Hit = { scope: string; id: string; poolId: string | null; memory: { content: string } | null }

  it('a member’s search with POOLS has the pool’s memory, naming its pool, beside its own memories', async () => {
    const found = await search(keys.coder as string)
    const hits = found.hits as Hit[]
    expect(hits).toContainEqual(
      expect.objectContaining({
        scope: 'POOLS',
        id: memoryId,
        poolId,
        memory: expect.objectContaining({ content: SHADERS }),
      }),
    )
    expect(hits).toContainEqual(expect.objectContaining({ scope: 'MEMORIES', poolId: null }))
    // Without POOLS the same search has no pool hit: pools are searched only when asked.
    const own = (await search(keys.coder as string, { scopes: ['MEMORIES'] })).hits as Hit[]
    expect(own.filter((h) => h.poolId !== null || h.id === memoryId)).toEqual([])
    // A contributor reads what it contributed there too.
    expect((await search(keys.researcher as string)).hits).toContainEqual(
      expect.objectContaining({ scope: 'POOLS', poolId }),
    )
  })

  it('a member’s memoryContext has the Shared knowledge section with the pool’s memory, within its budget', async () => {
    const c = await context(keys.coder as string)
    expect(poolSection(c)).toEqual({
      section: 'POOLS',
      title: 'Shared knowledge',
      budgetTokens: 500,
      included: [`pool_memory:${memoryId}`],
    })
    expect(c.text).toContain(SHADERS)
    // Only when asked for among chosen sections, like the others.
    const without = await context(keys.coder as string, { sections: ['RELEVANT_MEMORIES'] })
    expect(poolSection(without)).toBeUndefined()
    expect(without.text).not.toContain(SHADERS)
  })

  it('a non-member’s search and context have none of it; another agent’s key cannot ask for a member', async () => {
    const hits = (await search(keys.outsider as string)).hits as Hit[]
    expect(hits.filter((h) => h.scope === 'POOLS' || h.poolId !== null)).toEqual([])
    const c = await context(keys.outsider as string)
    expect(poolSection(c)?.included).toEqual([])
    expect(c.text).not.toContain(SHADERS)
    // The outsider's key naming the coder: FORBIDDEN, as for any other agent's data.
    const named = await t.gql(
      SEARCH,
      { input: { query: QUERY, scopes: ['POOLS'], agentId: 'coder' } },
      keys.outsider,
    )
    expect(named.data.search.__typename).toBe('ForbiddenError')
    expect(JSON.stringify(named.data)).not.toContain(SHADERS)
    const namedContext = await t.gql(CONTEXT, { input: { query: QUERY, agentId: 'coder' } }, keys.outsider)
    expect(namedContext.data.memoryContext.__typename).toBe('ForbiddenError')
    expect(JSON.stringify(namedContext.data)).not.toContain(SHADERS)
  })

  it('a removed member’s next search and context (even one cached seconds before) have none of it', async () => {
    expect(((await search(keys.leaver as string)).hits as Hit[]).map((h) => h.poolId)).toContain(poolId)
    const before = await context(keys.leaver as string)
    expect(before.text).toContain(SHADERS)
    const removed = await t.gql(REMOVE_MEMBER, { poolId, agentId: 'leaver' })
    expect(removed.data.removePoolMember.__typename, JSON.stringify(removed)).toBe('MemoryPool')
    const hits = (await search(keys.leaver as string)).hits as Hit[]
    expect(hits.filter((h) => h.scope === 'POOLS')).toEqual([])
    expect(hits.length).toBeGreaterThan(0)
    // Same request within the context cache's 10 s: not served from the cache with the pool in it.
    const after = await context(keys.leaver as string)
    expect(after.cached).toBe(false)
    expect(after.text).not.toContain(SHADERS)
    expect(poolSection(after)?.included).toEqual([])
  })
})

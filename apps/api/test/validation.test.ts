import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

// Bad input gets a typed error naming the field and the limit, and changes nothing.
describe('bad input is rejected with typed errors and nothing is written', () => {
  let t: TestApp
  let key: string

  const counts = async () => ({
    sessions: await t.db.session.count(),
    messages: await t.db.message.count(),
    entries: await t.db.memoryEntry.count(),
    vectors: await t.db.memoryVector.count(),
    knowledge: await t.db.knowledge.count(),
    parameters: await t.db.adaptiveParameter.findMany({ orderBy: [{ agentId: 'asc' }, { key: 'asc' }] }),
  })

  beforeAll(async () => {
    t = await createTestApp()
    key = await createAgentKey(t, 'agent-v')
    await t.gql(
      `mutation { addMessage(input: { conversationId: "c1", role: USER, content: "seed" }) { ... on Message { id } } }`,
      {},
      key,
    )
    const [entry] = await t.db.memoryEntry.findMany()
    await t.gql(
      `mutation($id: ID!) { upsertEmbedding(entryId: $id, vector: [1, 2, 3]) { __typename } }`,
      { id: String(entry!.id) },
      key,
    )
  })
  afterAll(() => t.close())

  const rejects = async (
    query: string,
    variables: Record<string, unknown>,
    field: string,
    limit?: string,
  ) => {
    const before = await counts()
    const result = await t.gql(query, variables, key)
    expect(result.errors).toBeUndefined()
    const payload = Object.values(result.data)[0] as any
    expect(payload.__typename).toBe('ValidationError')
    const issue = payload.issues.find((i: any) => i.field === field)
    expect(issue, JSON.stringify(payload.issues)).toBeTruthy()
    if (limit !== undefined) expect(issue.limit).toBe(limit)
    expect(await counts()).toEqual(before)
  }
  const ERR = `__typename ... on ValidationError { message issues { field message limit } }`

  it('content over the size limit', async () => {
    await rejects(
      `mutation($c: String!) { addMessage(input: { conversationId: "c1", role: USER, content: $c }) { ${ERR} } }`,
      { c: 'x'.repeat(100_001) },
      'message.content',
      '100000',
    )
  })

  it('content at the size limit is accepted', async () => {
    const result = await t.gql(
      `mutation($c: String!) { addMessage(input: { conversationId: "c1", role: USER, content: $c }) { __typename } }`,
      { c: 'x'.repeat(100_000) },
      key,
    )
    expect(result.data.addMessage.__typename).toBe('Message')
  })

  it('a batch with one bad message writes none of it', async () => {
    await rejects(
      `mutation($m: [MessageInput!]!) { addMessages(input: { conversationId: "c2", messages: $m }) { ${ERR} } }`,
      {
        m: [
          { role: 'USER', content: 'fine' },
          { role: 'USER', content: '' },
        ],
      },
      'messages.1.content',
      '1',
    )
  })

  it('metadata over its size limit', async () => {
    await rejects(
      `mutation($m: JSON) { addMessage(input: { conversationId: "c1", role: USER, content: "x", metadata: $m }) { ${ERR} } }`,
      { m: { blob: 'x'.repeat(16_384) } },
      'message.metadata',
      '16384',
    )
  })

  it('malformed conversation id', async () => {
    await rejects(
      `mutation { addMessage(input: { conversationId: "has spaces", role: USER, content: "x" }) { ${ERR} } }`,
      {},
      'conversationId',
      '128',
    )
  })

  it('malformed message id', async () => {
    await rejects(
      `mutation { compressMessages(input: { conversationId: "c1", olderThanId: "abc" }) { ${ERR} } }`,
      {},
      'olderThanId',
    )
  })

  it('unknown enum values are refused by the schema', async () => {
    const result = await t.gql(
      `mutation { addMessage(input: { conversationId: "c1", role: ROBOT, content: "x" }) { __typename } }`,
      {},
      key,
    )
    expect(result.errors?.[0]?.message).toMatch(/ROBOT/)
    const category = await t.gql(
      `mutation { storeKnowledge(input: { category: GOSSIP, key: "k", value: "v" }) { __typename } }`,
      {},
      key,
    )
    expect(category.errors?.[0]?.message).toMatch(/GOSSIP/)
  })

  it('vector dimension mismatch names the expected dimension', async () => {
    const [entry] = await t.db.memoryEntry.findMany({ orderBy: { id: 'desc' } })
    await rejects(
      `mutation($id: ID!) { upsertEmbedding(entryId: $id, vector: [1, 2]) { ${ERR} } }`,
      { id: String(entry!.id) },
      'vector',
      '3',
    )
    await rejects(`{ searchByVector(vector: [1, 2, 3, 4]) { ${ERR} } }`, {}, 'vector', '3')
  })

  it('search limit out of range', async () => {
    await rejects(`{ searchByVector(vector: [1, 2, 3], limit: 101) { ${ERR} } }`, {}, 'limit', '100')
  })

  it('optimizer parameters outside their ranges', async () => {
    const admin = async (input: string, field: string) => {
      const before = await counts()
      const result = await t.gql(
        `mutation { setOptimizerParameters(agentId: "agent-v", input: ${input}) { ${ERR} } }`,
      )
      expect(result.data.setOptimizerParameters.__typename).toBe('ValidationError')
      expect(result.data.setOptimizerParameters.issues.map((i: any) => i.field)).toContain(field)
      expect(await counts()).toEqual(before)
    }
    await admin('{ compressionTrigger: 0.9 }', 'parameters.compressionTrigger')
    await admin('{ compressionTrigger: 0.3 }', 'parameters.compressionTrigger')
    await admin('{ fullMessageWindow: 51 }', 'parameters.fullMessageWindow')
    await admin('{ fullMessageWindow: 9 }', 'parameters.fullMessageWindow')
    await admin('{ minRelevance: 0.71 }', 'parameters.minRelevance')
    await admin('{ minRelevance: 0.1 }', 'parameters.minRelevance')
    const ok = await t.gql(
      `mutation { setOptimizerParameters(agentId: "agent-v", input: { compressionTrigger: 0.85, fullMessageWindow: 10, minRelevance: 0.15 }) { __typename ... on OptimizerParameters { compressionTrigger fullMessageWindow minRelevance } } }`,
    )
    expect(ok.data.setOptimizerParameters).toMatchObject({
      compressionTrigger: 0.85,
      fullMessageWindow: 10,
      minRelevance: 0.15,
    })
  })

  it('knowledge confidence and key limits', async () => {
    await rejects(
      `mutation { storeKnowledge(input: { category: DOMAIN, key: "k", value: "v", confidence: 1.5 }) { ${ERR} } }`,
      {},
      'confidence',
    )
    await rejects(
      `mutation($k: String!) { storeKnowledge(input: { category: DOMAIN, key: $k, value: "v" }) { ${ERR} } }`,
      { k: 'k'.repeat(257) },
      'key',
      '256',
    )
  })

  it('token budget out of range', async () => {
    await rejects(
      `{ contextWindow(conversationId: "c1", budget: { compressionTriggerRatio: 1.5 }) { ${ERR} } }`,
      {},
      'budget.compressionTriggerRatio',
    )
  })

  it('page size above the maximum', async () => {
    const result = await t.gql(`{ memoryEntries(first: 201) { ${ERR} } }`, {}, key)
    expect(result.data.memoryEntries.__typename).toBe('ValidationError')
    expect(result.data.memoryEntries.issues[0]).toMatchObject({ field: 'first', limit: '200' })
  })

  it('a timestamp that is not ISO 8601', async () => {
    const result = await t.gql(
      `mutation { addMessage(input: { conversationId: "c1", role: USER, content: "x", timestamp: "May 8" }) { __typename } }`,
      {},
      key,
    )
    expect(result.errors?.[0]?.message).toMatch(/ISO 8601/)
  })

  it('too many aliases are refused before running', async () => {
    const aliases = Array.from({ length: 30 }, (_, i) => `a${i}: viewer { role }`).join(' ')
    const tooMany = await t.gql(`{ ${aliases} }`, {}, key)
    expect(tooMany.errors?.[0]?.message).toMatch(/alias/i)
    const fine = await t.gql(`{ a1: viewer { role } a2: viewer { role } }`, {}, key)
    expect(fine.errors).toBeUndefined()
  })

  it('requests without a valid key are refused with 401', async () => {
    const none = await t.gql(`{ viewer { role } }`, {}, null)
    expect(none.status).toBe(401)
    const wrong = await t.gql(`{ viewer { role } }`, {}, 'engram_not-a-real-key')
    expect(wrong.status).toBe(401)
  })
})

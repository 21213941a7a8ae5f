import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ADMIN_KEY, createAgentKey, createTestApp, type TestApp } from './helpers.ts'

const PATH = '/learning/optimizer/status'

describe('GET /learning/optimizer/status (spec 000)', () => {
  let t: TestApp
  let key: string
  let otherKey: string

  const get = (query = '', authorization: string | null = `Bearer ${key}`, method = 'GET') =>
    t.app.yoga.fetch(`http://yoga${PATH}${query}`, {
      method,
      headers: authorization ? { authorization } : {},
    })

  beforeAll(async () => {
    t = await createTestApp()
    key = await createAgentKey(t, 'rest-a')
    otherKey = await createAgentKey(t, 'rest-b')
    for (const content of ['ok', 'the deploy failed with error 502 at https://example.com', 'thanks'])
      await t.gql(
        `mutation($c: String!) { addMessage(input: { conversationId: "c", role: USER, content: $c }) { __typename } }`,
        { c: content },
        key,
      )
    await t.gql('mutation { runOptimizer { __typename } }', {}, key)
    await t.gql('mutation { runOptimizer { __typename } }', {}, key)
  })
  afterAll(() => t.close())

  it('answers the spec’s JSON shape with the same figures as GraphQL’s optimizerStatus', async () => {
    const response = await get()
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toContain('application/json')
    const body = await response.json()
    expect(Object.keys(body).sort()).toEqual([
      'avgSavingsPerRun',
      'currentParameters',
      'totalOptimizations',
      'totalTokensSaved',
    ])
    expect(Object.keys(body.currentParameters).sort()).toEqual([
      'compressionTrigger',
      'fullMessageWindow',
      'minRelevance',
      'targetUsageRatio',
    ])
    const graphql = await t.gql(
      `{ optimizerStatus { ... on OptimizerStatus { totalOptimizations totalTokensSaved avgSavingsPerRun
         currentParameters { compressionTrigger fullMessageWindow minRelevance targetUsageRatio } } } }`,
      {},
      key,
    )
    expect(body).toEqual(graphql.data.optimizerStatus)
    expect(body.totalOptimizations).toBe(2)
  })

  it('reports the key’s own agent: another agent with no runs sees zero', async () => {
    const body = await (await get('', `Bearer ${otherKey}`)).json()
    expect(body.totalOptimizations).toBe(0)
  })

  it('refuses a missing or unknown key with 401, and another agent’s id with 403', async () => {
    expect((await get('', null)).status).toBe(401)
    const unknown = await get('', 'Bearer engram_not-a-key')
    expect(unknown.status).toBe(401)
    expect((await unknown.json()).error.code).toBe('UNAUTHENTICATED')
    const forbidden = await get('?agentId=rest-b')
    expect(forbidden.status).toBe(403)
    expect((await forbidden.json()).error.code).toBe('FORBIDDEN')
  })

  it('lets an admin key name the agent, and says what is missing or wrong', async () => {
    const named = await get('?agentId=rest-a', `Bearer ${ADMIN_KEY}`)
    expect(named.status).toBe(200)
    expect((await named.json()).totalOptimizations).toBe(2)
    const unnamed = await get('', `Bearer ${ADMIN_KEY}`)
    expect(unnamed.status).toBe(400)
    expect((await unnamed.json()).error).toMatchObject({
      code: 'VALIDATION',
      issues: [expect.objectContaining({ field: 'agentId' })],
    })
    const missing = await get('?agentId=nobody', `Bearer ${ADMIN_KEY}`)
    expect(missing.status).toBe(404)
    expect((await missing.json()).error).toMatchObject({ code: 'NOT_FOUND', resource: 'Agent', id: 'nobody' })
  })

  it('serves GET only', async () => {
    const response = await get('', `Bearer ${key}`, 'POST')
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('GET')
  })
})

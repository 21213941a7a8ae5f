import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers.ts'

// Depth and cost limits come from configuration; a small app shows both sides of each.
// (graphql-armor counts the inline fragment as a level: `atLimit` is depth 5, `pastLimit` 6.)
describe('query depth and cost limits', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp({ maxDepth: 5, maxCost: 60 })
    await t.gql(`mutation { createAgent(id: "agent-q") { __typename } }`)
  })
  afterAll(() => t.close())

  const atLimit = `{ session(agentId: "agent-q", conversationId: "c") { ... on Session { messages { edges { cursor } } } } }`
  const pastLimit = `{ session(agentId: "agent-q", conversationId: "c") { ... on Session { messages { edges { node { id } } } } } }`

  it('accepts a query at the depth limit and refuses one past it', async () => {
    expect((await t.gql(atLimit)).errors).toBeUndefined()
    const refused = await t.gql(pastLimit)
    expect(refused.errors?.[0]?.message).toMatch(/depth/i)
  })

  it('refuses a query whose cost is over the limit', async () => {
    const fields = Array.from({ length: 12 }, (_, i) => `a${i}: agents { id name createdAt }`).join(' ')
    const refused = await t.gql(`{ ${fields} }`)
    expect(refused.errors?.[0]?.message).toMatch(/cost/i)
    expect((await t.gql(`{ agents { id } }`)).errors).toBeUndefined()
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers.ts'

// Depth and cost limits come from configuration; a small app shows both sides of each.
// (graphql-armor counts the inline fragment as a level: `atLimit` is depth 5, `pastLimit` 6.)
describe('query depth, cost and alias limits', () => {
  let t: TestApp
  // Default cost limit: twenty aliased lists stay under it.
  let aliasApp: TestApp
  beforeAll(async () => {
    t = await createTestApp({ maxDepth: 5, maxCost: 60 })
    aliasApp = await createTestApp()
    await t.gql(`mutation { createAgent(id: "agent-q") { __typename } }`)
  })
  afterAll(async () => {
    await t.close()
    await aliasApp.close()
  })

  const atLimit = `{ session(agentId: "agent-q", conversationId: "c") { ... on Session { messages { edges { cursor } } } } }`
  const pastLimit = `{ session(agentId: "agent-q", conversationId: "c") { ... on Session { messages { edges { node { id } } } } } }`

  it('accepts a query at the depth limit and refuses one past it', async () => {
    expect((await t.gql(atLimit)).errors).toBeUndefined()
    const refused = await t.gql(pastLimit)
    expect(refused.errors?.[0]?.message).toMatch(/depth/i)
    // Plain and typed: the armor plugin's own wording starts "Syntax Error:".
    expect(refused.errors?.[0]?.message).not.toMatch(/^Syntax Error/)
    expect(refused.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_DEEP')
  })

  it('refuses a query whose cost is over the limit', async () => {
    const fields = Array.from({ length: 12 }, (_, i) => `a${i}: agents { id name createdAt }`).join(' ')
    const refused = await t.gql(`{ ${fields} }`)
    expect(refused.errors?.[0]?.message).toMatch(/^Query Cost limit of 60 exceeded, found \d+\.$/)
    expect(refused.errors?.[0]?.extensions?.code).toBe('QUERY_TOO_COMPLEX')
    expect((await t.gql(`{ agents { id } }`)).errors).toBeUndefined()
  })

  it('refuses more than 20 aliases with a typed error', async () => {
    const aliases = (n: number) => Array.from({ length: n }, (_, i) => `a${i}: agents { id }`).join(' ')
    expect((await aliasApp.gql(`{ ${aliases(20)} }`)).errors).toBeUndefined()
    const refused = await aliasApp.gql(`{ ${aliases(21)} }`)
    expect(refused.errors?.[0]?.message).toMatch(/aliases/i)
    expect(refused.errors?.[0]?.message).not.toMatch(/^Syntax Error/)
    expect(refused.errors?.[0]?.extensions?.code).toBe('TOO_MANY_ALIASES')
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'
import { ISOLATION_PARTS } from './isolation-parts.ts'

// Issue 17's metrics part: its one root field, serverMetrics, is the operator's. Agent A's key
// gets FORBIDDEN and nothing of the server's figures (B's counts among them); nothing of B changes.

const cases: { name: string; query: string; expect: (data: any) => void }[] = [
  {
    name: 'serverMetrics (admin only)',
    query: `{ serverMetrics { __typename ... on ServerMetrics { samples { counts { messages } } } } }`,
    expect: (d) => expect(d.serverMetrics).toEqual({ __typename: 'ForbiddenError' }),
  },
  {
    name: 'serverMetrics with a window (admin only)',
    query: `{ serverMetrics(windowSeconds: 60) { __typename ... on ServerMetrics { current { counts { agents } } } } }`,
    expect: (d) => expect(d.serverMetrics).toEqual({ __typename: 'ForbiddenError' }),
  },
]

describe('isolation: metrics', () => {
  let t: TestApp
  let keyA: string
  let keyB: string

  /** B's data as the operator reads it, and the /metrics guard for A's key. */
  const fingerprint = async () =>
    (
      await t.gql(`{ sessions(agentId: "agent-b", first: 50) { ... on QuerySessionsConnection { edges { node { id messageCount } } } }
        memories(agentId: "agent-b", first: 50) { ... on QueryMemoriesConnection { edges { node { id content } } } } }`)
    ).data

  beforeAll(async () => {
    t = await createTestApp({ env: { ENGRAM_EXTRACTION: 'off' } })
    keyA = await createAgentKey(t, 'agent-a')
    keyB = await createAgentKey(t, 'agent-b')
    await t.gql(
      `mutation { addMessage(input: { conversationId: "b1", role: USER, content: "B's secret plan" }) { __typename } }`,
      {},
      keyB,
    )
    await t.gql(
      `mutation { createMemory(input: { agentId: "agent-b", content: "B keeps the key under the mat", category: FACT }) { __typename } }`,
    )
    await t.app.sampler.sample()
    // The fingerprint sees B's data: an unchanged one after a case means something.
    const seen = JSON.stringify(await fingerprint())
    expect(seen).toContain('under the mat')
    expect(seen).toMatch(/"messageCount":1/)
  })
  afterAll(() => t.close())

  it('covers exactly the fields the part registers', () => {
    const covered = new Set(cases.map((c) => /\{\s*(\w+)/.exec(c.query)?.[1]))
    expect([...covered].sort()).toEqual([...(ISOLATION_PARTS.metrics ?? [])].sort())
  })

  it.each(cases)('$name', async (c) => {
    const before = await fingerprint()
    const result = await t.gql(c.query, {}, keyA)
    expect(result.errors).toBeUndefined()
    c.expect(result.data)
    expect(await fingerprint()).toEqual(before)
  })

  it('refuses /metrics to an agent key (401): the figures are the whole server’s', async () => {
    const response = await t.app.yoga.fetch('http://yoga/metrics', {
      headers: { authorization: `Bearer ${keyA}` },
    })
    expect(response.status).toBe(401)
    expect(await response.text()).not.toContain('engram_messages')
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

describe('knowledge over GraphQL', () => {
  let t: TestApp
  let key: string
  const idOf: Record<string, string> = {}
  beforeAll(async () => {
    t = await createTestApp()
    key = await createAgentKey(t, 'agent-k')
    await createAgentKey(t, 'agent-other')
    for (const [k, confidence] of [
      ['alpha', 0.9],
      ['beta', 0.5],
      ['gamma', 0.12],
    ] as const) {
      const r = await t.gql(
        `mutation($k: String!, $c: Float) { storeKnowledge(input: { category: DOMAIN, key: $k, value: "v", confidence: $c }) { ... on Knowledge { id } } }`,
        { k, c: confidence },
        key,
      )
      idOf[k] = r.data.storeKnowledge.id
    }
    await t.gql(
      `mutation { storeKnowledge(input: { agentId: "agent-other", category: DOMAIN, key: "theirs", value: "v" }) { __typename } }`,
    )
  })
  afterAll(() => t.close())

  const list = async (args: string, asKey: string = key) =>
    (
      await t.gql(
        `{ knowledge(${args}) { ... on QueryKnowledgeConnection { totalCount edges { node { key agentId prunedAtNextDecay } } } } }`,
        {},
        asKey,
      )
    ).data.knowledge

  it('repeats a store into the same fact with more confidence', async () => {
    const again = await t.gql(
      `mutation { storeKnowledge(input: { category: DOMAIN, key: "beta", value: "v2" }) { ... on Knowledge { id value confidence storeCount } } }`,
      {},
      key,
    )
    expect(again.data.storeKnowledge).toEqual({ id: idOf.beta, value: 'v2', confidence: 0.6, storeCount: 2 })
  })

  it('sorts by confidence, by use and by last use', async () => {
    expect((await list('first: 10')).edges.map((e: any) => e.node.key)).toEqual(['alpha', 'beta', 'gamma'])
    await t.gql(`mutation($id: ID!) { recordKnowledgeUse(id: $id) { __typename } }`, { id: idOf.gamma }, key)
    t.clock.advance(1000)
    await t.gql(`mutation($id: ID!) { recordKnowledgeUse(id: $id) { __typename } }`, { id: idOf.beta }, key)
    await t.gql(`mutation($id: ID!) { recordKnowledgeUse(id: $id) { __typename } }`, { id: idOf.beta }, key)
    expect((await list('first: 10, orderBy: USES')).edges.map((e: any) => e.node.key)).toEqual([
      'beta',
      'gamma',
      'alpha',
    ])
    expect((await list('first: 10, orderBy: LAST_USED')).edges.map((e: any) => e.node.key)).toEqual([
      'beta',
      'gamma',
      'alpha',
    ])
  })

  it('marks facts the next decay would prune', async () => {
    const nodes = (await list('first: 10')).edges.map((e: any) => e.node)
    expect(nodes.find((n: any) => n.key === 'gamma').prunedAtNextDecay).toBe(true) // 0.17 - 0.1 < 0.1
    expect(nodes.find((n: any) => n.key === 'alpha').prunedAtNextDecay).toBe(false)
  })

  it('lets an admin list every agent, or one', async () => {
    const all = (await t.gql(`{ knowledge(first: 10) { ... on QueryKnowledgeConnection { totalCount } } }`))
      .data.knowledge
    expect(all.totalCount).toBe(4)
    const theirs = await t.gql(
      `{ knowledge(agentId: "agent-other") { ... on QueryKnowledgeConnection { totalCount } } }`,
    )
    expect(theirs.data.knowledge.totalCount).toBe(1)
  })

  it('deletes several facts at once, or none when one is missing', async () => {
    const bad = await t.gql(
      `mutation($ids: [ID!]!) { deleteKnowledgeItems(ids: $ids) { __typename } }`,
      { ids: [idOf.alpha, '99999'] },
      key,
    )
    expect(bad.data.deleteKnowledgeItems.__typename).toBe('NotFoundError')
    expect((await list('first: 10')).totalCount).toBe(3)
    const ok = await t.gql(
      `mutation($ids: [ID!]!) { deleteKnowledgeItems(ids: $ids) { ... on DeleteKnowledgeItemsPayload { deletedCount } } }`,
      { ids: [idOf.alpha, idOf.beta] },
      key,
    )
    expect(ok.data.deleteKnowledgeItems.deletedCount).toBe(2)
    expect((await list('first: 10')).edges.map((e: any) => e.node.key)).toEqual(['gamma'])
  })

  it('refuses an update onto an existing key, naming the field', async () => {
    await t.gql(
      `mutation { storeKnowledge(input: { category: DOMAIN, key: "delta", value: "v" }) { __typename } }`,
      {},
      key,
    )
    const r = await t.gql(
      `mutation($id: ID!) { updateKnowledge(input: { id: $id, key: "delta" }) { __typename ... on ValidationError { issues { field } } } }`,
      { id: idOf.gamma },
      key,
    )
    expect(r.data.updateKnowledge).toEqual({ __typename: 'ValidationError', issues: [{ field: 'key' }] })
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'
import { ISOLATION_PARTS } from './isolation-parts.ts'

// Maintenance (issue 17 §4) is the operator's: agent A's key reaches none of it, neither B's
// retention setting nor the runs (which remove every agent's data), and changes nothing.

const cases: { field: string; query: string; vars?: Record<string, unknown> }[] = [
  { field: 'maintenanceStatus', query: `{ maintenanceStatus { __typename } }` },
  { field: 'maintenanceRuns', query: `{ maintenanceRuns(first: 10) { __typename } }` },
  {
    field: 'maintenanceSettings',
    query: `query($a: ID!) { maintenanceSettings(agentId: $a) { __typename } }`,
    vars: { a: 'agent-b' },
  },
  {
    field: 'runMaintenance',
    query: `mutation($a: ID) { runMaintenance(dryRun: false, agentId: $a) { __typename } }`,
    vars: { a: 'agent-b' },
  },
  {
    field: 'updateMaintenanceSettings',
    query: `mutation($a: ID!) { updateMaintenanceSettings(agentId: $a, retentionDays: 1) { __typename } }`,
    vars: { a: 'agent-b' },
  },
]

describe('isolation: maintenance', () => {
  let t: TestApp
  let keyA: string
  beforeAll(async () => {
    t = await createTestApp()
    keyA = await createAgentKey(t, 'agent-a')
    const keyB = await createAgentKey(t, 'agent-b')
    await t.gql(
      `mutation { addMessage(input: { conversationId: "b-chat", role: USER, content: "B's own words" }) { __typename } }`,
      {},
      keyB,
    )
    await t.gql(
      `mutation { updateMaintenanceSettings(agentId: "agent-b", retentionDays: 30) { __typename } }`,
    )
    await t.gql(`mutation { runMaintenance(dryRun: true, agentId: "agent-b") { __typename } }`)
  })
  afterAll(() => t.close())

  /** B's maintenance state and data as the operator reads them. */
  const fingerprint = async () => ({
    settings: (
      await t.gql(
        `{ maintenanceSettings(agentId: "agent-b") { ... on AgentMaintenanceSettings { retentionDays } } }`,
      )
    ).data,
    runs: (
      await t.gql(
        `{ maintenanceRuns(first: 50) { ... on MaintenanceRunPage { totalCount runs { id status } } } }`,
      )
    ).data,
    messages: await t.db.message.findMany({ where: { agentId: 'agent-b' }, orderBy: { id: 'asc' } }),
  })

  it('covers exactly the fields registered for the part', () => {
    expect(cases.map((c) => c.field).sort()).toEqual([...(ISOLATION_PARTS.maintenance ?? [])].sort())
  })

  it.each(cases)('$field: FORBIDDEN to an agent key, nothing of B read or changed', async (c) => {
    const before = await fingerprint()
    const result = await t.gql(c.query, c.vars ?? {}, keyA)
    expect(result.errors).toBeUndefined()
    expect(result.data[c.field]).toEqual({ __typename: 'ForbiddenError' })
    expect(await fingerprint()).toEqual(before)
  })
})

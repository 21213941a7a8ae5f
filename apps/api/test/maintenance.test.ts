import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, ManualClock, TEST_BACKEND, type TestApp } from './helpers.ts'

const DAY = 86_400_000

const ADD_MANY = `mutation($c: String!, $m: [MessageInput!]!) {
  addMessages(input: { conversationId: $c, messages: $m }) { __typename ... on Error { message } } }`
const PIN = `mutation($input: CreateMemoryInput!) { createMemory(input: $input) { __typename ... on MemoryWrite { memory { id } } } }`
const RUN_FIELDS = `__typename ... on MaintenanceRun { id trigger dryRun status slot agentId finishedAt bytesReclaimed error
  removed { conversations messages summaries } steps { name detail } }
  ... on ValidationError { issues { field limit } } ... on Error { message }`
const RUN = `mutation($dry: Boolean, $a: ID) { runMaintenance(dryRun: $dry, agentId: $a) { ${RUN_FIELDS} } }`
const STATUS = `{ maintenanceStatus { __typename ... on MaintenanceOverview { nextScheduledRun nextScheduledRunDry
  rules { enabled retentionDays cleanupInterval compactionEnabled vectorRebuildDeletedShare }
  lastRuns { id trigger dryRun } } ... on Error { message } } }`
const RUNS = `query($first: Int, $offset: Int) { maintenanceRuns(first: $first, offset: $offset) { __typename
  ... on MaintenanceRunPage { totalCount runs { id trigger dryRun status slot } }
  ... on ValidationError { issues { field limit } } } }`
const SETTINGS = `mutation($a: ID!, $d: Int) { updateMaintenanceSettings(agentId: $a, retentionDays: $d) { __typename
  ... on AgentMaintenanceSettings { agentId retentionDays effectiveRetentionDays }
  ... on ValidationError { issues { field limit } } ... on NotFoundError { resource } } }`

const turns = (conversation: string, count: number, timestamp?: string) =>
  Array.from({ length: count }, (_, i) => ({
    role: 'USER',
    content: `In ${conversation} the zephyrine note number ${i} was written down.`,
    ...(timestamp ? { timestamp } : {}),
  }))

/**
 * Issue 17 §4 through GraphQL on a real store. A message's age is counted from its `createdAt`,
 * which the store writes from the server's clock: the test's clock starts at the real time and is
 * moved forward, so "stored N days ago" is the clock's distance from when the rows were written.
 */
describe('maintenance: retention through GraphQL', () => {
  let t: TestApp
  let key: string
  let otherKey: string
  beforeAll(async () => {
    t = await createTestApp({ clock: new ManualClock(new Date()) })
    key = await createAgentKey(t, 'keeper')
    otherKey = await createAgentKey(t, 'other')
  })
  afterAll(() => t.close())

  const sessions = async (agentId: string) =>
    (await t.db.session.findMany({ where: { agentId }, orderBy: { conversationId: 'asc' } })).map(
      (s) => s.conversationId,
    )

  it('keeps one day under the retention and removes one day over it; imported timestamps, pins and promotions do not count', async () => {
    // An imported history: its turns say 2019, Engram stored them now.
    expect(
      (await t.gql(ADD_MANY, { c: 'imported', m: turns('imported', 3, '2019-05-01T10:00:00Z') }, key)).data
        .addMessages.__typename,
    ).toBe('AddMessagesPayload')
    await t.gql(ADD_MANY, { c: 'chat', m: turns('chat', 2) }, key)
    await t.gql(ADD_MANY, { c: 'pinned-source', m: turns('pinned-source', 1) }, key)
    await t.gql(ADD_MANY, { c: 'promoted', m: turns('promoted', 1) }, key)
    await t.gql(ADD_MANY, { c: 'chat', m: turns('chat', 1) }, otherKey)
    // A pinned memory citing its conversation keeps it.
    const pin = await t.gql(
      PIN,
      {
        input: {
          content: 'The zephyrine notes matter.',
          category: 'FACT',
          pinned: true,
          sourceConversationId: 'pinned-source',
        },
      },
      key,
    )
    expect(pin.data.createMemory.__typename).toBe('MemoryWrite')
    // The optimizer promotes an entry by changing its type; done here directly (its rules are
    // tested on their own) so the case is exact.
    const promoted = await t.db.session.findFirstOrThrow({
      where: { agentId: 'keeper', conversationId: 'promoted' },
    })
    await t.db.memoryEntry.updateMany({ where: { sessionId: promoted.id }, data: { type: 'long_term' } })

    expect((await t.gql(SETTINGS, { a: 'keeper', d: 10 })).data.updateMaintenanceSettings).toEqual({
      __typename: 'AgentMaintenanceSettings',
      agentId: 'keeper',
      retentionDays: 10,
      effectiveRetentionDays: 10,
    })

    // Nine days on (one day under ten): nothing goes, though the imported turns say 2019.
    t.clock.advance(9 * DAY)
    const under = (await t.gql(RUN, { dry: false })).data.runMaintenance
    expect(under).toMatchObject({
      status: 'SUCCEEDED',
      dryRun: false,
      removed: { conversations: 0, messages: 0 },
    })
    expect(await sessions('keeper')).toEqual(['chat', 'imported', 'pinned-source', 'promoted'])

    // Eleven days on (one day over): a dry run counts and removes nothing.
    t.clock.advance(2 * DAY)
    const dry = (await t.gql(RUN, { dry: true })).data.runMaintenance
    expect(dry).toMatchObject({
      trigger: 'MANUAL',
      dryRun: true,
      status: 'SUCCEEDED',
      bytesReclaimed: null,
      removed: { conversations: 2, messages: 5 },
    })
    expect(await sessions('keeper')).toHaveLength(4)

    t.clock.advance(60_000)
    const run = (await t.gql(RUN, { dry: false })).data.runMaintenance
    expect(run).toMatchObject({
      status: 'SUCCEEDED',
      dryRun: false,
      removed: { conversations: 2, messages: 5 },
    })
    expect(run.error).toBeNull()
    expect(run.bytesReclaimed).toBeGreaterThanOrEqual(0)
    expect(run.steps.map((s: { name: string }) => s.name)).toEqual(
      TEST_BACKEND === 'sqlite'
        ? ['retention', 'summary retention', 'full-text merge', 'vacuum', 'WAL checkpoint', 'vector indexes']
        : ['retention', 'summary retention', 'vacuum'],
    )
    expect(await sessions('keeper')).toEqual(['pinned-source', 'promoted'])
    // Through the deletion path: the messages, their entries and what search finds are gone.
    expect(await t.db.message.count({ where: { agentId: 'keeper', content: { contains: 'In chat' } } })).toBe(
      0,
    )
    expect(
      await t.db.memoryEntry.count({ where: { agentId: 'keeper', content: { contains: 'In imported' } } }),
    ).toBe(0)
    const found = await t.gql(
      `query($input: SearchInput!) { search(input: $input) { ... on SearchResult { hits { message { content } } } } }`,
      { input: { query: 'zephyrine note', limit: 20 } },
      key,
    )
    const contents = found.data.search.hits
      .map((h: { message: { content: string } }) => h.message.content)
      .join('\n')
    expect(contents).toMatch(/In (pinned-source|promoted)/)
    expect(contents).not.toMatch(/In (chat|imported)/)
    // The other agent follows the server's 90 days.
    expect(await sessions('other')).toEqual(['chat'])

    const runs = (await t.gql(RUNS, { first: 10 })).data.maintenanceRuns
    expect(runs.totalCount).toBe(3)
    expect(runs.runs.map((r: { dryRun: boolean }) => r.dryRun)).toEqual([false, true, false])
  })

  it('runs for one named agent only, and refuses an agent that does not exist', async () => {
    await t.gql(ADD_MANY, { c: 'later', m: turns('later', 1) }, otherKey)
    t.clock.advance(100 * DAY)
    const one = (await t.gql(RUN, { dry: true, a: 'keeper' })).data.runMaintenance
    expect(one).toMatchObject({ agentId: 'keeper', removed: { conversations: 0 } })
    expect((await t.gql(RUN, { dry: true, a: 'nobody' })).data.runMaintenance).toMatchObject({
      __typename: 'NotFoundError',
    })
    const all = (await t.gql(RUN, { dry: true })).data.runMaintenance
    expect(all.removed.conversations).toBe(2)
  })

  it('validates the settings and the page, naming the field and the limit', async () => {
    expect((await t.gql(SETTINGS, { a: 'keeper', d: 0 })).data.updateMaintenanceSettings).toEqual({
      __typename: 'ValidationError',
      issues: [{ field: 'retentionDays', limit: '1' }],
    })
    expect((await t.gql(SETTINGS, { a: 'keeper', d: 36_501 })).data.updateMaintenanceSettings).toEqual({
      __typename: 'ValidationError',
      issues: [{ field: 'retentionDays', limit: '36500' }],
    })
    expect((await t.gql(SETTINGS, { a: 'nobody', d: 5 })).data.updateMaintenanceSettings).toMatchObject({
      __typename: 'NotFoundError',
    })
    expect((await t.gql(RUNS, { first: 101 })).data.maintenanceRuns).toEqual({
      __typename: 'ValidationError',
      issues: [{ field: 'first', limit: '100' }],
    })
    // null returns the agent to the server's retention.
    expect((await t.gql(SETTINGS, { a: 'keeper', d: null })).data.updateMaintenanceSettings).toMatchObject({
      retentionDays: null,
      effectiveRetentionDays: 90,
    })
  })

  it('answers an agent key FORBIDDEN', async () => {
    expect((await t.gql(STATUS, {}, key)).data.maintenanceStatus.__typename).toBe('ForbiddenError')
    expect((await t.gql(RUN, { dry: true }, key)).data.runMaintenance.__typename).toBe('ForbiddenError')
  })
})

describe('maintenance: the schedule across two processes on one database', () => {
  let first: TestApp
  let second: TestApp
  beforeAll(async () => {
    first = await createTestApp({ clock: new ManualClock(new Date('2026-03-01T01:00:00Z')) })
    second = await createTestApp({
      sameStoreAs: first,
      clock: new ManualClock(new Date('2026-03-01T01:00:00Z')),
    })
  })
  afterAll(async () => {
    await second.close()
    await first.close()
  })

  it('runs each cron slot once, the first one after the upgrade dry', async () => {
    const status = (await first.gql(STATUS)).data.maintenanceStatus
    expect(status).toMatchObject({
      nextScheduledRun: '2026-03-01T03:00:00.000Z',
      nextScheduledRunDry: true,
      rules: { enabled: true, retentionDays: 90, cleanupInterval: '0 3 * * *', compactionEnabled: true },
      lastRuns: [],
    })
    expect(await first.app.services.maintenance.tick()).toBeNull()
    for (const app of [first, second]) app.clock.set('2026-03-01T03:00:30Z')
    // Each process has its own in-process lease: only the slot's unique row keeps it to one run.
    const ran = (
      await Promise.all([first.app.services.maintenance.tick(), second.app.services.maintenance.tick()])
    ).filter((run) => run !== null)
    expect(ran).toHaveLength(1)
    expect(ran[0]).toMatchObject({ trigger: 'SCHEDULED', dryRun: true, status: 'SUCCEEDED' })
    expect(await second.app.services.maintenance.tick()).toBeNull()

    for (const app of [first, second]) app.clock.set('2026-03-02T04:00:00Z')
    const next = (
      await Promise.all([second.app.services.maintenance.tick(), first.app.services.maintenance.tick()])
    ).filter((run) => run !== null)
    expect(next).toHaveLength(1)
    expect(next[0]).toMatchObject({ trigger: 'SCHEDULED', dryRun: false })
    const runs = (await second.gql(RUNS, {})).data.maintenanceRuns
    expect(runs.runs.map((r: { slot: string }) => r.slot)).toEqual([
      '2026-03-02T03:00:00.000Z',
      '2026-03-01T03:00:00.000Z',
    ])
    expect((await first.gql(STATUS)).data.maintenanceStatus).toMatchObject({
      nextScheduledRun: '2026-03-03T03:00:00.000Z',
      nextScheduledRunDry: false,
    })
  })
})

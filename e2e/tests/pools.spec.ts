import type { APIRequestContext, Page } from '@playwright/test'
import { createAgent, e, gql, literal, shot, signedInPage } from './api'
import { allowConsoleErrors, expect, test } from './fixtures'

// Shared memory pools (issue 17) in the dashboard against the real API: a pool is created in the
// browser with a role per agent; a contributor's memories arrive through the API as an agent would
// send them; the pool page lists them with their contributor, queries the pool, changes roles,
// adds and removes members, syncs the pool into a member's own memories (twice: the second stores
// nothing new), removes a memory and deletes the pool. Every change made in the browser is checked
// through the API, as an operator's script would see it.
const WRITER = 'pool-writer'
const READER = 'pool-reader'
const LATE = 'pool-late'
const POOL = 'support-knowledge'
const RENAMED = 'support-kb'

const POOL_FIELDS = 'id name description memoryCount members { agentId role }'

interface PoolView {
  id: string
  name: string
  description: string | null
  memoryCount: number
  members: { agentId: string; role: string }[]
}

/** Every pool, as the admin sees them. */
async function pools(request: APIRequestContext): Promise<PoolView[]> {
  const data = await gql(
    request,
    `query { pools { __typename ... on QueryPoolsSuccess { data { ${POOL_FIELDS} } } ... on Error { message } } }`,
  )
  expect(data.pools.message).toBeUndefined()
  return data.pools.data
}

async function poolNamed(request: APIRequestContext, name: string): Promise<PoolView | undefined> {
  return (await pools(request)).find((pool) => pool.name === name)
}

const membersOf = (pool: PoolView | undefined) =>
  Object.fromEntries((pool?.members ?? []).map((m) => [m.agentId, m.role]))

/** A memory contributed in an agent's name (an admin names the contributing agent). */
async function contribute(request: APIRequestContext, poolId: string, agentId: string, content: string) {
  const data = await gql(
    request,
    `mutation { contributeToPool(input: ${literal({ poolId, agentId, content, category: e('FACT'), importance: 0.8 })}) {
      __typename ... on PoolContribution { outcome contributorAgentId memory { id } } ... on Error { message }
    } }`,
  )
  expect(data.contributeToPool.message, data.contributeToPool.message).toBeUndefined()
  return data.contributeToPool as { outcome: string; memory: { id: string } }
}

/** The contents of an agent's own (current) memories. */
async function agentMemories(request: APIRequestContext, agentId: string): Promise<string[]> {
  const data = await gql(
    request,
    `query($a: ID) { memories(agentId: $a, first: 100) { ... on QueryMemoriesConnection { edges { node { content } } } } }`,
    { a: agentId },
  )
  return data.memories.edges.map((edge: { node: { content: string } }) => edge.node.content)
}

const REFUND = 'Refunds over 500 euros need a supervisor’s approval'
const SHIPPING = 'Express shipping to Norway takes three working days'

test.describe.configure({ mode: 'serial' })

let page: Page
let poolId: string

test.beforeAll(async ({ browser, request }) => {
  for (const agent of [WRITER, READER, LATE]) await createAgent(request, agent)
  page = await signedInPage(browser)
})

test.afterAll(async () => {
  await page?.close()
})

test('a pool is created in the browser with a role per agent', async ({ request }) => {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Pools' }).click()
  await expect(page.getByRole('heading', { name: 'Memory pools' })).toBeVisible()
  await expect(page.getByTestId('pools-empty')).toBeVisible()
  const form = page.getByRole('form', { name: 'Create a pool' })
  await form.getByLabel('Name').fill(POOL)
  await form.getByLabel('Description').fill('what the support agents know')
  await form.getByLabel(`Role of ${WRITER}`).selectOption('CONTRIBUTOR')
  await form.getByLabel(`Role of ${READER}`).selectOption('READER')
  await form.getByRole('button', { name: 'Create pool' }).click()
  await expect(form.getByRole('status')).toContainText(`Created ${POOL}`)

  const created = await poolNamed(request, POOL)
  expect(created).toMatchObject({ name: POOL, description: 'what the support agents know', memoryCount: 0 })
  expect(membersOf(created)).toEqual({ [WRITER]: 'CONTRIBUTOR', [READER]: 'READER' })
  poolId = (created as PoolView).id

  const row = page.getByTestId(`pool-${POOL}`)
  await expect(row.getByTestId('pool-members')).toHaveText('1 contributor, 1 reader')
  await expect(row.getByTestId('pool-memories')).toHaveText('0')

  // A second pool by the same name is refused in place (names are unique), and nothing is created.
  await form.getByLabel('Name').fill(POOL)
  await form.getByRole('button', { name: 'Create pool' }).click()
  await expect(form.getByRole('alert')).toBeVisible()
  expect((await pools(request)).filter((pool) => pool.name === POOL)).toHaveLength(1)
})

test('the pool page lists the memories with their contributor and queries the pool', async ({ request }) => {
  await contribute(request, poolId, WRITER, REFUND)
  await contribute(request, poolId, WRITER, SHIPPING)
  // The same memory again is a duplicate (the verification pipeline): the pool still holds two.
  expect((await contribute(request, poolId, WRITER, REFUND)).outcome).toBe('DUPLICATE')

  await page.goto('/pools')
  await expect(page.getByTestId(`pool-${POOL}`).getByTestId('pool-memories')).toHaveText('2')
  await page.getByRole('link', { name: POOL }).click()
  await expect(page.getByRole('heading', { name: POOL, level: 1 })).toBeVisible()
  const memories = page.getByRole('table', { name: 'Pool memories' })
  await expect(memories.getByRole('row')).toHaveCount(3)
  const refund = memories.getByRole('row').filter({ hasText: REFUND })
  await expect(refund.getByTestId('contributor')).toHaveText(WRITER)

  const query = page.getByRole('form', { name: 'Query the pool' })
  await query.getByLabel('Pool query').fill('how long does shipping to Norway take')
  await query.getByRole('button', { name: 'Search pool' }).click()
  const hits = page.getByRole('table', { name: 'Pool query results' })
  await expect(hits.getByRole('row').nth(1)).toContainText(SHIPPING)
  await expect(hits.getByRole('row').nth(1)).toContainText(WRITER)
  await shot(page, 'pool')
})

test('members are added, their roles changed and removed in the browser', async ({ request }) => {
  const add = page.getByRole('form', { name: 'Add a member' })
  await add.getByLabel('Agent to add').selectOption(LATE)
  await add.getByLabel('Role to give').selectOption('READER')
  await add.getByRole('button', { name: 'Add member' }).click()
  await expect(page.getByTestId(`member-${LATE}`)).toBeVisible()
  await expect.poll(async () => membersOf(await poolNamed(request, POOL))[LATE]).toBe('READER')

  await page.getByLabel(`Role of ${READER}`).selectOption('CONTRIBUTOR')
  await expect.poll(async () => membersOf(await poolNamed(request, POOL))[READER]).toBe('CONTRIBUTOR')
  await expect(page.getByTestId('pool-summary')).toContainText('2 contributors, 1 reader')

  await page.getByRole('button', { name: `Remove ${LATE}` }).click()
  await page.getByRole('button', { name: 'Confirm remove' }).click()
  await expect(page.getByTestId(`member-${LATE}`)).toHaveCount(0)
  expect(membersOf(await poolNamed(request, POOL))).toEqual({
    [WRITER]: 'CONTRIBUTOR',
    [READER]: 'CONTRIBUTOR',
  })
})

test('syncing copies the pool into a member’s memories once', async ({ request }) => {
  expect(await agentMemories(request, READER)).not.toContain(REFUND)
  const sync = page.getByRole('form', { name: 'Sync the pool to an agent' })
  await sync.getByLabel('Agent to sync').selectOption(READER)
  await sync.getByRole('button', { name: 'Sync' }).click()
  await expect(page.getByTestId('sync-result')).toHaveText(`Stored 2 new memories in ${READER}.`)
  const synced = await agentMemories(request, READER)
  expect(synced).toEqual(expect.arrayContaining([REFUND, SHIPPING]))

  // Idempotent: a second sync stores nothing new.
  await sync.getByRole('button', { name: 'Sync' }).click()
  await expect(page.getByTestId('sync-result')).toHaveText(
    `Stored 0 new memories in ${READER}; 2 were already there.`,
  )
  expect((await agentMemories(request, READER)).length).toBe(synced.length)
})

/** A pool's memories with their contributor, as the admin reads them. */
async function poolMemories(request: APIRequestContext, id: string) {
  const data = await gql(
    request,
    `query($p: ID!) { poolMemories(poolId: $p, first: 50) { __typename ... on PoolMemoryPage { totalCount memories { contributorAgentId memory { content } } } ... on Error { message } } }`,
    { p: id },
  )
  expect(data.poolMemories.message).toBeUndefined()
  return data.poolMemories.memories as { contributorAgentId: string | null; memory: { content: string } }[]
}

const WARRANTY = 'Warranty claims need the original receipt'

test('a memory contributed in the browser passes the pool’s verification', async ({ request }) => {
  const form = page.getByRole('form', { name: 'Contribute a memory' })
  await form.getByLabel('Contributor').selectOption(READER)
  await form.getByLabel('Content').fill(WARRANTY)
  await form.getByLabel('Importance').fill('0.7')
  await form.getByRole('button', { name: 'Contribute' }).click()
  await expect(page.getByTestId('contribute-outcome')).toHaveText('Stored.')
  const stored = (await poolMemories(request, poolId)).find((m) => m.memory.content === WARRANTY)
  expect(stored?.contributorAgentId).toBe(READER)
  const memories = page.getByRole('table', { name: 'Pool memories' })
  await expect(memories.getByRole('row').filter({ hasText: WARRANTY }).getByTestId('contributor')).toHaveText(
    READER,
  )

  // The same memory again is a duplicate: nothing new in the pool.
  await form.getByLabel('Content').fill(WARRANTY)
  await form.getByRole('button', { name: 'Contribute' }).click()
  await expect(page.getByTestId('contribute-outcome')).toHaveText('Already in the pool: nothing stored.')
  expect((await poolMemories(request, poolId)).filter((m) => m.memory.content === WARRANTY)).toHaveLength(1)

  // An importance out of range is refused beside its field, naming the limit's reason.
  await form.getByLabel('Content').fill('Gift cards never expire')
  await form.getByLabel('Importance').fill('7')
  await form.getByRole('button', { name: 'Contribute' }).click()
  await expect(page.getByTestId('error-importance')).toBeVisible()
  expect((await poolMemories(request, poolId)).map((m) => m.memory.content)).not.toContain(
    'Gift cards never expire',
  )
})

test('a memory and a member with its contributions are removed; the pool is renamed, then deleted', async ({
  request,
}) => {
  const memories = page.getByRole('table', { name: 'Pool memories' })
  const refund = memories.getByRole('row').filter({ hasText: REFUND })
  await refund.getByRole('button', { name: /^Remove memory / }).click()
  await refund.getByRole('button', { name: 'Confirm delete' }).click()
  await expect(memories.getByRole('row').filter({ hasText: REFUND })).toHaveCount(0)
  expect((await poolNamed(request, POOL))?.memoryCount).toBe(2)
  // The copy synced into the reader stays the reader's.
  expect(await agentMemories(request, READER)).toContain(REFUND)

  // Removing a member with its contributions takes what it contributed out of the pool.
  await page.getByRole('button', { name: `Remove ${READER}` }).click()
  await page.getByLabel('also remove the memories it contributed').check()
  await page.getByRole('button', { name: 'Confirm remove' }).click()
  await expect(page.getByTestId(`member-${READER}`)).toHaveCount(0)
  await expect(memories.getByRole('row').filter({ hasText: WARRANTY })).toHaveCount(0)
  expect(membersOf(await poolNamed(request, POOL))).toEqual({ [WRITER]: 'CONTRIBUTOR' })
  expect((await poolMemories(request, poolId)).map((m) => m.memory.content)).toEqual([SHIPPING])

  // Renamed, its description cleared (a blank one clears it), as the API then says.
  await page.getByText('Rename or describe').click()
  const edit = page.getByRole('form', { name: 'Edit the pool' })
  await edit.getByLabel('Name').fill(RENAMED)
  await edit.getByLabel('Description').fill('')
  await edit.getByRole('button', { name: 'Save' }).click()
  await expect(page.getByTestId('pool-saved')).toBeVisible()
  await expect(page.getByRole('heading', { name: RENAMED, level: 1 })).toBeVisible()
  expect(await poolNamed(request, RENAMED)).toMatchObject({ id: poolId, description: null })
  expect(await poolNamed(request, POOL)).toBeUndefined()

  await page.getByRole('button', { name: `Delete pool ${RENAMED}` }).click()
  await page.getByRole('button', { name: 'Confirm delete' }).click()
  await expect(page.getByRole('heading', { name: 'Memory pools' })).toBeVisible()
  await expect(page.getByTestId(`pool-${RENAMED}`)).toHaveCount(0)
  expect(await pools(request)).toEqual([])

  // The deleted pool's page says there is none (the API answers NOT_FOUND); Chromium logs the 404.
  allowConsoleErrors(/404/)
  await page.goto(`/pools/${poolId}`)
  await expect(page.getByRole('heading', { name: 'Not found' })).toBeVisible()
})

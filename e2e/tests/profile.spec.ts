import type { APIRequestContext, Page } from '@playwright/test'
import { createAgent, gql, shot, signedInPage } from './api'
import { expect, test } from './fixtures'

// The Profile page against the real API: regenerate, compare two versions, add and remove an
// override; each result read back through GraphQL.
const AGENT = 'profile-agent'
const USER = 'dana'
const OVERRIDE = 'Dana is vegetarian and never eats fish'

const SEEDS = [
  { category: 'FACT', content: 'Dana works as a nurse at the Charité in Berlin' },
  { category: 'PREFERENCE', content: 'Dana prefers window seats on long flights' },
  { category: 'SKILL', content: 'Dana speaks Portuguese and German fluently' },
]

interface Version {
  version: number
  content: string
  overrideIds: string[]
}

async function currentProfile(request: APIRequestContext): Promise<Version | null> {
  const data = await gql(
    request,
    `query($a: ID, $u: String) { userProfile(agentId: $a, userId: $u) { ... on UserProfile { current { version content overrideIds } } } }`,
    { a: AGENT, u: USER },
  )
  return data.userProfile.current
}

async function pinnedOf(
  request: APIRequestContext,
): Promise<{ id: string; content: string; userId: string }[]> {
  const data = await gql(
    request,
    `query($a: ID, $f: MemoryFilterInput) { memories(agentId: $a, filter: $f, first: 50) { ... on QueryMemoriesConnection { edges { node { id content userId } } } } }`,
    { a: AGENT, f: { pinned: true, userId: USER } },
  )
  return data.memories.edges.map((e: { node: { id: string; content: string; userId: string } }) => e.node)
}

test.describe.configure({ mode: 'serial' })

let page: Page

test.beforeAll(async ({ browser, request }) => {
  await createAgent(request, AGENT)
  for (const seed of SEEDS) {
    const data = await gql(
      request,
      `mutation($i: CreateMemoryInput!) { createMemory(input: $i) { ... on MemoryWrite { outcome } } }`,
      { i: { agentId: AGENT, userId: USER, ...seed } },
    )
    expect(data.createMemory.outcome).toBe('STORED')
  }
  page = await signedInPage(browser)
})

test.afterAll(async () => {
  await page?.close()
})

/** Clicks "Regenerate now" and returns the version the page says it wrote, checked against the API. */
async function regenerate(request: APIRequestContext): Promise<Version> {
  const before = (await currentProfile(request))?.version ?? 0
  await page.getByRole('button', { name: 'Regenerate now' }).click()
  const written = page.getByTestId('regenerated')
  // The previous click's "Version n written." may still show until this one answers.
  const shown = async () =>
    Number(
      ((await written.count()) ? await written.textContent() : '')?.match(/Version (\d+) written/)?.[1] ?? 0,
    )
  await expect.poll(shown, { timeout: 15_000 }).toBeGreaterThan(before)
  const version = await shown()
  const current = await currentProfile(request)
  expect(current?.version).toBe(version)
  // The page shows the new state: its current version is the one just written.
  await expect(page.getByTestId('current-version')).toContainText(`Version ${version}`)
  return current as Version
}

test('the page lists the user; Regenerate now writes a version the API returns', async ({ request }) => {
  await page.getByRole('link', { name: 'Profile', exact: true }).click()
  await expect(page.getByRole('heading', { name: 'Profile', exact: true })).toBeVisible()
  await page.getByLabel('Agent', { exact: true }).selectOption(AGENT)
  await expect(page).toHaveURL(new RegExp(`agent=${AGENT}`))
  // The users are those the agent's memories name, and the profile of memories naming none.
  const users = page.getByRole('form', { name: 'Choose the user' }).getByLabel('User')
  await expect(users.locator('option')).toHaveText([USER, /no user/])
  await users.selectOption(USER)
  await page.getByRole('button', { name: 'Show' }).click()
  await expect(page).toHaveURL(new RegExp(`user=${USER}`))

  const version = await regenerate(request)
  const text = page.getByRole('region', { name: /Current profile of dana/ })
  for (const seed of SEEDS) await expect(text).toContainText(seed.content)
  expect(version.content).toContain(SEEDS[0]?.content)
  await expect(page.getByRole('table', { name: 'Profile versions' }).getByTestId('version-row')).toHaveCount(
    version.version,
  )
  await shot(page, 'profile')
})

test('an override added on the page is a pinned memory; the next version shows it, the diff marks it', async ({
  request,
}) => {
  const before = await currentProfile(request)
  const form = page.getByRole('form', { name: 'Add an override' })
  await form.getByLabel('Content').fill(OVERRIDE)
  await form.getByRole('button', { name: 'Add override' }).click()
  await expect(form.getByTestId('override-added')).toContainText('Pinned as #')
  const rows = page.getByRole('table', { name: 'Overrides' }).getByTestId('override-row')
  await expect(rows).toHaveCount(1)
  await expect(rows.first()).toContainText(OVERRIDE)

  const pinned = await pinnedOf(request)
  expect(pinned).toEqual([expect.objectContaining({ content: OVERRIDE, userId: USER })])
  const overrideId = pinned[0]?.id as string

  const after = await regenerate(request)
  expect(after.overrideIds).toContain(overrideId)
  await expect(rows.first()).toContainText('yes')

  // Compare the version before the override with the newest: the override's line is added.
  const compare = page.getByRole('form', { name: 'Compare versions' })
  await compare.getByLabel('From').selectOption(String(before?.version))
  await compare.getByLabel('To').selectOption(String(after.version))
  await compare.getByRole('button', { name: 'Compare' }).click()
  await expect(page).toHaveURL(new RegExp(`from=${before?.version}&to=${after.version}`))
  const diff = page.getByTestId('profile-diff')
  await expect(diff).toContainText(`Version ${before?.version} → version ${after.version}`)
  const api = await gql(
    request,
    `query($a: ID, $u: String, $f: Int!, $t: Int!) { profileDiff(agentId: $a, userId: $u, from: $f, to: $t) { ... on ProfileDiff { added removed unchanged } } }`,
    { a: AGENT, u: USER, f: before?.version, t: after.version },
  )
  // The API's lines are the profile's list items ("- …"); the page shows them without the dash.
  expect(api.profileDiff.added).toContain(`- ${OVERRIDE}`)
  await expect(diff.getByTestId('diff-added')).toHaveCount(api.profileDiff.added.length)
  await expect(diff.getByTestId('diff-removed')).toHaveCount(api.profileDiff.removed.length)
  await expect(diff.getByTestId('diff-added').filter({ hasText: OVERRIDE })).toHaveClass(/diff-added/)
  await expect(diff.getByTestId('diff-added').filter({ hasText: OVERRIDE })).toContainText('+')
  await shot(page, 'profile-diff')
})

test('Remove unpins the override; the API no longer has it pinned and the next version drops it', async ({
  request,
}) => {
  const [override] = await pinnedOf(request)
  expect(override).toBeTruthy()
  await page.getByRole('button', { name: `Remove override #${override?.id}` }).click()
  await expect(page.getByTestId('no-overrides')).toBeVisible()
  expect(await pinnedOf(request)).toEqual([])
  const memory = await gql(
    request,
    `query($a: ID, $id: ID!) { memory(agentId: $a, id: $id) { ... on MemoryItem { pinned content } } }`,
    {
      a: AGENT,
      id: override?.id,
    },
  )
  // Unpinned, not deleted: the memory stays.
  expect(memory.memory).toEqual({ pinned: false, content: OVERRIDE })
  const next = await regenerate(request)
  expect(next.overrideIds).not.toContain(override?.id)
})

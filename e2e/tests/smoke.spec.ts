import { ADMIN_KEY, API_PORT } from '../playwright.config'
import { allowConsoleErrors, expect, test } from './fixtures'

const GRAPHQL = `http://127.0.0.1:${API_PORT}/graphql`

test('the dashboard asks for a key, then shows the API and its database as healthy, without console errors', async ({
  page,
}) => {
  const problems: string[] = []
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text())
  })
  page.on('pageerror', (error) => problems.push(error.message))
  await page.goto('/')
  await expect(page).toHaveURL(/\/sign-in$/)
  await page.getByLabel('Admin API key').fill(ADMIN_KEY)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await expect(page.getByRole('heading', { name: 'Overview' })).toBeVisible()
  const status = page.getByTestId('api-status')
  await expect(status).toContainText('healthy')
  await expect(status).toContainText('database ok')
  expect(problems).toEqual([])
})

test('an agent keeps a conversation and learns across sessions over real HTTP', async ({ request }) => {
  const gql = async (query: string, variables: Record<string, unknown> = {}, key = ADMIN_KEY) => {
    const response = await request.post(GRAPHQL, {
      data: { query, variables },
      headers: { authorization: `Bearer ${key}` },
    })
    expect(response.status()).toBe(200)
    const body = await response.json()
    expect(body.errors).toBeUndefined()
    return body.data
  }
  const created = await gql(
    `mutation { createApiKey(agentId: "e2e-agent", label: "e2e") { ... on CreatedApiKey { key } } }`,
  )
  const key = created.createApiKey.key as string
  expect(key).toMatch(/^engram_/)

  await gql(
    `mutation { addMessage(input: { conversationId: "e2e", role: USER, content: "Navigate to example.com and extract the title." }) { __typename } }`,
    {},
    key,
  )
  await gql(
    `mutation { addMessage(input: { conversationId: "e2e", role: TOOL, content: "navigate(https://example.com) -> 200; selector: #page-title" }) { __typename } }`,
    {},
    key,
  )
  await gql(
    `mutation { addMessage(input: { conversationId: "e2e", role: ASSISTANT, content: "ok" }) { __typename } }`,
    {},
    key,
  )
  const run = await gql(
    `mutation { runOptimizer { ... on OptimizationSnapshot { entriesCompressed entriesPromoted } } }`,
    {},
    key,
  )
  expect(run.runOptimizer).toEqual({ entriesCompressed: 1, entriesPromoted: 1 })

  await gql(
    `mutation { storeKnowledge(input: { category: WEBSITE_KNOWLEDGE, key: "example.com title", value: "example.com uses #page-title for its title" }) { __typename } }`,
    {},
    key,
  )
  const found = await gql(
    `{ relevantKnowledge(text: "example.com") { ... on RelevantKnowledge { matches { knowledge { value } } } } }`,
    {},
    key,
  )
  expect(found.relevantKnowledge.matches[0].knowledge.value).toContain('#page-title')

  const window = await gql(
    `{ contextWindow(conversationId: "e2e") { ... on ContextWindow { full { role } totalTokens availableBudget } } }`,
    {},
    key,
  )
  expect(window.contextWindow.full).toHaveLength(3)
  expect(window.contextWindow.availableBudget).toBe(190904)
})

test('the API refuses a request without a key', async ({ request }) => {
  const response = await request.post(GRAPHQL, { data: { query: '{ viewer { role } }' } })
  expect(response.status()).toBe(401)
})

test('GraphiQL loads offline: every asset comes from the API itself', async ({ page }) => {
  // GraphiQL opens without a key: its schema request is refused (401) on purpose.
  allowConsoleErrors(/status of 401/)
  // The e2e API runs with NODE_ENV=development for this check; see playwright.config.ts.
  const external: string[] = []
  await page.route('**/*', (route) => {
    const url = new URL(route.request().url())
    if (
      ['127.0.0.1', 'localhost'].includes(url.hostname) ||
      url.protocol === 'blob:' ||
      url.protocol === 'data:'
    )
      return route.continue()
    external.push(url.href)
    return route.abort()
  })
  await page.goto(GRAPHQL)
  await expect(page.getByRole('region', { name: 'Operation Editor' })).toBeVisible({ timeout: 20_000 })
  expect(external).toEqual([])
})

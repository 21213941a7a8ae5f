import type { APIRequestContext, Page } from '@playwright/test'
import { ADMIN_KEY, API_PORT } from '../playwright.config'
import { shot } from './api'
import { expect, test, watchPage } from './fixtures'

// The operator's journey through every page, against the real API and database. Each page is
// screenshotted into SCREENS_DIR for a person to look at.
const GRAPHQL = `http://127.0.0.1:${API_PORT}/graphql`
const AGENT = 'dash-agent'

async function gql(
  request: APIRequestContext,
  query: string,
  variables: Record<string, unknown> = {},
  key = ADMIN_KEY,
) {
  const response = await request.post(GRAPHQL, {
    data: { query, variables },
    headers: { authorization: `Bearer ${key}` },
  })
  const body = await response.json()
  expect(body.errors, JSON.stringify(body.errors)).toBeUndefined()
  return body.data
}

test.describe.configure({ mode: 'serial' })

let page: Page
let agentKey = ''

test.beforeAll(async ({ browser, request }) => {
  const created = await gql(
    request,
    `mutation($a: ID!) { createApiKey(agentId: $a, label: "dashboard e2e") { ... on CreatedApiKey { key } } }`,
    { a: AGENT },
  )
  agentKey = created.createApiKey.key
  const messages = [
    {
      role: 'USER',
      speaker: 'Dana',
      content: 'Navigate to https://shop.example.com and list the prices of the first page.',
    },
    { role: 'ASSISTANT', content: 'ok' },
    {
      role: 'TOOL',
      content: 'navigate(https://shop.example.com) -> 200; selector: #product-list found 24 items',
    },
    { role: 'ASSISTANT', content: 'sure' },
    { role: 'TOOL', content: `extract(.price) -> ${'€19.99 €24.50 €5.00 '.repeat(20)}` },
    { role: 'ASSISTANT', content: 'The first page lists 24 products; prices range from €5.00 to €24.50.' },
  ]
  await gql(
    request,
    `mutation($m: [MessageInput!]!) { addMessages(input: { conversationId: "shop-run", messages: $m }) { __typename } }`,
    { m: messages },
    agentKey,
  )
  for (const [key, value, confidence] of [
    ['shop.example.com products', 'The product list is #product-list', 0.8],
    ['cookie banner', 'Click the cookie banner first', 0.12],
  ] as const) {
    await gql(
      request,
      `mutation($k: String!, $v: String!, $c: Float) { storeKnowledge(input: { category: WEBSITE_KNOWLEDGE, key: $k, value: $v, confidence: $c }) { __typename } }`,
      { k: key, v: value, c: confidence },
      agentKey,
    )
  }
  await gql(request, `mutation { runOptimizer { __typename } }`, {}, agentKey)
  await gql(request, `mutation { runOptimizer { __typename } }`, {}, agentKey)
  page = watchPage(await browser.newPage())
})

test.afterAll(async () => {
  await page?.close()
})

test('an agent key cannot sign in', async () => {
  await page.goto('/sign-in')
  await page.getByLabel('Admin API key').fill(agentKey)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await expect(page.locator('.field-error')).toContainText('Agent keys cannot sign in')
  await shot(page, 'sign-in-refused')
  await expect(page).toHaveURL(/\/sign-in$/)
})

test('an admin signs in and sees the charts drawn from the snapshots', async () => {
  await page.getByLabel('Admin API key').fill(ADMIN_KEY)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await expect(page.getByRole('heading', { name: 'Overview', exact: true })).toBeVisible()
  await page.getByLabel('Agent', { exact: true }).selectOption(AGENT)
  await expect(page).toHaveURL(new RegExp(`agent=${AGENT}`))
  await expect(page.getByTestId('charts')).toHaveAttribute('data-points', '2')
  for (const id of [
    'tokens-chart',
    'savings-chart',
    'entries-chart',
    'param-trigger',
    'param-window',
    'param-relevance',
  ]) {
    const path = page
      .getByTestId(id)
      .locator('path.recharts-curve, path.recharts-rectangle, path.recharts-area-area')
      .first()
    await expect(path).toHaveAttribute('d', /\d/)
  }
  await expect(page.getByTestId('stat-runs')).toHaveText('2')
  await shot(page, 'overview')
})

test('a new optimizer run reaches the charts live, without a reload', async ({ request }) => {
  await expect(page.getByTestId('live-status')).toContainText('live')
  await page.evaluate(() => {
    ;(window as unknown as { marker: number }).marker = 42
  })
  await gql(
    request,
    `mutation { addMessage(input: { conversationId: "shop-run", role: USER, content: "Now open https://shop.example.com/cart and check the total" }) { __typename } }`,
    {},
    agentKey,
  )
  await gql(request, `mutation { runOptimizer { __typename } }`, {}, agentKey)
  await expect(page.getByTestId('charts')).toHaveAttribute('data-points', '3')
  await expect(page.getByTestId('stat-runs')).toHaveText('3')
  expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(42)
  await shot(page, 'overview-live')
})

test('knowledge: create, edit and delete, each confirmed through the API', async ({ request }) => {
  const find = async (key: string) => {
    const data = await gql(
      request,
      `query($a: ID) { knowledge(agentId: $a, first: 100) { ... on QueryKnowledgeConnection { edges { node { id key value confidence category } } } } }`,
      { a: AGENT },
    )
    return data.knowledge.edges
      .map((e: { node: unknown }) => e.node)
      .find((n: { key: string }) => n.key === key)
  }
  await page.getByRole('link', { name: 'Knowledge' }).click()
  await expect(page.getByRole('heading', { name: 'Knowledge', exact: true })).toBeVisible()
  await expect(page.getByTestId('knowledge-cookie banner')).toContainText('pruned in 30 days if unused')

  const form = page.getByRole('form', { name: 'Add knowledge' })
  await form.getByLabel('Agent', { exact: true }).selectOption(AGENT)
  await form.getByLabel('Category').selectOption('ERROR_PATTERN')
  await form.getByLabel('Key').fill('rate limit')
  await form.getByLabel('Value').fill('429 after 10 requests per minute')
  await form.getByLabel('Confidence').fill('0.7')
  await form.getByRole('button', { name: 'Add' }).click()
  await expect(page.getByTestId('knowledge-rate limit')).toBeVisible()
  expect(await find('rate limit')).toMatchObject({
    value: '429 after 10 requests per minute',
    confidence: 0.7,
    category: 'ERROR_PATTERN',
  })

  await page.getByTestId('knowledge-rate limit').getByRole('button', { name: 'Edit' }).click()
  const edit = page.getByRole('form', { name: 'Edit rate limit' })
  await edit.getByLabel('Confidence').fill('1.5')
  await edit.getByRole('button', { name: 'Save' }).click()
  await expect(page.getByTestId('error-confidence')).toContainText('between 0.0 and 1.0')
  await shot(page, 'knowledge-invalid')
  expect((await find('rate limit')).confidence).toBe(0.7)

  await edit.getByLabel('Confidence').fill('0.9')
  await edit.getByLabel('Value').fill('429 after 10 requests per minute; back off 60s')
  await edit.getByRole('button', { name: 'Save' }).click()
  await expect(page.getByTestId('knowledge-rate limit')).toContainText('back off 60s')
  expect(await find('rate limit')).toMatchObject({
    value: '429 after 10 requests per minute; back off 60s',
    confidence: 0.9,
  })
  await shot(page, 'knowledge')

  const row = page.getByTestId('knowledge-rate limit')
  await row.getByRole('button', { name: 'Delete' }).click()
  await row.getByRole('button', { name: 'Confirm delete' }).click()
  await expect(page.getByTestId('knowledge-rate limit')).toHaveCount(0)
  expect(await find('rate limit')).toBeUndefined()

  // Bulk delete: two facts at once, after a confirmation.
  for (const key of ['bulk one', 'bulk two']) {
    await gql(
      request,
      `mutation($k: String!) { storeKnowledge(input: { category: DOMAIN, key: $k, value: "temporary" }) { __typename } }`,
      { k: key },
      agentKey,
    )
  }
  await page.reload()
  await page.getByLabel('Select bulk one').check()
  await page.getByLabel('Select bulk two').check()
  await page.getByRole('button', { name: 'Delete selected (2)' }).click()
  await page.getByRole('button', { name: 'Confirm delete' }).click()
  await expect(page.getByTestId('knowledge-bulk one')).toHaveCount(0)
  await expect(page.getByTestId('knowledge-bulk two')).toHaveCount(0)
  expect(await find('bulk one')).toBeUndefined()
  expect(await find('bulk two')).toBeUndefined()
  expect(await find('cookie banner')).toBeTruthy()
})

test("a session's context-window bar matches contextWindow from the API", async ({ request }) => {
  await page.getByRole('link', { name: 'Sessions' }).click()
  await expect(page.getByRole('table', { name: 'Conversations' })).toContainText('shop-run')
  await shot(page, 'sessions')
  await page.getByRole('link', { name: 'shop-run' }).click()
  await expect(page.getByRole('heading', { name: /shop-run/ })).toBeVisible()
  // The one message written with a speaker shows it beside its role; the others show none.
  await expect(page.getByTestId('speaker')).toHaveCount(1)
  await expect(page.getByRole('listitem').filter({ has: page.getByTestId('speaker') })).toContainText(
    'Navigate to https://shop.example.com',
  )
  await expect(page.getByTestId('speaker')).toContainText('Dana')
  // A small budget puts the conversation under pressure: full, compressed and dropped all show.
  for (const [label, value] of [
    ['Max context tokens', '1000'],
    ['System prompt tokens', '500'],
    ['Response reserve tokens', '300'],
    ['Full message window', '2'],
  ] as const) {
    await page.getByLabel(label).fill(value)
  }
  await page.getByRole('button', { name: 'Preview' }).click()
  await expect(page).toHaveURL(/maxContextTokens=1000/)
  const data = await gql(
    request,
    `query($a: ID) { contextWindow(agentId: $a, conversationId: "shop-run", budget: { maxContextTokens: 1000, systemPromptTokens: 500, responseReserveTokens: 300, fullMessageWindow: 2, compressionTriggerRatio: 0.7 }) { ... on ContextWindow { fullTokens compressedTokens droppedTokens availableBudget totalTokens overBudget trimmedFullMessages } } }`,
    { a: AGENT },
  )
  const bar = page.getByTestId('context-window-bar')
  await expect(bar).toHaveAttribute('data-full', String(data.contextWindow.fullTokens))
  await expect(bar).toHaveAttribute('data-compressed', String(data.contextWindow.compressedTokens))
  await expect(bar).toHaveAttribute('data-dropped', String(data.contextWindow.droppedTokens))
  await expect(bar).toHaveAttribute('data-budget', '200')
  expect(data.contextWindow.droppedTokens + data.contextWindow.compressedTokens).toBeGreaterThan(0)
  // Never more than the budget; an over-budget full window is said on the page.
  expect(data.contextWindow.totalTokens).toBeLessThanOrEqual(data.contextWindow.availableBudget)
  await expect(page.getByTestId('over-budget')).toHaveCount(data.contextWindow.overBudget ? 1 : 0)
  if (data.contextWindow.overBudget)
    await expect(page.getByTestId('over-budget')).toContainText(
      `the oldest ${data.contextWindow.trimmedFullMessages} of them`,
    )
  for (const part of ['full', 'compressed', 'dropped'] as const) {
    const tokens = data.contextWindow[`${part}Tokens`]
    const width = (await bar.locator(`.window-meter .${part}`).boundingBox())?.width ?? 0
    // Every non-zero part stays visible, however small against the budget.
    if (tokens > 0) expect(width).toBeGreaterThanOrEqual(3.5)
  }
  await shot(page, 'session')
})

test('memory: entries by tier, a relevance histogram, and suggestions to apply', async ({ request }) => {
  // A fresh filler message: the analyzer will suggest compressing it.
  await gql(
    request,
    `mutation { addMessage(input: { conversationId: "shop-run", role: ASSISTANT, content: "ok thanks" }) { __typename } }`,
    {},
    agentKey,
  )
  await page.getByRole('link', { name: 'Memory' }).click()
  await expect(page.getByRole('heading', { name: 'Memory', exact: true })).toBeVisible()
  // All agents by default, like the other pages; suggestions are per agent.
  await expect(page.getByLabel('Agent', { exact: true })).toHaveValue('')
  await page.getByLabel('Agent', { exact: true }).selectOption(AGENT)
  await expect(page).toHaveURL(new RegExp(`agent=${AGENT}`))
  await expect(
    page.getByTestId('relevance-histogram').locator('path.recharts-rectangle').first(),
  ).toHaveAttribute('d', /\d/)
  await expect(page.getByRole('table', { name: 'Memory entries' })).toContainText('long-term')
  await shot(page, 'memory')
  // Apply the first suggestion and see it done in the API's analysis.
  const first = page.getByRole('table', { name: 'Suggestions' }).locator('tbody tr').first()
  const entryId = (await first.getAttribute('data-testid'))?.replace('suggestion-', '') ?? ''
  await first.getByRole('button', { name: /^Apply/ }).click()
  await expect(first).toContainText('applied')
  const analysis = await gql(
    request,
    `query($a: ID) { analyzeMemory(agentId: $a) { ... on MemoryAnalysis { actions { entryId action } } } }`,
    { a: AGENT },
  )
  const before = analysis.analyzeMemory.actions.find((a: { entryId: string }) => a.entryId === entryId)
  expect(before?.action).not.toBe('COMPRESS')
  const entry = await gql(
    request,
    `query($a: ID, $id: ID!) { memoryEntry(agentId: $a, id: $id) { ... on MemoryEntry { isCompressed type } } }`,
    { a: AGENT, id: entryId },
  )
  expect(entry.memoryEntry.isCompressed || entry.memoryEntry.type === 'LONG_TERM').toBe(true)
})

test('optimizer: run now shows progress until the snapshot arrives; parameters keep to their ranges', async ({
  request,
}) => {
  await page.getByRole('link', { name: 'Optimizer' }).click()
  await expect(page.getByRole('heading', { name: 'Optimizer', exact: true })).toBeVisible()
  await expect(page.getByTestId('live-status')).toHaveText('live')
  const rows = page.getByTestId('snapshot-table').locator('tbody tr')
  const before = await rows.count()
  await page.getByRole('button', { name: 'Run optimizer' }).click()
  await expect(rows).toHaveCount(before + 1)
  await expect(page.getByRole('button', { name: 'Run optimizer' })).toBeEnabled()

  await page.getByLabel(/Full message window/).fill('60')
  await page.getByRole('button', { name: 'Save parameters' }).click()
  await expect(page.getByTestId('error-fullMessageWindow')).toBeVisible()
  await page.getByLabel(/Full message window/).fill('20')
  await page.getByRole('button', { name: 'Save parameters' }).click()
  await expect(page.getByText('Parameters saved.')).toBeVisible()
  const status = await gql(
    request,
    `query($a: ID) { optimizerStatus(agentId: $a) { ... on OptimizerStatus { currentParameters { fullMessageWindow } } } }`,
    { a: AGENT },
  )
  expect(status.optimizerStatus.currentParameters.fullMessageWindow).toBe(20)
  await shot(page, 'optimizer')
})

test('API keys: a new key is shown once and works; revoking it stops it', async ({ request }) => {
  await page.getByRole('link', { name: 'API keys' }).click()
  await page.getByLabel('Agent id').fill('second-agent')
  await page.getByLabel('Label').fill('from the dashboard')
  await page.getByRole('button', { name: 'Create key' }).click()
  const key = (await page.getByTestId('new-key').textContent())?.trim() ?? ''
  expect(key).toMatch(/^engram_/)
  const viewer = await request.post(GRAPHQL, {
    data: { query: '{ viewer { agentId } }' },
    headers: { authorization: `Bearer ${key}` },
  })
  expect((await viewer.json()).data.viewer.agentId).toBe('second-agent')
  await shot(page, 'keys')
  await page.reload()
  await expect(page.getByTestId('new-key')).toHaveCount(0)
  const row = page.getByTestId(`key-${key.slice(0, 13)}`)
  await row.getByRole('button', { name: 'Revoke' }).click()
  await row.getByRole('button', { name: 'Confirm revoke' }).click()
  await expect(row).toContainText('revoked')
  const after = await request.post(GRAPHQL, {
    data: { query: '{ viewer { agentId } }' },
    headers: { authorization: `Bearer ${key}` },
  })
  expect(after.status()).toBe(401)
})

test('sign out returns to sign-in and the pages are closed again', async () => {
  await page.getByRole('button', { name: 'Sign out' }).click()
  await expect(page).toHaveURL(/\/sign-in$/)
  await page.goto('/knowledge')
  await expect(page).toHaveURL(/\/sign-in$/)
})

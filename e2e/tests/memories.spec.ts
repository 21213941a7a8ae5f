import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import type { APIRequestContext, Page } from '@playwright/test'
import { ADMIN_KEY, API_PORT } from '../playwright.config'
import { shot } from './api'
import { expect, test, watchPage } from './fixtures'

// The Memories page against the real API: every change made in the browser is checked through the
// API, and each state is screenshotted into SCREENS_DIR for a person to look at.
const GRAPHQL = `http://127.0.0.1:${API_PORT}/graphql`
const AGENT = 'memories-agent'
const RESTORE_AGENT = 'memories-restore'

async function gql(request: APIRequestContext, query: string, variables: Record<string, unknown> = {}) {
  const response = await request.post(GRAPHQL, {
    data: { query, variables },
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
  })
  const body = await response.json()
  expect(body.errors, JSON.stringify(body.errors)).toBeUndefined()
  return body.data
}

interface Item {
  id: string
  content: string
  category: string
  importance: number
  confidence: number
  validUntil: string | null
  supersededById: string | null
}

/** Every memory of an agent, superseded ones included, as the API has them. */
async function memoriesOf(request: APIRequestContext, agentId: string): Promise<Item[]> {
  const data = await gql(
    request,
    `query($a: ID) { memories(agentId: $a, first: 100, filter: { includeSuperseded: true }) { ... on QueryMemoriesConnection { edges { node { id content category importance confidence validUntil supersededById } } } } }`,
    { a: agentId },
  )
  return data.memories.edges.map((e: { node: Item }) => e.node)
}

async function stats(request: APIRequestContext, agentId: string) {
  const data = await gql(
    request,
    `query($a: ID) { memoryStats(agentId: $a) { ... on MemoryStats { current superseded pinned storageBytes embeddingCoverage byCategory { category count } coverage { kind total embedded queued failed } } } }`,
    { a: agentId },
  )
  return data.memoryStats
}

const SEEDS = [
  {
    category: 'PREFERENCE',
    content: 'The user prefers dark mode in every editor',
    tags: ['ui'],
    importance: 0.6,
  },
  { category: 'FACT', content: 'The user lives in Berlin and works as a nurse', importance: 0.7 },
  { category: 'FACT', content: 'The user works from the Hamburg office on Mondays', importance: 0.5 },
  { category: 'SKILL', content: 'The user writes Rust and TypeScript daily', pinned: true },
]

test.describe.configure({ mode: 'serial' })

let page: Page
let exportPath = ''
/** Errors the browser reports while the page is used (hydration, failed scripts, uncaught throws). */
const browserErrors: string[] = []

test.beforeAll(async ({ browser, request }) => {
  for (const id of [AGENT, RESTORE_AGENT])
    await gql(request, `mutation($id: ID!) { createAgent(id: $id) { __typename } }`, { id })
  for (const seed of SEEDS) {
    const data = await gql(
      request,
      `mutation($i: CreateMemoryInput!) { createMemory(input: $i) { ... on MemoryWrite { outcome } } }`,
      { i: { agentId: AGENT, ...seed } },
    )
    expect(data.createMemory.outcome).toBe('STORED')
  }
  // The refused import answers 422 on purpose; Chromium logs every non-2xx response.
  page = watchPage(await browser.newPage(), [/status of 422/])
  page.on('pageerror', (error) => browserErrors.push(error.message))
  page.on('console', (message) => {
    // The refused import answers 422 on purpose; Chromium logs every non-2xx response.
    if (message.type() === 'error' && !/status of 422/.test(message.text()))
      browserErrors.push(message.text())
  })
  await page.goto('/sign-in')
  await page.getByLabel('Admin API key').fill(ADMIN_KEY)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await expect(page.getByRole('heading', { name: 'Overview', exact: true })).toBeVisible()
})

test.afterAll(async () => {
  await page?.close()
  if (exportPath) fs.rmSync(path.dirname(exportPath), { recursive: true, force: true })
})

test('statistics and the category chart match memoryStats', async ({ request }) => {
  await page.getByRole('link', { name: 'Memories' }).click()
  await expect(page.getByRole('heading', { name: 'Memories', exact: true })).toBeVisible()
  await page.getByLabel('Agent', { exact: true }).selectOption(AGENT)
  await expect(page).toHaveURL(new RegExp(`agent=${AGENT}`))
  const expected = await stats(request, AGENT)
  expect(expected).toMatchObject({ current: 4, superseded: 0, pinned: 1 })
  await expect(page.getByTestId('stat-current')).toHaveText(String(expected.current))
  await expect(page.getByTestId('stat-superseded')).toHaveText(String(expected.superseded))
  await expect(page.getByTestId('stat-pinned')).toHaveText(String(expected.pinned))
  await expect(page.getByTestId('stat-storage')).toHaveText(
    `${(expected.storageBytes / 1024).toFixed(1).replace(/\.0$/, '')} KB`,
  )
  await expect(page.getByTestId('stat-coverage')).toHaveText(
    `${Math.round(expected.embeddingCoverage * 100)}%`,
  )
  // One bar per category that has current memories (fact 2, preference 1, skill 1), drawn as SVG.
  const chart = page.getByTestId('memory-category-chart')
  const bars = chart.locator('path.recharts-rectangle')
  const nonEmpty = expected.byCategory.filter((c: { count: number }) => c.count > 0)
  expect(nonEmpty).toHaveLength(3)
  await expect(bars).toHaveCount(nonEmpty.length)
  for (let i = 0; i < nonEmpty.length; i++) await expect(bars.nth(i)).toHaveAttribute('d', /\d/)
  for (const label of ['Fact', 'Preference', 'Skill']) await expect(chart).toContainText(label)
  // Bars are as long as their counts: fact (2) twice preference (1) and skill (1).
  const [fact = 0, preference = 0, skill = 0] = await Promise.all(
    [0, 1, 2].map(async (i) => (await bars.nth(i).boundingBox())?.width ?? 0),
  )
  expect(preference).toBeGreaterThan(10)
  expect(fact / preference).toBeCloseTo(2, 1)
  expect(skill).toBeCloseTo(preference, 0)
  await shot(page, 'memories')
})

test('creating from the form shows Stored, then Duplicate of, then Superseded; the API agrees', async ({
  request,
}) => {
  const form = page.getByRole('form', { name: 'Add a memory' })
  const outcome = form.getByTestId('write-outcome')
  const add = async (
    content: string,
    category: string,
    extra: { tags?: string; importance?: string } = {},
  ) => {
    await form.getByLabel('Content').fill(content)
    await form.getByLabel('Category').selectOption(category)
    await form.getByLabel('Tags').fill(extra.tags ?? '')
    await form.getByLabel('Importance').fill(extra.importance ?? '')
    await form.getByRole('button', { name: 'Add memory' }).click()
  }

  await add('The user drinks green tea every morning', 'PREFERENCE', { tags: 'drinks, morning' })
  await expect(outcome).toHaveAttribute('data-outcome', 'STORED')
  const tea = (await memoriesOf(request, AGENT)).find((m) => m.content.includes('green tea'))
  expect(tea).toBeTruthy()
  await expect(outcome).toHaveText(`Stored as #${tea?.id}.`)

  await add('The user drinks green tea every morning.', 'PREFERENCE')
  await expect(outcome).toHaveAttribute('data-outcome', 'DUPLICATE')
  await expect(outcome).toContainText(`Duplicate of #${tea?.id}`)
  expect((await memoriesOf(request, AGENT)).filter((m) => m.content.includes('green tea'))).toHaveLength(1)

  const hamburg = (await memoriesOf(request, AGENT)).find((m) => m.content.includes('Hamburg')) as Item
  await add('The user works from the Munich office on Fridays', 'FACT')
  await expect(outcome).toHaveAttribute('data-outcome', 'SUPERSEDED')
  await expect(outcome).toContainText(`Superseded #${hamburg.id}`)
  await shot(page, 'memories-outcome')
  const after = await memoriesOf(request, AGENT)
  const munich = after.find((m) => m.content.includes('Munich')) as Item
  const old = after.find((m) => m.id === hamburg.id) as Item
  expect(old.validUntil).not.toBeNull()
  expect(old.supersededById).toBe(munich.id)

  // The superseded memory is marked in the list (with superseded included) and links to its replacement.
  await expect(page.getByTestId('stat-superseded')).toHaveText('1')
  await expect(page.getByTestId(`memory-${hamburg.id}`)).toHaveCount(0)
  await page.getByRole('form', { name: 'Filter memories' }).getByLabel('Include superseded').check()
  await page.getByRole('button', { name: 'Apply' }).click()
  const row = page.getByTestId(`memory-${hamburg.id}`)
  // A GET form: a full page load, streamed; wait until the list is shown, not only sent.
  await expect(row).toBeVisible()
  await expect(page.getByTestId('memory-count')).toContainText('6 memories (superseded included)')
  await expect(row).toHaveAttribute('data-current', 'false')
  await expect(row).toContainText('superseded')
  await expect(page.getByTestId(`memory-${munich.id}`)).toHaveAttribute('data-current', 'true')
  await shot(page, 'memories-superseded')
  await row.getByRole('link', { name: `Replacement of #${hamburg.id}: memory #${munich.id}` }).click()
  await expect(page).toHaveURL(new RegExp(`q=${munich.content.replaceAll(' ', '\\+')}#memory-${munich.id}$`))
  await expect(page.getByTestId('memory-count')).toContainText('1 memory')
  await expect(page.getByTestId(`memory-${munich.id}`)).toBeVisible()
  await expect(page.getByTestId(`memory-${hamburg.id}`)).toHaveCount(0)
  await page.goto(`/memories?agent=${AGENT}`)
})

test('editing importance to 1.5 shows the API’s field error; 0.9 is saved', async ({ request }) => {
  const tea = (await memoriesOf(request, AGENT)).find((m) => m.content.includes('green tea')) as Item
  expect(tea.importance).toBe(0.5)
  const row = page.getByTestId(`memory-${tea.id}`)
  await row.getByRole('button', { name: 'Edit' }).click()
  const edit = page.getByRole('form', { name: `Edit memory #${tea.id}` })
  await edit.getByLabel('Importance').fill('1.5')
  await edit.getByRole('button', { name: 'Save' }).click()
  await expect(edit.getByTestId('error-importance')).toContainText('<=1')
  await expect(edit.getByLabel('Importance')).toHaveAttribute('aria-invalid', 'true')
  // The refused value stays in the field, next to its error.
  await expect(edit.getByLabel('Importance')).toHaveValue('1.5')
  await shot(page, 'memories-invalid')
  expect((await memoriesOf(request, AGENT)).find((m) => m.id === tea.id)?.importance).toBe(0.5)

  await edit.getByLabel('Importance').fill('0.9')
  await edit.getByLabel('Confidence').fill('0.8')
  await edit.getByRole('button', { name: 'Save' }).click()
  await expect(page.getByRole('form', { name: `Edit memory #${tea.id}` })).toHaveCount(0)
  await expect(row.getByRole('img', { name: 'importance 0.90' })).toBeVisible()
  expect((await memoriesOf(request, AGENT)).find((m) => m.id === tea.id)).toMatchObject({
    importance: 0.9,
    confidence: 0.8,
    content: tea.content,
    category: 'PREFERENCE',
  })
})

test('delete asks for confirmation, then the memory is gone from the API', async ({ request }) => {
  const rust = (await memoriesOf(request, AGENT)).find((m) => m.content.includes('Rust')) as Item
  const row = page.getByTestId(`memory-${rust.id}`)
  await row.getByRole('button', { name: 'Delete' }).click()
  await row.getByRole('button', { name: 'Cancel' }).click()
  expect((await memoriesOf(request, AGENT)).some((m) => m.id === rust.id)).toBe(true)
  await row.getByRole('button', { name: 'Delete' }).click()
  await row.getByRole('button', { name: 'Confirm delete' }).click()
  await expect(page.getByTestId(`memory-${rust.id}`)).toHaveCount(0)
  expect((await memoriesOf(request, AGENT)).some((m) => m.id === rust.id)).toBe(false)
})

test('filters and sort list what the API lists, with its total; a bad filter value is explained', async ({
  request,
}) => {
  const filters = page.getByRole('form', { name: 'Filter memories' })
  await filters.getByLabel('Min importance').fill('0.55')
  await filters.getByLabel('Sort by').selectOption('IMPORTANCE')
  await filters.getByRole('button', { name: 'Apply' }).click()
  await expect(page).toHaveURL(/min=0.55/)
  const data = await gql(
    request,
    `query($a: ID) { memories(agentId: $a, first: 20, orderBy: IMPORTANCE, filter: { minImportance: 0.55 }) { ... on QueryMemoriesConnection { totalCount edges { node { id importance } } } } }`,
    { a: AGENT },
  )
  const expected = data.memories.edges.map((e: { node: { id: string } }) => `memory-${e.node.id}`)
  expect(data.memories.totalCount).toBe(3)
  const rows = page.getByRole('table', { name: 'Memories' }).locator('tbody tr')
  await expect(rows.first()).toBeVisible()
  await expect(page.getByTestId('memory-count')).toHaveText('3 memories · page 1 of 1')
  expect(await rows.evaluateAll((all) => all.map((r) => r.getAttribute('data-testid')))).toEqual(expected)

  await filters.getByLabel('Min importance').fill('a lot')
  await filters.getByRole('button', { name: 'Apply' }).click()
  await expect(page.getByText('Min importance must be a number between 0 and 1.')).toBeVisible()
  await page.goto(`/memories?agent=${AGENT}`)
})

test('search lists hits with their score broken down, as the API ranks them', async ({ request }) => {
  const form = page.getByRole('form', { name: 'Search memory' })
  await form.getByLabel('Search query').fill('user office Munich')
  await expect(form.getByLabel('Memories')).toBeChecked()
  await form.getByLabel('Knowledge').check()
  await form.getByLabel('Strategy').selectOption('HYBRID')
  await form.getByRole('button', { name: 'Search' }).click()
  const table = page.getByRole('table', { name: 'Search results' })
  await expect(table).toBeVisible()
  // The form keeps what was searched.
  await expect(form.getByLabel('Search query')).toHaveValue('user office Munich')
  await expect(form.getByLabel('Knowledge')).toBeChecked()
  const data = await gql(
    request,
    `query($a: ID) { search(input: { agentId: $a, query: "user office Munich", scopes: [MEMORIES, KNOWLEDGE], strategy: HYBRID }) { ... on SearchResult { mmrLambda hits { scope id rank score mmrScore redundantWithRank components { bm25 vector importance recency confidence context episode time speaker feedback cooccurrence decay } } } } }`,
    { a: AGENT },
  )
  const hits = data.search.hits as {
    scope: string
    id: string
    rank: number
    score: number
    mmrScore: number
    redundantWithRank: number | null
    components: Record<string, number>
  }[]
  expect(hits.length).toBeGreaterThan(1)
  await expect(table.locator('tbody tr')).toHaveCount(hits.length)
  // Same hits in the same order as the API ranks them.
  expect(
    await table.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-testid'))),
  ).toEqual(hits.map((h) => `hit-${h.scope}-${h.id}`))
  const top = hits[0] as (typeof hits)[number]
  const munich = (await memoriesOf(request, AGENT)).find((m) => m.content.includes('Munich')) as Item
  expect(top).toMatchObject({ scope: 'MEMORIES', id: munich.id })
  expect(top.components.bm25).toBeGreaterThan(0)
  const first = table.locator('tbody tr').first()
  await expect(first).toHaveAttribute('data-testid', `hit-MEMORIES-${munich.id}`)
  await expect(first).toContainText('Munich office')
  await expect(first.getByTestId('hit-score')).toContainText(top.score.toFixed(2))
  // Every component is shown: multipliers (time, speaker) as ×factor, the others as bars.
  for (const [name, value] of Object.entries(top.components)) {
    if (name === 'time' || name === 'speaker')
      await expect(first.locator(`[data-factor="${name}"]`)).toHaveText(`×${value.toFixed(2)}`)
    else {
      const label = name === 'cooccurrence' ? 'co-occurrence' : name
      await expect(
        first.getByRole('img', { name: `${label} ${value.toFixed(2)}`, exact: true }),
      ).toBeVisible()
    }
  }
  // Ranks and what each hit was ranked on, as the API says (issue 10: with MMR a score can be
  // higher below a lower one; the ranked-on value never increases down the table).
  expect(data.search.mmrLambda).toBeLessThan(1)
  await expect(table.getByTestId('search-order')).toContainText('Ranked by MMR')
  const rows = table.locator('tbody tr')
  expect(await rows.getByTestId('hit-rank').allTextContents()).toEqual(hits.map((h) => String(h.rank)))
  const rankedOn = (await rows.getByTestId('hit-ranked-on').allTextContents()).map((t) =>
    Number.parseFloat(t),
  )
  expect(rankedOn).toEqual(hits.map((h) => Number(h.mmrScore.toFixed(2))))
  expect(rankedOn).toEqual([...rankedOn].sort((a, b) => b - a))
  for (const [i, hit] of hits.entries())
    if (hit.redundantWithRank !== null)
      await expect(rows.nth(i).getByTestId('hit-redundancy')).toContainText(
        `repeats #${hit.redundantWithRank}`,
      )
  await shot(page, 'memories-search')
})

test('export downloads engram-<agent>-<date>.json with the memories', async ({ request }) => {
  const downloadPromise = page.waitForEvent('download')
  await page.getByRole('button', { name: 'Export JSON' }).click()
  const download = await downloadPromise
  expect(download.suggestedFilename()).toMatch(new RegExp(`^engram-${AGENT}-\\d{4}-\\d{2}-\\d{2}\\.json$`))
  exportPath = path.join(
    fs.mkdtempSync(path.join(os.tmpdir(), 'engram-export-')),
    download.suggestedFilename(),
  )
  await download.saveAs(exportPath)
  const document = JSON.parse(fs.readFileSync(exportPath, 'utf8'))
  expect(document.format).toBe('engram.export')
  const contents = (document.memories as { content: string }[]).map((m) => m.content).sort()
  expect(contents).toEqual((await memoriesOf(request, AGENT)).map((m) => m.content).sort())
  expect(contents).toContain('The user drinks green tea every morning')
  const status = page.getByTestId('export-status')
  await expect(status).toHaveAttribute('data-step', 'saved')
  await expect(status).toContainText(`Saved ${download.suggestedFilename()}`)
  await expect(status).toContainText(`${contents.length} memories`)
})

test('import: a file that is no export is refused; the export imports into another agent with Replace', async ({
  request,
}) => {
  await page.getByLabel('Agent', { exact: true }).selectOption(RESTORE_AGENT)
  await expect(page).toHaveURL(new RegExp(`agent=${RESTORE_AGENT}`))
  await expect(page.getByText('No memories yet.')).toBeVisible()
  const form = page.getByRole('form', { name: 'Import memories' })

  // Not an export at all: refused while reading, before anything is sent.
  await form.getByLabel('Export file').setInputFiles({
    name: 'notes.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify({ hello: 'world' })),
  })
  await form.getByRole('button', { name: 'Import' }).click()
  await expect(form.getByTestId('import-error')).toContainText('not an Engram export')
  await expect(form.locator('li[data-step="reading"]')).toHaveAttribute('data-state', 'failed')

  // Looks like one but is incomplete: the API's validation error comes back through the dashboard.
  await form.getByLabel('Export file').setInputFiles({
    name: 'broken.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify({ format: 'engram.export', version: 1 })),
  })
  await form.getByRole('button', { name: 'Import' }).click()
  await expect(form.getByTestId('import-error')).toContainText('document.memories')
  await expect(form.locator('li[data-step="importing"]')).toHaveAttribute('data-state', 'failed')
  expect(await memoriesOf(request, RESTORE_AGENT)).toEqual([])

  // Replace clears what the agent had: this memory must not survive the import.
  await gql(
    request,
    `mutation($a: ID) { createMemory(input: { agentId: $a, category: CONTEXT, content: "A stale note about a cancelled trip" }) { __typename } }`,
    { a: RESTORE_AGENT },
  )
  await form.getByLabel('Export file').setInputFiles(exportPath)
  await form.getByLabel('Mode').selectOption('REPLACE')
  await form.getByRole('button', { name: 'Import' }).click()
  await form.getByRole('button', { name: 'Confirm replace' }).click()
  const exported = JSON.parse(fs.readFileSync(exportPath, 'utf8'))
  const report = form.getByTestId('import-report')
  await expect(report).toContainText(`Imported ${exported.memories.length} memories`)
  for (const step of ['reading', 'uploading', 'importing', 'done'])
    await expect(form.locator(`li[data-step="${step}"]`)).toHaveAttribute('data-state', 'done')
  const restored = await memoriesOf(request, RESTORE_AGENT)
  expect(restored.some((m) => m.content.includes('cancelled trip'))).toBe(false)
  expect(restored.map((m) => m.content).sort()).toEqual(
    (exported.memories as { content: string }[]).map((m) => m.content).sort(),
  )
  // The page shows them too (after the refresh the import triggers).
  await expect(page.getByTestId('stat-current')).toHaveText(
    String((await stats(request, RESTORE_AGENT)).current),
  )
  await expect(page.getByRole('table', { name: 'Memories' })).toContainText('green tea')
  await shot(page, 'memories-import')
})

test('new messages are embedded on write, without a re-embedding; re-embedding then has nothing left', async ({
  request,
}) => {
  await gql(
    request,
    `mutation($a: ID, $m: [MessageInput!]!) { addMessages(input: { agentId: $a, conversationId: "reembed", messages: $m }) { __typename } }`,
    {
      a: RESTORE_AGENT,
      m: Array.from({ length: 12 }, (_, i) => ({
        role: i % 2 ? 'ASSISTANT' : 'USER',
        content: `turn ${i} about trains`,
      })),
    },
  )
  const messageCoverage = async () =>
    (await stats(request, RESTORE_AGENT)).coverage.find((c: { kind: string }) => c.kind === 'message')
  // The job queue embeds them moments after the write (it used to take a search or a minute).
  await expect.poll(async () => (await messageCoverage()).queued, { timeout: 10_000 }).toBe(0)
  const messages = await messageCoverage()
  expect(messages).toMatchObject({ embedded: messages.total, failed: 0 })
  expect(messages.total).toBeGreaterThanOrEqual(12)
  await page.reload()
  await expect(page.getByTestId('coverage-message')).toHaveText(
    new RegExp(`${messages.total} / ${messages.total} \\(100%\\)$`),
  )
  await expect(page.getByTestId('embedding-live')).toHaveText('live')
  const model = (await gql(request, '{ embeddingStatus { model } }')).embeddingStatus.model
  await expect(page.getByTestId('embedding-model')).toHaveText(model)

  await page.getByRole('button', { name: 'Re-embed' }).click()
  const state = page.getByTestId('embedding-state')
  await expect(state).toHaveAttribute('data-state', 'DONE')
  const status = (await gql(request, '{ embeddingStatus { state total done failed } }')).embeddingStatus
  expect(status).toMatchObject({ state: 'DONE', failed: 0 })
  await expect(state).toHaveAttribute('data-done', String(status.done))
  await expect(state).toHaveAttribute('data-total', String(status.total))
  await expect(state).toContainText(
    status.total === 0
      ? 'Done: everything already had a vector of this model.'
      : `${status.done} of ${status.total} embedded`,
  )
  await expect(page.getByRole('progressbar', { name: 'Re-embedding progress' })).toHaveAttribute(
    'aria-valuenow',
    '100',
  )
  await expect(page.getByTestId('coverage-message')).toContainText(
    `${messages.total} / ${messages.total} (100%)`,
  )
  await shot(page, 'memories-reembed')
  expect(browserErrors).toEqual([])
})

test('a memory formed from a conversation links to the message it came from', async ({ request }) => {
  const FORMED = 'memories-formed'
  await gql(request, `mutation($id: ID!) { createAgent(id: $id) { __typename } }`, { id: FORMED })
  await gql(
    request,
    `mutation($a: ID) { addMessage(input: { agentId: $a, conversationId: "kitchen", role: USER, content: "Remember that I am allergic to peanuts." }) { __typename } }`,
    { a: FORMED },
  )
  // Formation would run by itself seconds later; syncMemory forms it now, as the API's users can.
  const synced = await gql(
    request,
    `mutation($a: ID) { syncMemory(agentId: $a) { ... on SyncMemoryPayload { stored { id content sourceConversationId sourceMessageId } } } }`,
    { a: FORMED },
  )
  const memory = synced.syncMemory.stored.find((m: { content: string }) => /peanuts/.test(m.content))
  expect(memory).toMatchObject({ sourceConversationId: 'kitchen' })
  expect(memory.sourceMessageId).toBeTruthy()

  await page.goto(`/memories?agent=${FORMED}`)
  const link = page.getByTestId(`memory-${memory.id}`).getByRole('link', {
    name: `Source of #${memory.id}: conversation kitchen, message #${memory.sourceMessageId}`,
  })
  await expect(link).toHaveText(`kitchen #${memory.sourceMessageId}`)
  await shot(page, 'memories-formed-source')
  await link.click()
  await expect(page).toHaveURL(new RegExp(`/sessions/${FORMED}/kitchen#message-${memory.sourceMessageId}$`))
  await expect(page.locator(`#message-${memory.sourceMessageId}`)).toContainText('allergic to peanuts')
})

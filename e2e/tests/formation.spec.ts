import type { APIRequestContext, Page } from '@playwright/test'
import { createAgent, gql, shot, signedInPage } from './api'
import { expect, test } from './fixtures'

// The Memory formation page against the real API: "Sync now" forms memories from messages added
// through the API and shows the counts; the settings form saves and refuses as the API does.
const AGENT = 'formation-agent'
const CONVERSATION = 'formation-chat'

const TURNS = [
  'My name is Dana and I work as a nurse at the Charité in Berlin.',
  'Remember that I am allergic to peanuts.',
  'I prefer window seats on long flights.',
]

interface Settings {
  enabled: boolean
  summaries: { strategy: string; summaryDebounceSeconds: number; summaryRetentionDays: number }
  profile: { profileRegenerateThreshold: number; profileMaxTokens: number }
}

async function settingsOf(request: APIRequestContext): Promise<Settings> {
  const data = await gql(
    request,
    `query($a: ID) { memoryFormationSettings(agentId: $a) { ... on MemoryFormationSettings { enabled summaries { strategy summaryDebounceSeconds summaryRetentionDays } profile { profileRegenerateThreshold profileMaxTokens } } } }`,
    { a: AGENT },
  )
  return data.memoryFormationSettings
}

async function extractionStats(request: APIRequestContext) {
  const data = await gql(
    request,
    `query($a: ID) { formationActivity(agentId: $a) { ... on FormationActivity { extractor circuitState work { kind calls successes failures } } } }`,
    { a: AGENT },
  )
  return data.formationActivity
}

test.describe.configure({ mode: 'serial' })

let page: Page

test.beforeAll(async ({ browser, request }) => {
  await createAgent(request, AGENT)
  page = await signedInPage(browser)
})

test.afterAll(async () => {
  await page?.close()
})

test('Sync now forms memories from messages added through the API; the counts match the API', async ({
  request,
}) => {
  await page.getByRole('link', { name: 'Formation', exact: true }).click()
  await expect(page.getByRole('heading', { name: 'Memory formation', exact: true })).toBeVisible()
  await page.getByLabel('Agent', { exact: true }).selectOption(AGENT)
  await expect(page).toHaveURL(new RegExp(`agent=${AGENT}`))
  // No model here: the offline extractor, and no circuit to show.
  await expect(page.getByTestId('extractor')).toHaveText('offline extractor')
  await expect(page.getByTestId('circuit-state')).toHaveText('offline extractor, no model')
  await expect(page.getByTestId('live-status')).toHaveText('● live')
  const before = await extractionStats(request)
  expect(before).toMatchObject({ extractor: 'OFFLINE', circuitState: null })

  // The turns wait for their extraction's debounce (5 s by default): Sync now forms them at once.
  await gql(request, `mutation($i: AddMessagesInput!) { addMessages(input: $i) { __typename } }`, {
    i: {
      agentId: AGENT,
      conversationId: CONVERSATION,
      messages: TURNS.map((content) => ({ role: 'USER', content, speaker: 'dana' })),
    },
  })
  await page.getByRole('button', { name: 'Sync now' }).click()
  const result = page.getByTestId('sync-result')
  await expect(result).toBeVisible()
  await expect(result.getByTestId('sync-turns')).toHaveText(String(TURNS.length))
  const stored = Number(await result.getByTestId('sync-stored').textContent())
  expect(stored).toBeGreaterThan(0)

  // The API has the memories the page counted, formed from this conversation.
  const data = await gql(
    request,
    `query($a: ID) { memories(agentId: $a, first: 50) { ... on QueryMemoriesConnection { totalCount edges { node { content sourceConversationId } } } } }`,
    { a: AGENT },
  )
  expect(data.memories.totalCount).toBe(stored)
  const contents = data.memories.edges.map((e: { node: { content: string } }) => e.node.content)
  expect(
    data.memories.edges.every(
      (e: { node: { sourceConversationId: string } }) => e.node.sourceConversationId === CONVERSATION,
    ),
  ).toBe(true)
  expect(contents.join('\n')).toMatch(/peanuts/)

  // The statistics on the page are the API's, kept current by the live events.
  const after = await extractionStats(request)
  const extraction = after.work.find((w: { kind: string }) => w.kind === 'EXTRACTION')
  expect(extraction.calls).toBeGreaterThan(0)
  const row = page.getByTestId('stats-EXTRACTION')
  await expect(row.getByTestId('calls')).toHaveText(String(extraction.calls))
  await expect(row.getByTestId('successes')).toHaveText(String(extraction.successes))
  await expect(row.getByTestId('failures')).toHaveText(String(extraction.failures))
  await expect(page.getByTestId('live-events')).toContainText('Extraction done')
  await shot(page, 'formation-sync')
})

test('settings: a saved value reads back through the API', async ({ request }) => {
  const form = page.getByRole('form', { name: 'Memory formation settings' })
  const debounce = form.getByLabel(/Summary debounce/)
  await expect(debounce).toHaveValue(String((await settingsOf(request)).summaries.summaryDebounceSeconds))
  await debounce.fill('120')
  await form.getByLabel('Summary strategy').selectOption('HIERARCHICAL')
  await form.getByLabel(/Rebuild the profile after/).fill('25')
  await form.getByRole('button', { name: 'Save settings' }).click()
  await expect(form.getByTestId('settings-saved')).toHaveText('Settings saved.')
  const saved = await settingsOf(request)
  expect(saved).toMatchObject({
    enabled: true,
    summaries: { strategy: 'HIERARCHICAL', summaryDebounceSeconds: 120 },
    profile: { profileRegenerateThreshold: 25 },
  })
  // The form shows the saved values, also after a reload.
  await page.reload()
  await expect(form.getByLabel(/Summary debounce/)).toHaveValue('120')
  await expect(form.getByLabel('Summary strategy')).toHaveValue('HIERARCHICAL')
  await expect(form.getByLabel(/Rebuild the profile after/)).toHaveValue('25')
})

test('settings: an out-of-range value shows the API error beside its field and changes nothing', async ({
  request,
}) => {
  const before = await settingsOf(request)
  const form = page.getByRole('form', { name: 'Memory formation settings' })
  // Two changes, one of them out of range: validated whole, neither is saved.
  await form.getByLabel(/Summary retention/).fill('30')
  await form.getByLabel(/Summary debounce/).fill('5')
  await form.getByRole('button', { name: 'Save settings' }).click()
  const error = form.getByTestId('error-summaries.summaryDebounceSeconds')
  await expect(error).toBeVisible()
  await expect(error).toContainText('10')
  // Beside its own field: in the same row as the debounce input.
  await expect(form.locator('span', { has: page.locator('#setting-summaryDebounceSeconds') })).toContainText(
    (await error.textContent()) ?? '',
  )
  await expect(form.getByTestId('settings-saved')).toHaveCount(0)
  // What was typed stays in the form to correct.
  await expect(form.getByLabel(/Summary debounce/)).toHaveValue('5')
  expect(await settingsOf(request)).toEqual(before)
  await shot(page, 'formation-settings-error')
})

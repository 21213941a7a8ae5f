import type { APIRequestContext, Page } from '@playwright/test'
import { createAgent, e, gql, literal, shot, signedInPage } from './api'
import { expect, test } from './fixtures'

// Trajectory memory (issue 16) in the dashboard against the real API: runs are started, progressed,
// completed (with steps, app facts and selectors), failed, resumed and forked through the API as an
// acting agent would; the runs page lists and filters them and follows a run live; a run's page
// draws its lineage; the domain page shows what the runs left; deletions made in the browser are
// checked through the API.
const AGENT = 'runs-agent'
const SHOP = 'shop.e2e.test'
const DOCS = 'docs.e2e.test'

const RUN = 'id status kind sessionId parentRunId domain scope turnCount currentUrl finalUrl'

/** A registry mutation with its input inline; a typed error fails the test with its message. */
async function runMutation(request: APIRequestContext, field: string, input: Record<string, unknown>) {
  // Ending a run answers what it recorded (RunEnd); the others answer the run.
  const selection =
    field === 'completeRun' || field === 'failRun'
      ? `... on RunEnd { trajectoryId factsRecorded selectorsRecorded sessionRecorded run { ${RUN} } }`
      : `... on Run { ${RUN} }`
  const data = await gql(
    request,
    `mutation { ${field}(input: ${literal({ agentId: AGENT, ...input })}) {
      __typename ... on Error { message } ${selection}
    } }`,
  )
  const result = data[field]
  expect(result.message, `${field}: ${result.message}`).toBeUndefined()
  return result
}

async function runOf(request: APIRequestContext, runId: string) {
  const data = await gql(
    request,
    `query { run(agentId: ${literal(AGENT)}, runId: ${literal(runId)}) { __typename ... on Run { ${RUN} } ... on Error { message } } }`,
  )
  return data.run
}

async function factsOf(request: APIRequestContext, domain: string) {
  const data = await gql(
    request,
    `query { appFacts(agentId: ${literal(AGENT)}, domain: ${literal(domain)}) { __typename ... on AppFactPage { totalCount facts { key confidence sources } } ... on Error { message } } }`,
  )
  expect(data.appFacts.message).toBeUndefined()
  return data.appFacts.facts as { key: string; confidence: number; sources: number }[]
}

const SEARCH_STEPS = [
  { action: 'navigate', value: `https://${SHOP}/`, url: `https://${SHOP}/`, verified: true },
  { action: 'type', selector: '#search-input', value: 'running shoes', url: `https://${SHOP}/` },
  {
    action: 'click',
    selector: '#search-btn',
    url: `https://${SHOP}/`,
    verified: true,
    durationMs: 420,
  },
]

test.describe.configure({ mode: 'serial' })

let page: Page

test.beforeAll(async ({ browser, request }) => {
  await createAgent(request, AGENT)
  // A run that completes with steps, facts and selectors: a trajectory, a session entry, memory.
  await runMutation(request, 'startRun', {
    runId: 'e2e-search',
    sessionId: 'e2e-session-1',
    goal: 'search for running shoes',
    startUrl: `https://${SHOP}/`,
  })
  await runMutation(request, 'reportRunProgress', {
    runId: 'e2e-search',
    currentUrl: `https://${SHOP}/search?q=running+shoes`,
    turnCount: 3,
    summary: 'reading the results',
  })
  const completed = await runMutation(request, 'completeRun', {
    runId: 'e2e-search',
    outcome: 'found 24 running shoes',
    finalUrl: `https://${SHOP}/search?q=running+shoes`,
    turnCount: 4,
    steps: SEARCH_STEPS,
    facts: [
      { type: e('TIMING'), key: 'results-load', value: 'results take about 2 s to load' },
      { type: e('QUIRK'), key: 'cookie-banner', value: 'a cookie banner covers the search button at first' },
    ],
    selectors: [
      { element: 'button "Search"', selector: '#search-btn' },
      { element: 'button "Search"', selector: '@e12' },
      { element: 'button "Search"', selector: 'button.search-old', outcome: e('FAILURE') },
      { element: 'input "Search"', selector: '#search-input' },
    ],
  })
  expect(completed).toMatchObject({ sessionRecorded: true, factsRecorded: 2, selectorsRecorded: 4 })
  expect(completed.trajectoryId).toBeTruthy()
  // A run that fails on the same domain: a failed session entry; its fact confirms results-load.
  await runMutation(request, 'startRun', {
    runId: 'e2e-checkout',
    goal: 'check out the cart',
    startUrl: `https://${SHOP}/cart`,
  })
  await runMutation(request, 'failRun', {
    runId: 'e2e-checkout',
    reason: 'the payment form never loaded',
    finalUrl: `https://${SHOP}/checkout`,
    turnCount: 7,
    facts: [{ type: e('TIMING'), key: 'results-load', value: 'results take about 2 s to load' }],
    selectors: [{ element: 'button "Search"', selector: '#search-btn' }],
  })
  // A resume (same run session) and a fork (a new one) of the search.
  const resume = await runMutation(request, 'resumeRun', { runId: 'e2e-search', newRunId: 'e2e-resume' })
  expect(resume).toMatchObject({ kind: 'RESUME', parentRunId: 'e2e-search', sessionId: 'e2e-session-1' })
  const fork = await runMutation(request, 'forkRun', {
    runId: 'e2e-search',
    goal: 'search for trail shoes instead',
    newRunId: 'e2e-fork',
    sessionId: 'e2e-fork-session',
  })
  expect(fork).toMatchObject({ kind: 'FORK', parentRunId: 'e2e-search', sessionId: 'e2e-fork-session' })
  // Another domain, in a scope of its own (an evaluation track).
  await runMutation(request, 'startRun', {
    runId: 'e2e-docs',
    goal: 'find the API reference',
    domain: DOCS,
    scope: 'eval-b',
  })
  page = await signedInPage(browser)
})

test.afterAll(async () => {
  await page?.close()
})

test('the runs page lists the runs with their status and filters them as the API does', async () => {
  await page.getByRole('link', { name: 'Runs', exact: true }).click()
  await expect(page.getByRole('heading', { name: 'Runs', exact: true })).toBeVisible()
  await page.getByLabel('Agent', { exact: true }).selectOption(AGENT)
  await expect(page).toHaveURL(new RegExp(`agent=${AGENT}`))
  const table = page.getByRole('table', { name: 'Runs' })
  for (const id of ['e2e-search', 'e2e-checkout', 'e2e-resume', 'e2e-fork', 'e2e-docs'])
    await expect(table.getByTestId(`run-${id}`)).toBeVisible()
  await expect(page.getByTestId('runs-count')).toHaveText('5 runs')
  await expect(table.getByTestId('run-e2e-search').getByTestId('run-status')).toHaveText('Completed')
  await expect(table.getByTestId('run-e2e-checkout').getByTestId('run-status')).toHaveText('Failed')
  await expect(table.getByTestId('run-e2e-checkout').getByTestId('run-reason')).toHaveText(
    'the payment form never loaded',
  )
  await expect(table.getByTestId('run-e2e-checkout').getByTestId('run-turns')).toHaveText('7')
  await expect(table.getByTestId('run-e2e-resume').getByTestId('run-status')).toHaveText('● Running')
  // The resume starts where the search ended.
  await expect(table.getByTestId('run-e2e-resume').getByTestId('run-where')).toHaveText(
    `https://${SHOP}/search?q=running+shoes`,
  )
  await shot(page, 'runs')

  const filters = page.getByRole('form', { name: 'Filter runs' })
  await filters.getByLabel('Status').selectOption('FAILED')
  await filters.getByRole('button', { name: 'Apply' }).click()
  await expect(page.getByTestId('runs-count')).toHaveText('1 run')
  await expect(table.getByTestId('run-e2e-checkout')).toBeVisible()

  await filters.getByLabel('Status').selectOption('')
  await filters.getByLabel('Run session').fill('e2e-session-1')
  await filters.getByRole('button', { name: 'Apply' }).click()
  await expect(page.getByTestId('runs-count')).toHaveText('2 runs')
  await expect(table.getByTestId('run-e2e-search')).toBeVisible()
  await expect(table.getByTestId('run-e2e-resume')).toBeVisible()

  // A filter the API refuses is shown with the field it names; the form stays.
  await filters.getByLabel('Run session').fill('not an id')
  await filters.getByRole('button', { name: 'Apply' }).click()
  await expect(page.getByTestId('runs-refused')).toContainText('sessionId')

  await filters.getByLabel('Run session').fill('')
  // Typed as a URL: the API keeps the host.
  await filters.getByLabel('Domain').fill(`https://${DOCS}/reference`)
  await filters.getByRole('button', { name: 'Apply' }).click()
  await expect(page.getByTestId('runs-count')).toHaveText('1 run')
  await expect(table.getByTestId('run-e2e-docs')).toBeVisible()

  await filters.getByLabel('Domain').fill('')
  await filters.getByLabel('Scope').fill('eval-b')
  await filters.getByRole('button', { name: 'Apply' }).click()
  await expect(page.getByTestId('runs-count')).toHaveText('1 run')
  await expect(table.getByTestId('run-e2e-docs')).toBeVisible()
  await expect(table.getByTestId('run-e2e-search')).toHaveCount(0)
})

test('progress and new runs appear live, without a reload', async ({ request }) => {
  await page.goto(`/runs?agent=${AGENT}`)
  await expect(page.getByTestId('live-status')).toHaveText('● live')
  // A mark on this document: a reload would start a new one without it.
  await page.evaluate(() => {
    ;(window as unknown as { sameDocument: boolean }).sameDocument = true
  })
  const table = page.getByRole('table', { name: 'Runs' })
  // A run started while the page is open is listed as it starts.
  await runMutation(request, 'startRun', {
    runId: 'e2e-live',
    goal: 'compare two pairs of shoes',
    startUrl: `https://${SHOP}/compare`,
  })
  const row = table.getByTestId('run-e2e-live')
  await expect(row).toBeVisible()
  await expect(row.getByTestId('run-turns')).toHaveText('0')
  // Its progress and its end change the row in place.
  await runMutation(request, 'reportRunProgress', {
    runId: 'e2e-live',
    currentUrl: `https://${SHOP}/compare?ids=1,2`,
    turnCount: 3,
    summary: 'reading the second pair’s reviews',
  })
  await expect(row.getByTestId('run-turns')).toHaveText('3')
  await expect(row.getByTestId('run-where')).toHaveText(`https://${SHOP}/compare?ids=1,2`)
  await expect(row.getByTestId('run-summary')).toHaveText('reading the second pair’s reviews')
  await runMutation(request, 'completeRun', {
    runId: 'e2e-live',
    outcome: 'the first pair is lighter',
    turnCount: 5,
  })
  await expect(row.getByTestId('run-status')).toHaveText('Completed')
  await expect(row.getByTestId('run-turns')).toHaveText('5')
  // The page never reloaded: the rows changed under the same document.
  expect(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).toBe(true)
  const api = await runOf(request, 'e2e-live')
  expect(api).toMatchObject({ status: 'COMPLETED', turnCount: 5 })
})

test('a run’s page draws its lineage of resumes and forks, its trajectory and its session entry', async () => {
  await page.goto(`/runs?agent=${AGENT}`)
  await page
    .getByRole('table', { name: 'Runs' })
    .getByRole('link', { name: 'e2e-resume', exact: true })
    .click()
  await expect(page.getByRole('heading', { name: 'Run e2e-resume' })).toBeVisible()
  const lineage = page.getByRole('list', { name: 'Lineage' })
  // The root, with the resume and the fork under it; the asked run marked.
  await expect(lineage.getByTestId('lineage-e2e-search')).toContainText('Start')
  const children = lineage.locator(
    '.lineage-node:has([data-testid="lineage-e2e-search"]) > .lineage-children',
  )
  await expect(children.getByTestId('lineage-e2e-resume')).toContainText('Resume')
  await expect(children.getByTestId('lineage-e2e-fork')).toContainText('Fork')
  await expect(children.getByTestId('lineage-e2e-fork')).toContainText('e2e-fork-session')
  await expect(lineage.locator('[aria-current="page"]')).toHaveText('e2e-resume')
  await expect(page.getByTestId('lineage-parent-missing')).toHaveCount(0)
  await expect(page.getByTestId('no-trajectory')).toBeVisible()
  await shot(page, 'run-lineage')

  // The root's own page: its trajectory's steps (two verified) and its session entry.
  await lineage.getByRole('link', { name: 'e2e-search', exact: true }).click()
  await expect(page.getByRole('heading', { name: 'Run e2e-search' })).toBeVisible()
  const steps = page.getByRole('list', { name: 'Trajectory steps' }).getByTestId('trajectory-step')
  await expect(steps).toHaveCount(SEARCH_STEPS.length)
  await expect(steps.nth(2)).toContainText('#search-btn')
  await expect(steps.filter({ hasText: '✓ verified' })).toHaveCount(2)
  await expect(page.getByTestId('trajectory-summary')).toContainText('3 steps, 2 verified, 4 turns')
  await expect(page.getByTestId('session-entry')).toContainText('success')
  await expect(page.getByTestId('session-entry')).toContainText('found 24 running shoes')
  await expect(page.getByTestId('session-entry')).toContainText(`https://${SHOP}/search?q=running+shoes`)
})

test('the domain page shows sessions, trajectories, facts with confidence and ranked selectors; a delete is confirmed through the API', async ({
  request,
}) => {
  await page.goto(`/runs?agent=${AGENT}`)
  await page.getByTestId(`domain-${SHOP}`).getByRole('link', { name: SHOP }).click()
  await expect(page.getByRole('heading', { name: SHOP, exact: true })).toBeVisible()
  await expect(page.getByLabel('Scope', { exact: true })).toHaveValue('default')

  // Session history, newest first: the failed checkout ended after the search.
  const sessions = page.getByTestId('session-row')
  await expect(sessions).toHaveCount(3)
  await expect(sessions.nth(0)).toContainText('compare two pairs of shoes')
  await expect(sessions.nth(1)).toContainText('failure')
  await expect(sessions.nth(1)).toContainText(`https://${SHOP}/checkout`)
  await expect(sessions.nth(2)).toContainText('success')
  await expect(sessions.nth(2)).toContainText('found 24 running shoes')

  // The search's trajectory with its steps.
  const trajectory = page.getByTestId('trajectory-card').filter({ hasText: 'search for running shoes' })
  await trajectory.getByText('search for running shoes').click()
  await expect(trajectory.getByTestId('trajectory-step')).toHaveCount(SEARCH_STEPS.length)
  await expect(trajectory.getByTestId('trajectory-step').filter({ hasText: '✓ verified' })).toHaveCount(2)

  // App knowledge by type: results-load was confirmed by the failed run (0.6 + 0.4 × 0.2).
  await expect(page.getByTestId('confidence-chart')).toBeVisible()
  const timing = page.getByRole('table', { name: 'Timing facts' })
  await expect(timing.getByTestId('fact-results-load').getByTestId('fact-confidence')).toHaveText('0.68')
  const quirks = page.getByRole('table', { name: 'Quirk facts' })
  await expect(quirks.getByTestId('fact-cookie-banner').getByTestId('fact-confidence')).toHaveText('0.60')
  const apiFacts = await factsOf(request, SHOP)
  expect(apiFacts.find((f) => f.key === 'results-load')).toMatchObject({ sources: 2 })
  expect(apiFacts.find((f) => f.key === 'results-load')?.confidence).toBeCloseTo(0.68, 5)

  // Selectors ranked per element: two successes, then one (volatile), then the failing one greyed.
  const searchButton = page
    .getByTestId('selector-row')
    .filter({ hasText: /#search-btn|@e12|button\.search-old/ })
  await expect(searchButton).toHaveCount(3)
  await expect(searchButton.nth(0)).toHaveAttribute('data-selector', '#search-btn')
  await expect(searchButton.nth(0).getByTestId('selector-successes')).toHaveText('2')
  await expect(searchButton.nth(1)).toHaveAttribute('data-selector', '@e12')
  await expect(searchButton.nth(1)).toContainText('volatile')
  await expect(searchButton.nth(2)).toHaveAttribute('data-selector', 'button.search-old')
  await expect(searchButton.nth(2)).toHaveAttribute('data-known-good', 'false')
  await expect(searchButton.nth(2)).toHaveClass(/greyed/)
  await expect(searchButton.nth(2).getByTestId('selector-failures')).toHaveText('1')
  await shot(page, 'run-domain')

  // A fact deleted in the browser (asked twice) is gone from the API.
  await page.getByRole('button', { name: 'Delete fact cookie-banner' }).click()
  await page.getByRole('button', { name: 'Cancel' }).click()
  await expect(quirks.getByTestId('fact-cookie-banner')).toBeVisible()
  await page.getByRole('button', { name: 'Delete fact cookie-banner' }).click()
  await page.getByRole('button', { name: 'Confirm delete' }).click()
  await expect(page.getByTestId('fact-cookie-banner')).toHaveCount(0)
  expect((await factsOf(request, SHOP)).map((f) => f.key)).toEqual(['results-load'])
})

test('deleting a run in the browser removes it through the API; its resume shows the parent deleted', async ({
  request,
}) => {
  await page.goto(`/runs/e2e-search?agent=${AGENT}`)
  await expect(page.getByRole('heading', { name: 'Run e2e-search' })).toBeVisible()
  await page.getByRole('button', { name: 'Delete run e2e-search' }).click()
  await page.getByRole('button', { name: 'Confirm delete' }).click()
  await expect(page.getByRole('heading', { name: 'Runs', exact: true })).toBeVisible()
  await expect(page.getByRole('table', { name: 'Runs' }).getByTestId('run-e2e-search')).toHaveCount(0)
  expect(await runOf(request, 'e2e-search')).toBeNull()
  // Its trajectory went with it; the resume's lineage now starts at the resume itself.
  await page.goto(`/runs/e2e-resume?agent=${AGENT}`)
  await expect(page.getByTestId('lineage-parent-missing')).toContainText('parent deleted (e2e-search)')
  await expect(page.getByRole('list', { name: 'Lineage' }).getByTestId('lineage-e2e-fork')).toHaveCount(0)
  await page.goto(`/runs/domains/${SHOP}?agent=${AGENT}`)
  await expect(
    page.getByTestId('trajectory-card').filter({ hasText: 'search for running shoes' }),
  ).toHaveCount(0)
})

test('clearing a scope in the browser removes its hints through the API', async ({ request }) => {
  const added = await gql(
    request,
    `mutation { addRunHint(input: ${literal({ agentId: AGENT, scope: 'eval-b', text: 'close cookie banners before searching' })}) { __typename ... on RunHint { id } ... on Error { message } } }`,
  )
  expect(added.addRunHint.message).toBeUndefined()
  await page.goto(`/runs/domains/${DOCS}?agent=${AGENT}&scope=eval-b`)
  await expect(page.getByTestId('hint')).toContainText('close cookie banners before searching')
  await page.getByRole('button', { name: 'Clear scope eval-b' }).click()
  await page.getByRole('button', { name: 'Confirm delete' }).click()
  await expect(page.getByRole('heading', { name: 'Runs', exact: true })).toBeVisible()
  const hints = await gql(
    request,
    `query { runHints(agentId: ${literal(AGENT)}, scope: "eval-b") { __typename ... on QueryRunHintsSuccess { data { id } } ... on Error { message } } }`,
  )
  expect(hints.runHints.data).toEqual([])
})

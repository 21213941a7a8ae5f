import type { APIRequestContext, Page } from '@playwright/test'
import { ADMIN_KEY, API_PORT } from '../playwright.config'
import { createAgent, gql, shot, signedInPage } from './api'
import { expect, test } from './fixtures'

// The Metrics page (issue 17) against the real API: agents write and search through the API, the
// server samples every second (ENGRAM_METRICS_SAMPLE_MS in the e2e config), and the page shows the
// current values and charts; what it shows is checked against serverMetrics and /metrics.
const AGENT = 'metrics-e2e-agent'

async function addMessages(request: APIRequestContext, conversationId: string, contents: string[]) {
  const data = await gql(
    request,
    `mutation($input: AddMessagesInput!) { addMessages(input: $input) { __typename ... on Error { message } } }`,
    {
      input: {
        agentId: AGENT,
        conversationId,
        messages: contents.map((content) => ({ role: 'USER', content })),
      },
    },
  )
  expect(data.addMessages.message).toBeUndefined()
}

/** The newest sample's message count, as the API reports it. */
async function sampledMessages(request: APIRequestContext): Promise<number | null> {
  const data = await gql(
    request,
    `{ serverMetrics { ... on ServerMetrics { current { counts { messages } } } } }`,
  )
  return data.serverMetrics.current?.counts.messages ?? null
}

test.describe
  .serial('Metrics page', () => {
    let page: Page

    test.beforeAll(async ({ browser, request }) => {
      page = await signedInPage(browser)
      await createAgent(request, AGENT)
    })
    test.afterAll(async () => {
      await page?.close()
    })

    test('shows the current values and charts of the sampled series', async ({ request }) => {
      await addMessages(request, 'm1', ['I water the ferns on Sundays.', 'The spare key is in the blue pot.'])
      const search = await gql(
        request,
        `query { search(input: { agentId: "${AGENT}", query: "ferns" }) { __typename } }`,
      )
      expect(search.search.__typename).toBe('SearchResult')
      // Messages of other specs may exist: the page must show what the server sampled.
      await expect.poll(() => sampledMessages(request)).toBeGreaterThanOrEqual(2)

      await page.getByRole('link', { name: 'Metrics', exact: true }).click()
      await expect(page.getByRole('heading', { name: 'Metrics', exact: true })).toBeVisible()
      await expect(page.getByTestId('metrics-sampling')).toContainText('A sample every 1 s')
      // The chart's own surface (a legend's icons are small surfaces of their own).
      for (const chart of [
        'chart-requests',
        'chart-errors',
        'chart-latency',
        'chart-search',
        'chart-caches',
        'chart-queue',
      ])
        await expect(page.getByTestId(chart).getByRole('application')).toBeVisible()
      // The search above was sampled: the search chart has the MESSAGES scope's line.
      await expect(page.getByTestId('chart-search').locator('.recharts-line')).not.toHaveCount(0)
      const messages = await sampledMessages(request)
      await expect(page.getByTestId('metric-messages')).toHaveText(String(messages))
      await expect(page.getByTestId('metric-db')).toHaveText(/\d+(\.\d)? (B|KB|MB)/)
      await shot(page, 'metrics')
    })

    test('follows new samples without a reload', async ({ request }) => {
      const before = Number(await page.getByTestId('metric-messages').textContent())
      await addMessages(request, 'm2', ['One more.', 'And another.', 'And a third.'])
      await expect.poll(() => sampledMessages(request)).toBeGreaterThanOrEqual(before + 3)
      await expect(page.getByTestId('metric-messages')).toHaveText(String(await sampledMessages(request)))
    })

    test('/metrics answers Prometheus text for the admin key and 401 without it', async ({ request }) => {
      const url = `http://127.0.0.1:${API_PORT}/metrics`
      expect((await request.get(url)).status()).toBe(401)
      const scraped = await request.get(url, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })
      expect(scraped.status()).toBe(200)
      const text = await scraped.text()
      expect(text).toMatch(/^engram_messages \d+$/m)
      expect(text).toContain('engram_graphql_requests_total{operation="addMessages",type="mutation"}')
      expect(text).not.toContain(AGENT)
    })
  })

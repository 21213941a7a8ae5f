import type { Page } from '@playwright/test'
import { createAgent, gql, shot, signedInPage } from './api'
import { expect, test } from './fixtures'

// Maintenance (issue 17 §4) in the dashboard against the real API: the page shows the schedule
// and the rules, a dry run and a run started from the browser appear in the runs table, and an
// agent's retention set in the browser is read back through the API.
const AGENT = 'maint-agent'

const RUNS = `{ maintenanceRuns(first: 20) { ... on MaintenanceRunPage { totalCount runs { id dryRun trigger status } } } }`

test.describe.configure({ mode: 'serial' })

test.describe('maintenance page', () => {
  let page: Page
  test.beforeAll(async ({ browser, request }) => {
    await createAgent(request, AGENT)
    await gql(
      request,
      `mutation { addMessage(input: { agentId: "${AGENT}", conversationId: "maint-chat", role: USER, content: "Kept: stored today." }) { __typename } }`,
    )
    page = await signedInPage(browser)
  })
  test.afterAll(async () => page?.close())

  test('shows the schedule, and runs dry then for real from the browser', async ({ request }) => {
    await page.getByRole('link', { name: 'Maintenance' }).click()
    await expect(page.getByRole('heading', { name: 'Maintenance', exact: true })).toBeVisible()
    await expect(page.getByTestId('next-run')).toContainText('03:00 UTC')
    await expect(page.getByTestId('retention-days')).toContainText('90 days')
    const before = (await gql(request, RUNS)).maintenanceRuns.totalCount as number

    await page.getByRole('button', { name: 'Dry run' }).click()
    await expect(page.getByTestId('run-result')).toContainText('Dry run: would remove 0 conversation(s)')
    await page.getByRole('button', { name: 'Run now' }).click()
    await expect(page.getByTestId('run-result')).toContainText('Removed 0 conversation(s)')
    const table = page.getByRole('table', { name: 'Maintenance runs' })
    await expect(table.getByRole('row')).toHaveCount(before + 3)
    await expect(table).toContainText('manual · dry run')
    await shot(page, 'maintenance')

    // Through the API: two manual runs, the newer a real one, both succeeded; the message stayed.
    const { runs, totalCount } = (await gql(request, RUNS)).maintenanceRuns
    expect(totalCount).toBe(before + 2)
    expect(
      runs
        .slice(0, 2)
        .map((r: { dryRun: boolean }) => r.dryRun)
        .sort(),
    ).toEqual([false, true])
    expect(
      runs
        .slice(0, 2)
        .every(
          (r: { status: string; trigger: string }) => r.status === 'SUCCEEDED' && r.trigger === 'MANUAL',
        ),
    ).toBe(true)
    const session = await gql(
      request,
      `{ session(agentId: "${AGENT}", conversationId: "maint-chat") { __typename ... on Session { messageCount } } }`,
    )
    expect(session.session).toEqual({ __typename: 'Session', messageCount: 1 })
  })

  test("sets an agent's retention, read back through the API", async ({ request }) => {
    const form = page.getByRole('form', { name: 'Agent retention' })
    await form.getByLabel('Agent').selectOption(AGENT)
    await form.getByLabel('Days').fill('14')
    await form.getByRole('button', { name: 'Save retention' }).click()
    await expect(form.getByRole('status')).toContainText(`${AGENT} keeps episodic memory 14 days`)
    const settings = await gql(
      request,
      `{ maintenanceSettings(agentId: "${AGENT}") { ... on AgentMaintenanceSettings { retentionDays effectiveRetentionDays } } }`,
    )
    expect(settings.maintenanceSettings).toEqual({ retentionDays: 14, effectiveRetentionDays: 14 })
  })
})

import type { APIRequestContext, Page } from '@playwright/test'
import { createAgent, gql, shot, signedInPage } from './api'
import { expect, test } from './fixtures'

// The working context page (issue 17, spec 002's L1) against the real API: an agent's context is
// filled through GraphQL as an agent would; the page shows messages, tool results, the scratchpad
// and the token gauge; Flush and Clear clicked in the browser are checked through the API.
const AGENT = 'wc-agent'
const CONTEXT = `query($a: ID) { workingContext(agentId: $a) { ... on WorkingContext {
  tokenCount flushThresholdTokens scratchpad messages { content } toolResults { toolCallId } } } }`

async function contextOf(request: APIRequestContext) {
  return (await gql(request, CONTEXT, { a: AGENT })).workingContext
}

async function storedCount(request: APIRequestContext, conversationId: string): Promise<number> {
  const data = await gql(
    request,
    `query($a: ID, $c: String!) { session(agentId: $a, conversationId: $c) { ... on Session { messageCount } } }`,
    { a: AGENT, c: conversationId },
  )
  return data.session?.messageCount ?? 0
}

async function fill(request: APIRequestContext) {
  await gql(
    request,
    `mutation($a: ID, $m: [WorkingMessageInput!]!) { appendWorkingContext(agentId: $a, messages: $m, conversationId: "trip") { __typename } }`,
    {
      a: AGENT,
      m: [
        { role: 'USER', content: 'Find me a train to Vienna on Friday' },
        { role: 'ASSISTANT', content: 'Looking it up', name: 'travel-bot' },
      ],
    },
  )
  await gql(
    request,
    `mutation($a: ID) { recordToolResult(agentId: $a, toolCallId: "call-42", name: "search_trains", content: "RJX 160 at 08:25") { __typename } }`,
    { a: AGENT },
  )
  await gql(
    request,
    `mutation($a: ID) { setWorkingScratchpad(agentId: $a, scratchpad: "check night trains too") { __typename } }`,
    { a: AGENT },
  )
}

test.describe.configure({ mode: 'serial' })

let page: Page

test.beforeAll(async ({ browser, request }) => {
  await createAgent(request, AGENT)
  await fill(request)
  page = await signedInPage(browser)
})

test.afterAll(async () => {
  await page?.close()
})

test('the page shows what the agent holds, and the tokens against the flush threshold', async ({
  request,
}) => {
  await page.getByRole('link', { name: 'Working context', exact: true }).click()
  await expect(page.getByRole('heading', { name: 'Working context', exact: true })).toBeVisible()
  await page.getByLabel('Agent', { exact: true }).selectOption(AGENT)
  await expect(page).toHaveURL(new RegExp(`agent=${AGENT}`))
  const api = await contextOf(request)
  await expect(page.getByTestId('wc-messages')).toContainText('Find me a train to Vienna on Friday')
  await expect(page.getByTestId('wc-messages')).toContainText('travel-bot')
  await expect(page.getByTestId('wc-tool-results')).toContainText('call-42')
  await expect(page.getByTestId('wc-scratchpad')).toHaveText('check night trains too')
  // formatTokens writes "24 tokens".
  await expect(page.getByTestId('wc-tokens')).toHaveText(new RegExp(`^${api.tokenCount} tokens?$`))
  await expect(page.getByTestId('wc-threshold')).toHaveText('32K tokens')
  await expect(page.locator('meter#wc-gauge')).toHaveAttribute('value', String(api.tokenCount))
  await shot(page, 'working-context')
})

test('Flush stores the messages and tool results in the conversation; the scratchpad stays', async ({
  request,
}) => {
  await page.getByRole('button', { name: 'Flush to conversation' }).click()
  await expect(page.getByTestId('context-action')).toContainText('Stored 3 messages in trip')
  await expect(page.getByText('No messages held.')).toBeVisible()
  expect(await storedCount(request, 'trip')).toBe(3)
  const api = await contextOf(request)
  expect(api).toMatchObject({ messages: [], toolResults: [], scratchpad: 'check night trains too' })
})

test('Clear empties it, scratchpad included, storing nothing', async ({ request }) => {
  await fill(request)
  await page.reload()
  await expect(page.getByTestId('wc-messages')).toContainText('Vienna')
  page.once('dialog', (dialog) => dialog.accept())
  await page.getByRole('button', { name: 'Clear', exact: true }).click()
  await expect(page.getByTestId('context-action')).toHaveText('Cleared.')
  await expect(page.getByText('No messages held.')).toBeVisible()
  expect(await contextOf(request)).toMatchObject({ messages: [], toolResults: [], scratchpad: '' })
  expect(await storedCount(request, 'trip')).toBe(3)
})

import type { APIRequestContext, Browser, Page } from '@playwright/test'
import { ADMIN_KEY, API_PORT, SCREENS_DIR } from '../playwright.config'
import { expect, watchPage } from './fixtures'

// Helpers the formation specs share: results are checked through the API, as an operator's
// script would see them, not only on screen.
const GRAPHQL = `http://127.0.0.1:${API_PORT}/graphql`

/** One GraphQL call as the admin; a GraphQL error fails the test with its message. Untyped, as the
 * other specs' calls: each spec reads the shape it asked for. */
export async function gql(
  request: APIRequestContext,
  query: string,
  variables: Record<string, unknown> = {},
) {
  const response = await request.post(GRAPHQL, {
    data: { query, variables },
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
  })
  const body = await response.json()
  expect(body.errors, JSON.stringify(body.errors)).toBeUndefined()
  return body.data
}

export async function createAgent(request: APIRequestContext, id: string): Promise<void> {
  await gql(request, `mutation($id: ID!) { createAgent(id: $id) { __typename } }`, { id })
}

/** A page kept across a serial spec's tests, watched for browser errors and signed in. */
export async function signedInPage(browser: Browser): Promise<Page> {
  const page = watchPage(await browser.newPage())
  await page.goto('/sign-in')
  await page.getByLabel('Admin API key').fill(ADMIN_KEY)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await expect(page.getByRole('heading', { name: 'Overview', exact: true })).toBeVisible()
  return page
}

/** A full-page screenshot into the run's screens folder (each backend's run has its own). */
export async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: `${SCREENS_DIR}/${name}.png`, fullPage: true })
}

/** An enum value inside a GraphQL literal (unquoted), e.g. a fact's type. */
export class Enum {
  constructor(readonly value: string) {}
}
export const e = (value: string) => new Enum(value)

/**
 * A value as a GraphQL literal. The mutations take their input inline: the spec then does not
 * depend on the names the schema gives its input types, only on the catalog's field names.
 */
export function literal(value: unknown): string {
  if (value instanceof Enum) return value.value
  if (Array.isArray(value)) return `[${value.map(literal).join(', ')}]`
  if (value && typeof value === 'object')
    return `{ ${Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${k}: ${literal(v)}`)
      .join(', ')} }`
  // JSON's string escapes are GraphQL's.
  return JSON.stringify(value)
}

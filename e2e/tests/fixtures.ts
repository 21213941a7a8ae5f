import { test as base, expect, type Page } from '@playwright/test'

export { expect }

/**
 * Console errors and uncaught page errors (React's hydration error #418 among them) fail the test
 * they happen in. Pages of the test's own context are watched automatically; a page a spec keeps
 * across tests (browser.newPage() in beforeAll) is watched with watchPage(page).
 */
const problems: string[] = []
/** Allowed for the running test only (cleared after it). */
const allowedInTest: RegExp[] = []
const watched = new WeakSet<Page>()

/** Watches a page; `allow` lists console errors expected on it for its whole life. */
export function watchPage(page: Page, allow: RegExp[] = []): Page {
  if (watched.has(page)) return page
  watched.add(page)
  page.on('console', (message) => {
    if (message.type() !== 'error') return
    const text = message.text()
    if (![...allow, ...allowedInTest].some((pattern) => pattern.test(text))) problems.push(`console: ${text}`)
  })
  page.on('pageerror', (error) => problems.push(`pageerror: ${error.message}`))
  return page
}

/** Console errors the running test expects on purpose (e.g. Chromium logging a deliberate 401). */
export function allowConsoleErrors(...patterns: RegExp[]): void {
  allowedInTest.push(...patterns)
}

// biome-ignore lint/suspicious/noConfusingVoidType: Playwright types a fixture that provides nothing as void
export const test = base.extend<{ failOnBrowserErrors: void }>({
  failOnBrowserErrors: [
    async ({ context }, use) => {
      for (const page of context.pages()) watchPage(page)
      context.on('page', (page) => watchPage(page))
      problems.length = 0
      await use()
      allowedInTest.length = 0
      const found = problems.splice(0)
      expect(found, 'the browser reported errors (console.error, pageerror, hydration)').toEqual([])
    },
    { auto: true },
  ],
})

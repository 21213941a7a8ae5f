import { createTokenCounter } from '@engram/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

// A 40-message support conversation like the one issue 10 was found on: eight long opening turns
// (an error, a URL, an address, numbers), then 32 short ones under the compressor's 200 characters.
function supportConversation(): { role: 'USER' | 'ASSISTANT'; content: string }[] {
  const turns: { role: 'USER' | 'ASSISTANT'; content: string }[] = []
  for (let i = 0; i < 20; i++) {
    turns.push({
      role: 'USER',
      content:
        i < 4
          ? `Still failing on step ${i}. The sync job logs Error: ECONNRESET while uploading batch ${1000 + i} to https://files.example.com/upload/${i}, then retries and stops after 5 attempts.\nI tried again from the office network at 10.20.14.${i} with the same result.`
          : `Dana again (turn ${i}): the export to the shared drive still hangs at ${40 + i}%.`,
    })
    turns.push({
      role: 'ASSISTANT',
      content:
        i < 4
          ? `Thanks Dana. Ticket ${4200 + i} is updated with the upload URL and the address you gave. Our storage team sees the retries on their side and is looking at the proxy timeout, which is set to 30 seconds for uploads over 50 MB.\nI will write back within the hour.`
          : `Sorry to hear that, Dana. Can you share the exact error message from step ${i}?`,
    })
  }
  return turns
}

describe('contextWindow never returns more tokens than the budget it reports (issue 10)', () => {
  let t: TestApp
  let key: string
  const counter = createTokenCounter('o200k_base')
  const WINDOW = `query($max: Int!) { contextWindow(conversationId: "support", budget: { maxContextTokens: $max }) {
    __typename ... on Error { message }
    ... on ContextWindow {
      full { id content } compressed { content tokenCount message { id content } } dropped { id }
      totalTokens fullTokens compressedTokens availableBudget underPressure overBudget trimmedFullMessages
      budget { fullMessageWindow }
    } } }`

  beforeAll(async () => {
    t = await createTestApp()
    key = await createAgentKey(t, 'agent-cw')
    for (const turn of supportConversation()) {
      // A client-supplied count is a claim: the window counts the text itself.
      await t.gql(
        `mutation($r: Role!, $c: String!) { addMessage(input: { conversationId: "support", role: $r, content: $c, tokenCount: 5 }) { __typename } }`,
        { r: turn.role, c: turn.content },
        key,
      )
      t.clock.advance(1000)
    }
  })
  afterAll(() => t.close())

  const returnedTokens = (w: any) =>
    w.full.reduce((s: number, m: any) => s + counter.count(m.content), 0) +
    w.compressed.reduce((s: number, c: any) => s + counter.count(c.content), 0)

  it('compresses for real and counts the text it returns (maxContextTokens 9800: 704 available)', async () => {
    const result = await t.gql(WINDOW, { max: 9800 }, key)
    const w = result.data.contextWindow
    expect(w.__typename).toBe('ContextWindow')
    expect(w).toMatchObject({
      availableBudget: 704,
      underPressure: true,
      overBudget: false,
      trimmedFullMessages: 0,
    })
    const returned = returnedTokens(w)
    expect(returned).toBeLessThanOrEqual(704)
    expect(w.totalTokens).toBe(returned)
    expect(w.fullTokens + w.compressedTokens).toBe(w.totalTokens)
    expect(w.full.length + w.compressed.length + w.dropped.length).toBe(40)
    expect(w.compressed.length).toBeGreaterThan(0)
    for (const c of w.compressed) {
      // Compressed means shorter: never the original text again.
      expect(c.content).not.toBe(c.message.content)
      expect(c.tokenCount).toBe(counter.count(c.content))
      expect(c.tokenCount).toBeLessThan(counter.count(c.message.content))
    }
  })

  it('shrinks the full window oldest first and says so when it alone exceeds the budget (9400: 304 available)', async () => {
    const result = await t.gql(WINDOW, { max: 9400 }, key)
    const w = result.data.contextWindow
    expect(w).toMatchObject({ availableBudget: 304, underPressure: true, overBudget: true })
    expect(w.trimmedFullMessages).toBeGreaterThan(0)
    const returned = returnedTokens(w)
    expect(returned).toBeLessThanOrEqual(304)
    expect(w.totalTokens).toBe(returned)
    // The newest messages are the ones kept whole.
    const all = await t.gql(
      `{ session(conversationId: "support") { ... on Session { messages(first: 40) { edges { node { id } } } } } }`,
      {},
      key,
    )
    const ids = all.data.session.messages.edges.map((e: any) => e.node.id)
    const kept = w.full.map((m: any) => m.id)
    expect(kept).toEqual(ids.slice(ids.length - kept.length))
    expect(kept.length).toBe(w.budget.fullMessageWindow - w.trimmedFullMessages)
  })
})

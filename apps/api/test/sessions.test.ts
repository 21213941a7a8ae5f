import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

describe('sessions, messages and the context window over GraphQL', () => {
  let t: TestApp
  let key: string
  beforeAll(async () => {
    t = await createTestApp()
    key = await createAgentKey(t, 'agent-s')
  })
  afterAll(() => t.close())

  const PAGE = `query($after: String, $first: Int) { session(conversationId: "paged") { ... on Session { messageCount messages(first: $first, after: $after) { edges { cursor node { id content timestamp } } pageInfo { hasNextPage endCursor } } } } }`

  it('imports a history with its own timestamps and pages through it in time order', async () => {
    // Given out of order, with two sharing one timestamp: the list orders by (timestamp, id).
    const messages = [3, 1, 2, 2, 0].map((minute, i) => ({
      role: 'USER',
      content: `m${minute}-${i}`,
      timestamp: new Date(Date.UTC(2025, 4, 8, 13, minute)).toISOString(),
      tokenCount: 7,
      metadata: { source: 'import', i },
    }))
    const added = await t.gql(
      `mutation($m: [MessageInput!]!) { addMessages(input: { conversationId: "paged", messages: $m }) { ... on AddMessagesPayload { messages { tokenCount } } } }`,
      { m: messages },
      key,
    )
    expect(added.data.addMessages.messages.map((m: any) => m.tokenCount)).toEqual([7, 7, 7, 7, 7])
    const seen: string[] = []
    let after: string | null = null
    for (let page = 0; page < 5; page++) {
      const result: any = await t.gql(PAGE, { first: 2, after }, key)
      const conn = result.data.session.messages
      seen.push(...conn.edges.map((e: any) => e.node.content))
      if (!conn.pageInfo.hasNextPage) break
      after = conn.pageInfo.endCursor
    }
    expect(seen).toEqual(['m0-4', 'm1-1', 'm2-2', 'm2-3', 'm3-0'])
  })

  it('rejects a cursor it did not issue', async () => {
    const result = await t.gql(PAGE, { first: 2, after: 'bm90LWEtY3Vyc29y' }, key)
    expect(result.errors?.[0]?.message ?? JSON.stringify(result.data)).toMatch(/cursor/)
  })

  it('compresses older messages into a [CONTEXT SUMMARY] and leaves them out of the context window', async () => {
    const ids: string[] = []
    for (let i = 0; i < 6; i++) {
      const r = await t.gql(
        `mutation($c: String!) { addMessage(input: { conversationId: "squash", role: ${i % 2 ? 'ASSISTANT' : 'USER'}, content: $c }) { ... on Message { id } } }`,
        { c: `step ${i}: visited https://example.com/page/${i}` },
        key,
      )
      ids.push(r.data.addMessage.id)
      t.clock.advance(1000)
    }
    const result = await t.gql(
      `mutation($id: ID!) { compressMessages(input: { conversationId: "squash", olderThanId: $id }) { __typename ... on CompressMessagesPayload { compressedCount summaryMessage { role content } session { messageCount } } } }`,
      { id: ids[4] },
      key,
    )
    const payload = result.data.compressMessages
    expect(payload.compressedCount).toBe(4)
    expect(payload.session.messageCount).toBe(7)
    expect(payload.summaryMessage.role).toBe('SYSTEM')
    expect(payload.summaryMessage.content).toMatch(/^\[CONTEXT SUMMARY\]\n\[Summary of 4 messages\]/)
    expect(payload.summaryMessage.content).toContain('https://example.com/page/0')
    const window = await t.gql(
      `{ contextWindow(conversationId: "squash") { ... on ContextWindow { full { content isCompressed } } } }`,
      {},
      key,
    )
    expect(window.data.contextWindow.full.map((m: any) => m.content.slice(0, 17))).toEqual([
      '[CONTEXT SUMMARY]',
      'step 4: visited h',
      'step 5: visited h',
    ])
  })

  it('partitions a conversation under pressure into full, compressed and dropped sets', async () => {
    const long = (i: number) =>
      `Message ${i} ${'with a long body of text that matters '.repeat(12)} https://example.com/${i}`
    for (let i = 0; i < 12; i++) {
      // The claimed 1,000 is ignored: the window counts the text (106 o200k tokens each).
      await t.gql(
        `mutation($c: String!) { addMessage(input: { conversationId: "pressure", role: USER, content: $c, tokenCount: 1000 }) { __typename } }`,
        { c: long(i) },
        key,
      )
      t.clock.advance(1000)
    }
    // Budget: 2,000 - 500 - 500 = 1,000 available; 12 x 106 = 1,272 is over the 0.7 trigger.
    const result = await t.gql(
      `{ contextWindow(conversationId: "pressure", budget: { maxContextTokens: 2000, systemPromptTokens: 500, responseReserveTokens: 500, fullMessageWindow: 4, compressionTriggerRatio: 0.7 }) {
        ... on ContextWindow { full { content } compressed { content tokenCount message { id } } dropped { id } fullTokens compressedTokens droppedTokens totalTokens originalTokens availableBudget underPressure overBudget budget { fullMessageWindow } } } }`,
      {},
      key,
    )
    const w = result.data.contextWindow
    expect(w).toMatchObject({
      availableBudget: 1000,
      originalTokens: 1272,
      underPressure: true,
      overBudget: false,
      budget: { fullMessageWindow: 4 },
    })
    // 4 window + 4 older full = 848 <= 850 (85%); then compressed while <= 950 (95%).
    expect(w.full).toHaveLength(8)
    expect(w.fullTokens).toBe(848)
    // Message 3 in spec 000's format (56 tokens, 904); message 2 only fits with its line clipped
    // to 100 characters (36 tokens, 940); messages 0 and 1 do not fit at all.
    expect(w.compressed.map((c: any) => c.tokenCount)).toEqual([36, 56])
    expect(w.dropped).toHaveLength(2)
    expect(w.totalTokens).toBe(940)
    expect(w.totalTokens).toBe(w.fullTokens + w.compressedTokens)
    const newest = w.compressed[1]
    expect(newest.content).toMatch(/^\[user\] Message 3 /)
    expect(newest.content).toContain('[preserved: https://example.com/3]')
    expect(newest.tokenCount).toBe(56)

    const tight = await t.gql(
      `{ contextWindow(conversationId: "pressure", budget: { maxContextTokens: 1500, systemPromptTokens: 500, responseReserveTokens: 500, fullMessageWindow: 4 }) { ... on ContextWindow { full { id } compressed { message { id } } dropped { id } totalTokens } } }`,
      {},
      key,
    )
    // 500 available: the window (424) fits, nothing older fits whole in 425; one more fits
    // compressed (36 tokens) in 475.
    expect(tight.data.contextWindow.full).toHaveLength(4)
    expect(tight.data.contextWindow.compressed).toHaveLength(1)
    expect(tight.data.contextWindow.dropped).toHaveLength(7)
    expect(tight.data.contextWindow.totalTokens).toBe(460)
  })

  it('uses the learned optimizer parameters as the default budget', async () => {
    await t.gql(
      `mutation { setOptimizerParameters(agentId: "agent-s", input: { fullMessageWindow: 12, compressionTrigger: 0.5 }) { __typename } }`,
    )
    const result = await t.gql(
      `{ contextWindow(conversationId: "pressure") { ... on ContextWindow { budget { fullMessageWindow compressionTriggerRatio maxContextTokens } } } }`,
      {},
      key,
    )
    expect(result.data.contextWindow.budget).toEqual({
      fullMessageWindow: 12,
      compressionTriggerRatio: 0.5,
      maxContextTokens: 200_000,
    })
  })

  it('deletes a session with its messages and memory entries', async () => {
    const before = await t.db.memoryEntry.count({ where: { session: { conversationId: 'squash' } } })
    expect(before).toBe(6)
    const result = await t.gql(
      `mutation { deleteSession(conversationId: "squash") { ... on DeleteSessionPayload { deleted } } }`,
      {},
      key,
    )
    expect(result.data.deleteSession.deleted).toBe(true)
    expect(await t.db.message.count({ where: { session: { conversationId: 'squash' } } })).toBe(0)
    expect(await t.db.memoryEntry.count({ where: { content: { startsWith: 'step ' } } })).toBe(0)
    const again = await t.gql(
      `mutation { deleteSession(conversationId: "squash") { ... on DeleteSessionPayload { deleted } } }`,
      {},
      key,
    )
    expect(again.data.deleteSession.deleted).toBe(false)
  })

  it('stores a generated admin key hashed only', async () => {
    const { ensureAdminKey } = await import('../src/admin-key.ts')
    const { hashApiKey } = await import('@engram/engine')
    const fresh = await createTestApp()
    try {
      await fresh.db.apiKey.deleteMany()
      const generated = await ensureAdminKey(fresh.db, undefined)
      expect(generated).toMatch(/^engram_[\w-]{43}$/)
      const rows = await fresh.db.apiKey.findMany()
      expect(rows).toHaveLength(1)
      expect(rows[0]?.keyHash).toBe(hashApiKey(generated as string))
      expect(JSON.stringify(rows)).not.toContain(generated)
      expect(await ensureAdminKey(fresh.db, undefined)).toBeNull()
      const viewer = await fresh.gql(`{ viewer { role } }`, {}, generated)
      expect(viewer.data.viewer.role).toBe('ADMIN')
    } finally {
      await fresh.close()
    }
  })

  it('a revoked key stops working at once', async () => {
    const k = await createAgentKey(t, 'agent-r')
    expect((await t.gql(`{ viewer { role } }`, {}, k)).status).toBe(200)
    const keys = await t.gql(`{ apiKeys(agentId: "agent-r") { ... on QueryApiKeysSuccess { data { id } } } }`)
    await t.gql(`mutation($id: ID!) { revokeApiKey(id: $id) { __typename } }`, {
      id: keys.data.apiKeys.data[0].id,
    })
    expect((await t.gql(`{ viewer { role } }`, {}, k)).status).toBe(401)
  })
})

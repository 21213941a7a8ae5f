// Behaviour kept by the performance work (issue 5): the prepared-statement paths, group commit,
// the optimizer reusing its redundancy join and search reusing its vector index.
import { hashApiKey } from '@engram/engine'
import { afterEach, describe, expect, it } from 'vitest'
import { anotherProcess, createAgentKey, createTestApp, type TestApp } from './helpers.ts'

const apps: TestApp[] = []
afterEach(async () => {
  for (const t of apps.splice(0)) await t.close().catch(() => {})
})
async function app() {
  const t = await createTestApp()
  apps.push(t)
  return t
}

const ADD = `mutation($c: String!, $t: String!) { addMessage(input: { conversationId: $c, role: USER, content: $t }) { ... on Message { id content } } }`
const SESSION = `query($c: String!) { session(conversationId: $c) { ... on Session { messageCount messages(first: 100) { edges { node { id content } } } } } }`

describe('the hot paths', () => {
  it('a key revoked by another process stops working with the next request (no key cache)', async () => {
    const t = await app()
    const key = await createAgentKey(t, 'agent-r')
    expect((await t.gql(ADD, { c: 'c', t: 'first' }, key)).status).toBe(200)
    const other = await anotherProcess(t)
    await other.run(
      `UPDATE "ApiKey" SET "revokedAt" = ? WHERE "keyHash" = ?`,
      '2026-01-15T10:00:00.000+00:00',
      hashApiKey(key),
    )
    await other.close()
    const refused = await t.gql(ADD, { c: 'c', t: 'second' }, key)
    expect(refused.status).toBe(401)
    expect(refused.errors?.[0]?.extensions?.code).toBe('UNAUTHENTICATED')
  })

  it('concurrent addMessage calls are each stored once, with their entry, in the order they were written', async () => {
    const t = await app()
    const key = await createAgentKey(t, 'agent-c')
    const texts = Array.from({ length: 40 }, (_, i) => `message number ${i} about the checkout page`)
    const results = await Promise.all(texts.map((text) => t.gql(ADD, { c: 'burst', t: text }, key)))
    const ids = results.map((r) => Number(r.data.addMessage.id))
    expect(new Set(ids).size).toBe(40)
    const session = await t.gql(SESSION, { c: 'burst' }, key)
    expect(session.data.session.messageCount).toBe(40)
    const stored = session.data.session.messages.edges.map((e: any) => e.node)
    expect(stored.map((m: any) => m.content).sort()).toEqual([...texts].sort())
    // Each message has its entry. With SQLite's single writer, ids also follow the order the
    // writes were committed in; Postgres hands out ids as concurrent transactions insert, so
    // there only the pairing holds.
    const entries = await t.db.memoryEntry.findMany({ where: { agentId: 'agent-c' }, orderBy: { id: 'asc' } })
    const sorted = [...ids].sort((a, b) => a - b)
    if (t.postgresUrl) expect(entries.map((e) => Number(e.messageId)).sort((a, b) => a - b)).toEqual(sorted)
    else expect(entries.map((e) => e.messageId)).toEqual(sorted)
  })

  it('a batch that fails while being written stores nothing, and the requests beside it are stored', async () => {
    const t = await app()
    const key = await createAgentKey(t, 'agent-b')
    await t.gql(ADD, { c: 'doomed', t: 'creates the session' }, key)
    // The session disappears under the batch (deleted by another connection after it was cached).
    const other = await anotherProcess(t)
    await other.run(`DELETE FROM "Session" WHERE "conversationId" = 'doomed'`)
    await other.close()
    const BATCH = `mutation($m: [MessageInput!]!) { addMessages(input: { conversationId: "doomed", messages: $m }) { __typename } }`
    const [batch, beside] = await Promise.all([
      t.gql(
        BATCH,
        {
          m: [
            { role: 'USER', content: 'one' },
            { role: 'USER', content: 'two' },
          ],
        },
        key,
      ),
      t.gql(ADD, { c: 'fine', t: 'stored' }, key),
    ])
    expect(batch.errors ?? batch.data.addMessages.__typename).not.toBe('AddMessagesPayload')
    expect(beside.data.addMessage.content).toBe('stored')
    const contents = (await t.db.message.findMany({ where: { agentId: 'agent-b' } })).map((m) => m.content)
    expect(contents).toEqual(['stored'])
  })

  it('the optimizer finds redundancy again once entries change, and gives the same result when they do not', async () => {
    const t = await app()
    const key = await createAgentKey(t, 'agent-o')
    const RUN = `mutation { runOptimizer { ... on OptimizationSnapshot { entriesCompressed entriesDropped entriesPromoted } } }`
    await t.gql(ADD, { c: 'c', t: 'the checkout page shows a banner for invalid card numbers' }, key)
    const first = await t.gql(RUN, {}, key)
    const again = await t.gql(RUN, {}, key)
    expect(again.data.runOptimizer).toEqual(first.data.runOptimizer)
    t.clock.advance(1_000)
    await t.gql(ADD, { c: 'c', t: 'the checkout page shows a banner for invalid card numbers' }, key)
    const changed = await t.gql(RUN, {}, key)
    expect(changed.data.runOptimizer.entriesCompressed).toBe(1)
    const older = await t.db.memoryEntry.findFirst({ where: { agentId: 'agent-o' }, orderBy: { id: 'asc' } })
    expect(older?.isCompressed).toBe(true)
  })

  it('search sees memories another process wrote after the vector index was built', async () => {
    const t = await app()
    const key = await createAgentKey(t, 'agent-s')
    const SEARCH = `query($q: String!) { search(input: { query: $q, scopes: [MEMORIES], strategy: SIMILARITY }) { ... on SearchResult { hits { text } } } }`
    await t.gql(
      `mutation { createMemory(input: { content: "Prefers dark mode in every editor", category: PREFERENCE }) { __typename } }`,
      {},
      key,
    )
    expect((await t.gql(SEARCH, { q: 'kayak trips on the river' }, key)).data.search.hits).toHaveLength(1)
    const other = await anotherProcess(t)
    const at = '2026-01-15T10:00:00.000+00:00'
    await other.run(
      `INSERT INTO "MemoryItem" ("agentId", "content", "category", "validFrom", "contentHash", "tokenCount", "createdAt", "updatedAt") VALUES ('agent-s', 'Goes on kayak trips on the river', 'fact', ?, 'h', 7, ?, ?)`,
      at,
      at,
      at,
    )
    await other.close()
    const hits = (await t.gql(SEARCH, { q: 'kayak trips on the river' }, key)).data.search.hits
    expect(hits.map((h: any) => h.text)).toContain('Goes on kayak trips on the river')
  })

  it('memoryContext reuses the sections that do not depend on the query, and sees writes at once', async () => {
    const t = await app()
    const key = await createAgentKey(t, 'agent-m')
    const CONTEXT = `query($q: String!) { memoryContext(input: { query: $q }) { ... on MemoryContext { text cached } } }`
    const PIN = `mutation($c: String!) { createMemory(input: { content: $c, category: FACT, pinned: true }) { __typename } }`
    await t.gql(PIN, { c: 'Works from Lisbon' }, key)
    const first = await t.gql(CONTEXT, { q: 'where does the user work' }, key)
    expect(first.data.memoryContext).toMatchObject({ cached: false })
    expect(first.data.memoryContext.text).toContain('Works from Lisbon')
    await t.gql(PIN, { c: 'Speaks Portuguese' }, key)
    const second = await t.gql(CONTEXT, { q: 'which languages' }, key)
    expect(second.data.memoryContext.text).toContain('Works from Lisbon')
    expect(second.data.memoryContext.text).toContain('Speaks Portuguese')
  })
})

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

// Many clients at once: every request is answered on its own merits. 1,000 addMessage calls in
// one tick made Prisma batch their session lookups into one query past SQLite's parameter limit
// ("Unexpected error." for all of them).
describe('a thousand concurrent writes', () => {
  let t: TestApp
  let key: string
  beforeAll(async () => {
    t = await createTestApp()
    key = await createAgentKey(t, 'crowd')
  })
  afterAll(() => t.close())

  it('stores every message, across many conversations, with no error', async () => {
    const results = await Promise.all(
      Array.from({ length: 1_000 }, (_, i) =>
        t.gql(
          `mutation($c: String!, $m: String!) { addMessage(input: { conversationId: $c, role: USER, content: $m }) { __typename ... on Error { message } } }`,
          { c: `conv-${i % 250}`, m: `message ${i}` },
          key,
        ),
      ),
    )
    const failures = results.filter((r) => r.errors || r.data?.addMessage?.__typename !== 'Message')
    expect(failures.slice(0, 3)).toEqual([])
    const stored = await t.db.message.count({ where: { agentId: 'crowd' } })
    expect(stored).toBe(1_000)
    expect(await t.db.session.count({ where: { agentId: 'crowd' } })).toBe(250)
  }, 60_000)
})

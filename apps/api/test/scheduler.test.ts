import { ManualTimerClock } from '@engram/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAgentKey, createTestApp, type TestApp } from './helpers.ts'

// Issue 18's delays on the app's injected clock (the brief: "every delay, timeout, TTL, debounce
// and lease runs on an injectable clock"): on a manual one, each happens only once the test has
// moved the clock past it, on the real database, with no real wait.

const ADD = `mutation($c: String!, $t: String!) { addMessage(input: { conversationId: $c, role: USER, content: $t }) {
  __typename } }`
const SEARCH = `query($q: String!, $s: [SearchScope!]) { search(input: { query: $q, scopes: $s }) {
  ... on SearchResult { hits { id } } } }`

/** Turns of the event loop until `done` holds (real I/O: the database), at most ~1 s. */
async function until(done: () => boolean | Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200 && !(await done()); i++) await new Promise((resolve) => setTimeout(resolve, 5))
}

describe("the app's delays run on its injected clock", () => {
  let t: TestApp
  let clock: ManualTimerClock

  beforeAll(async () => {
    clock = new ManualTimerClock(new Date())
    t = await createTestApp({
      clock,
      env: { ENGRAM_LEXICAL_INDEX_REFRESH_MS: 100, ENGRAM_SEARCH_ACCESS_FLUSH_MS: 1_000 },
    })
  })
  afterAll(async () => {
    await t.close()
  })

  it('brings a held lexical index up to a write only once the catch-up delay has passed', async () => {
    const key = await createAgentKey(t, 'sched-lexical')
    await t.gql(ADD, { c: 'c1', t: 'the zqxsched lighthouse' }, key)
    expect((await t.gql(SEARCH, { q: 'zqxsched', s: ['MESSAGES'] }, key)).data.search.hits).toHaveLength(1)
    const indexes = t.app.services.lexicalIndexes
    const held = () => indexes.peek('messages', 'sched-lexical')?.size ?? -1
    expect(held()).toBe(1)
    await t.gql(ADD, { c: 'c1', t: 'the zqxsched harbour' }, key)
    expect(clock.pendingDelays()).toContain(100)
    // Real time passes (database round trips); the clock does not: nothing is read yet.
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(held()).toBe(1)
    clock.advance(100)
    await indexes.settled()
    expect(held()).toBe(2)
  })

  it('writes search accesses on the flush timer once its interval has passed, not before', async () => {
    const accesses = t.app.services.search.accesses
    accesses.start()
    try {
      const key = await createAgentKey(t, 'sched-access')
      const created = await t.gql(
        `mutation { createMemory(input: { content: "the zqxsched ferry leaves at dawn", category: FACT }) {
          ... on MemoryWrite { memory { id } } } }`,
        {},
        key,
      )
      const id = created.data.createMemory.memory.id as string
      // The flush a search would trigger itself is due only after the interval: move the clock
      // less than that between the creation and the search.
      expect(
        (await t.gql(SEARCH, { q: 'zqxsched ferry', s: ['MEMORIES'] }, key)).data.search.hits,
      ).toHaveLength(1)
      expect(accesses.pendingOf('sched-access', id)).toBe(1)
      clock.advance(500)
      await new Promise((resolve) => setTimeout(resolve, 20))
      expect(accesses.pendingOf('sched-access', id)).toBe(1)
      // The timer's next tick (at most one interval on) writes it with no search coming.
      clock.advance(500)
      await until(async () => {
        const row = await t.db.memoryItem.findUnique({ where: { id: Number(id) } })
        return row?.accessCount === 1
      })
      expect(accesses.pendingOf('sched-access', id)).toBe(0)
      expect((await t.db.memoryItem.findUnique({ where: { id: Number(id) } }))?.accessCount).toBe(1)
    } finally {
      await accesses.stop()
    }
  })
})

// Issue 18: the optimizer keeps each agent's entries between runs and reads only the rows new or
// changed since the last. A kept run must be a cold run: two apps on identical databases, one
// keeping entries and one reading them whole every run, get the same writes (through the API and
// by another process behind the engine's back), and every cycle must act on the same entries.
import { afterEach, describe, expect, it } from 'vitest'
import { seededRandom } from '../../../packages/core/src/random.ts'
import { anotherProcess, createAgentKey, createTestApp, type TestApp } from './helpers.ts'

const apps: TestApp[] = []
afterEach(async () => {
  for (const t of apps.splice(0)) await t.close().catch(() => {})
})

const ADD = `mutation($c: String!, $m: [MessageInput!]!) { addMessages(input: { conversationId: $c, messages: $m }) { __typename } }`
const RUN = `mutation { runOptimizer { __typename ... on OptimizationSnapshot { tokensBefore tokensAfter entriesCompressed entriesDropped entriesPromoted usageRatio } } }`

// A small vocabulary, so near duplicates (the redundancy join's pairs) are common; key facts for
// promotions, fillers for low relevance.
const WORDS = 'checkout page banner card invalid number submit form login user cart price shipping'.split(' ')

function text(random: () => number): string {
  const roll = random()
  if (roll < 0.1) return 'ok'
  const words = Array.from(
    { length: 4 + Math.floor(random() * 6) },
    () => WORDS[Math.floor(random() * WORDS.length)],
  )
  if (roll < 0.2) return `${words.join(' ')} https://example.com/${Math.floor(random() * 5)}`
  if (roll < 0.3) return `error: ${words.join(' ')} failed`
  return words.join(' ')
}

describe('the optimizer keeping entries between runs', () => {
  it('acts exactly as a run that reads every entry, through API writes and another process’s writes', async () => {
    const warm = await createTestApp()
    const cold = await createTestApp({ env: { ENGRAM_OPTIMIZER_CACHED_ENTRIES: 0 } })
    apps.push(warm, cold)
    const keys = [await createAgentKey(warm, 'agent-w'), await createAgentKey(cold, 'agent-w')]
    const both = [warm, cold]
    const random = seededRandom(18)
    const state = (t: TestApp) =>
      t.db.memoryEntry.findMany({
        where: { agentId: 'agent-w' },
        orderBy: { id: 'asc' },
        select: {
          id: true,
          type: true,
          content: true,
          isCompressed: true,
          relevance: true,
          tokenCount: true,
        },
      })
    let acted = 0
    let readWarm = 0
    let readCold = 0
    for (let cycle = 0; cycle < 16; cycle++) {
      // The rows the last run saw (and the warm app keeps).
      const rows = await state(warm)
      const messages = Array.from({ length: 5 + Math.floor(random() * 25) }, () => ({
        role: random() < 0.3 ? 'ASSISTANT' : 'USER',
        content: text(random),
      }))
      const conversation = `c${cycle % 3}`
      for (const [i, t] of both.entries())
        expect(
          (await t.gql(ADD, { c: conversation, m: messages }, keys[i])).data.addMessages.__typename,
        ).toBe('AddMessagesPayload')
      // Another process edits, promotes (without touching updatedAt) and deletes rows.
      const pick = (among = rows) => (among[Math.floor(random() * among.length)] ?? rows[0])?.id as number
      // A filler the last run compressed, which this one would drop: promoted behind the engine's back
      // (updatedAt untouched), it must be kept.
      const fillers = rows.filter((row) => row.content === 'ok' && row.type === 'short_term')
      const edits = [
        {
          sql: `UPDATE "MemoryEntry" SET "content" = ?, "updatedAt" = ? WHERE "id" = ?`,
          params: [text(random), `2026-02-01T00:00:00.${String(cycle).padStart(3, '0')}+00:00`, pick()],
        },
        {
          sql: `UPDATE "MemoryEntry" SET "type" = 'long_term', "relevance" = 1 WHERE "id" = ?`,
          params: [pick(fillers)],
        },
        { sql: `DELETE FROM "MemoryEntry" WHERE "id" = ?`, params: [pick()] },
      ].filter(() => random() < 0.6)
      for (const t of both) {
        const other = await anotherProcess(t)
        for (const { sql, params } of edits) await other.run(sql, ...params)
        await other.close()
      }
      // Recency moves entries across the last hour and last day: scores change with the clock.
      const step = [10 * 60_000, 2 * 3_600_000, 30 * 3_600_000][Math.floor(random() * 3)] as number
      for (const t of both) t.clock.advance(step)

      const [kept, whole] = await Promise.all(both.map((t, i) => t.gql(RUN, {}, keys[i])))
      expect(kept?.data.runOptimizer.__typename, JSON.stringify(kept)).toBe('OptimizationSnapshot')
      expect(kept?.data.runOptimizer, `cycle ${cycle}`).toEqual(whole?.data.runOptimizer)
      expect(await state(warm), `cycle ${cycle}`).toEqual(await state(cold))
      const snapshot = kept?.data.runOptimizer
      acted += snapshot.entriesCompressed + snapshot.entriesDropped + snapshot.entriesPromoted
      readWarm += warm.app.services.optimizer.lastRowsRead()
      readCold += cold.app.services.optimizer.lastRowsRead()
    }
    // Not a vacuous comparison: the runs acted, and the kept runs read far fewer rows.
    expect(acted, `${acted} actions`).toBeGreaterThan(30)
    expect(warm.app.services.optimizer.cachedEntries('agent-w')).toBeGreaterThan(0)
    expect(cold.app.services.optimizer.cachedEntries('agent-w')).toBe(0)
    expect(readWarm).toBeLessThan(readCold / 2)
    // Two apps and 16 cycles: tens of seconds on Postgres on a busy machine.
  }, 180_000)

  it('reads only the rows new or changed since the last run, and keeps at most the configured entries', async () => {
    const t = await createTestApp({ env: { ENGRAM_OPTIMIZER_CACHED_ENTRIES: 30 } })
    apps.push(t)
    const { optimizer } = t.app.services
    const keyOf: Record<string, string> = {}
    const add = async (agentId: string, count: number, from = 0) => {
      keyOf[agentId] ??= await createAgentKey(t, agentId)
      const messages = Array.from({ length: count }, (_, i) => ({
        role: 'USER',
        content: `${agentId} note ${from + i} about the garden, the shed and the ${from + i}th tomato plant`,
      }))
      expect((await t.gql(ADD, { c: 'c', m: messages }, keyOf[agentId])).data.addMessages.__typename).toBe(
        'AddMessagesPayload',
      )
    }
    const run = async (agentId: string) => {
      expect((await t.gql(RUN, {}, keyOf[agentId])).data.runOptimizer.__typename).toBe('OptimizationSnapshot')
      return optimizer.lastRowsRead()
    }
    await add('a', 20)
    expect(await run('a')).toBe(20)
    expect(optimizer.cachedEntries('a')).toBe(20)
    // Nothing changed: no text is read; three new messages: their three rows.
    expect(await run('a')).toBe(0)
    await add('a', 3, 20)
    expect(await run('a')).toBe(3)
    // A second agent: 23 + 15 entries are over the bound of 30, so the agent run least recently goes.
    await add('b', 15)
    expect(await run('b')).toBe(15)
    expect(optimizer.cachedEntries('b')).toBe(15)
    expect(optimizer.cachedEntries('a')).toBe(0)
    expect(await run('a')).toBe(23)
    expect(optimizer.cachedEntries('b')).toBe(0)
    // An agent larger than the whole bound is read whole every run and kept nowhere.
    await add('c', 31)
    expect(await run('c')).toBe(31)
    expect(await run('c')).toBe(31)
    expect(optimizer.cachedEntries('c')).toBe(0)
    expect(optimizer.cachedEntries('a')).toBe(23)
  })
})

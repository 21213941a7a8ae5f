// contextWindow and memoryContext's conversation section with the messages' token counts kept
// between calls (issue 18) beside the same calls counting every message afresh, as before
// (ENGRAM_MESSAGE_TOKEN_COUNTS=0): two apps on one SQLite file, the same requests alternating
// between them in one run, so the ratio is side by side on the same data and the same machine.
import { type BenchOptions, type BenchRow, writeReport } from '../../../packages/core/bench/report.ts'
import { createAgentKey, createTestApp, type TestApp } from '../test/helpers.ts'

/** The load bench's conversations: 100 messages each (apps/api/bench/load.ts). */
const MESSAGES_PER_CONVERSATION = 100

const WORDS = (
  'the export sync job upload drive proxy timeout retries ticket storage team network office error ' +
  'message step batch shared hangs again thanks sorry please share exact time result dinner trip lake'
).split(' ')

const WINDOW = `query($c: String!) { contextWindow(conversationId: $c) { ... on ContextWindow { totalTokens full { id } compressed { content } } } }`
// A query of its own each call: memoryContext's 10 s cache of an identical request stays out.
const TURNS = `query($c: String!, $q: String!) { memoryContext(input: { conversationId: $c, query: $q, sections: [CONVERSATION] }) { ... on MemoryContext { totalTokens } } }`

export async function contextWindowCountBenchmarks({ quick, random }: BenchOptions): Promise<BenchRow[]> {
  const conversations = quick ? 20 : 100
  const calls = quick ? 200 : 1_000
  const text = () =>
    Array.from(
      { length: 10 + Math.floor(random() * 60) },
      () => WORDS[Math.floor(random() * WORDS.length)],
    ).join(' ')
  const kept = await createTestApp()
  const afresh = await createTestApp({ sameStoreAs: kept, env: { ENGRAM_MESSAGE_TOKEN_COUNTS: 0 } })
  try {
    const key = await createAgentKey(kept, 'bench-window')
    const BATCH = `mutation($c: String!, $m: [MessageInput!]!) { addMessages(input: { conversationId: $c, messages: $m }) { __typename } }`
    for (let c = 0; c < conversations; c++) {
      const messages = Array.from({ length: MESSAGES_PER_CONVERSATION }, (_, i) => ({
        role: i % 2 === 0 ? 'USER' : 'ASSISTANT',
        content: text(),
      }))
      const added = await kept.gql(BATCH, { c: `c${c}`, m: messages }, key)
      if (added.errors) throw new Error(JSON.stringify(added.errors))
    }
    const apps: [string, TestApp][] = [
      ['counts kept', kept],
      ['counted afresh', afresh],
    ]
    const rows: BenchRow[] = []
    for (const [operation, query, variables] of [
      ['contextWindow', WINDOW, (c: number) => ({ c: `c${c}` })],
      [
        'memoryContext, CONVERSATION section',
        TURNS,
        (c: number, i: number) => ({ c: `c${c}`, q: `what happened ${i}` }),
      ],
    ] as const) {
      // Every conversation read once by each app first: the kept counts are a steady state (a
      // conversation's counts are made on its first read, as the afresh app makes them every time).
      for (const [, app] of apps)
        for (let c = 0; c < conversations; c++) await app.gql(query, variables(c, -1 - c), key)
      // Wall time and this process's CPU time (yoga.fetch and SQLite run in it): the CPU time is
      // what the change saves, and holds on a machine shared with other work.
      const wall = new Map<string, number>(apps.map(([name]) => [name, 0]))
      const cpu = new Map<string, number>(apps.map(([name]) => [name, 0]))
      for (let i = 0; i < calls; i++) {
        const c = Math.floor(random() * conversations)
        // Alternating, the order swapped each call: neither app always runs on a warmer cache.
        for (const [name, app] of i % 2 === 0 ? apps : [...apps].reverse()) {
          const start = performance.now()
          const used = process.cpuUsage()
          const result = await app.gql(query, variables(c, i), key)
          const { user, system } = process.cpuUsage(used)
          wall.set(name, (wall.get(name) ?? 0) + performance.now() - start)
          cpu.set(name, (cpu.get(name) ?? 0) + (user + system) / 1_000)
          if (result.errors) throw new Error(JSON.stringify(result.errors))
        }
      }
      const perCall = (figures: Map<string, number>, name: string) => (figures.get(name) ?? 0) / calls
      const baseline = `${operation}, ${MESSAGES_PER_CONVERSATION}-message conversation, CPU: counted afresh (ENGRAM_MESSAGE_TOKEN_COUNTS=0)`
      rows.push({
        name: baseline,
        value: perCall(cpu, 'counted afresh'),
        unit: 'ms CPU/op',
        better: 'lower',
        note: `${calls} calls over ${conversations} conversations alternating with the row below; wall ${perCall(wall, 'counted afresh').toFixed(2)} ms/op`,
      })
      rows.push({
        name: `${operation}, ${MESSAGES_PER_CONVERSATION}-message conversation, CPU: counts kept`,
        value: perCall(cpu, 'counts kept'),
        unit: 'ms CPU/op',
        better: 'lower',
        baseline,
        note: `the same requests as the row above; wall ${perCall(wall, 'counts kept').toFixed(2)} ms/op (yoga.fetch, no network)`,
      })
    }
    return rows
  } finally {
    await afresh.close()
    await kept.close()
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { seededRandom } = await import('../../../packages/core/bench/report.ts')
  const quick = process.argv.includes('--quick')
  const rows = await contextWindowCountBenchmarks({ quick, random: seededRandom(53) } as BenchOptions)
  writeReport('context-window', 'contextWindow token counts kept vs counted afresh', rows)
}

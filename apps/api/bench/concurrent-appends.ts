// Concurrent appends on one replica (issue 14): a burst of addMessage calls at once, across many
// conversations, on SQLite and on Postgres. Each request is timed from its start to its answer,
// so p50/p95 include the wait for the write the replica batches it into.
// Run on its own: `tsx apps/api/bench/concurrent-appends.ts [--count 1000] [--rounds 3] [--batch N]
// [--postgres-only]`.
import { createDatabase, startPostgres } from '@engram/test-servers'
import { createAgentKey, createTestApp, type TestApp } from '../test/helpers.ts'

const ADD = `mutation($c: String!, $m: String!) { addMessage(input: { conversationId: $c, role: USER, content: $m }) { __typename } }`

export interface BurstFigures {
  count: number
  failures: number
  perSecond: number
  p50Ms: number
  p95Ms: number
}

/** `count` appends started together (one conversation per four), and what they cost. */
export async function burst(t: TestApp, key: string, count: number, round: number): Promise<BurstFigures> {
  const latencies: number[] = []
  const start = performance.now()
  const results = await Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const began = performance.now()
      const result = await t.gql(
        ADD,
        { c: `r${round}-conv-${i % Math.max(1, count / 4)}`, m: `message ${i}` },
        key,
      )
      latencies.push(performance.now() - began)
      return result
    }),
  )
  const elapsed = performance.now() - start
  const failures = results.filter((r) => r.errors || r.data?.addMessage?.__typename !== 'Message').length
  latencies.sort((a, b) => a - b)
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0
  return { count, failures, perSecond: (count / elapsed) * 1000, p50Ms: at(0.5), p95Ms: at(0.95) }
}

async function rounds(t: TestApp, count: number, times: number): Promise<BurstFigures[]> {
  const key = await createAgentKey(t, 'bench-burst')
  const out: BurstFigures[] = []
  for (let round = 0; round < times; round++) out.push(await burst(t, key, count, round))
  return out
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const arg = (name: string, fallback: number) => {
    const at = process.argv.indexOf(name)
    return at === -1 ? fallback : Number(process.argv[at + 1])
  }
  const count = arg('--count', 1_000)
  const times = arg('--rounds', 3)
  // Messages per batched append transaction on Postgres (default: the adapter's).
  const batch = arg('--batch', 0)
  const print = (backend: string, figures: BurstFigures[]) => {
    for (const f of figures)
      console.log(
        `${backend}: ${f.count} concurrent appends, ${f.failures} failed, ${f.perSecond.toFixed(0)}/s, p50 ${f.p50Ms.toFixed(0)} ms, p95 ${f.p95Ms.toFixed(0)} ms`,
      )
  }
  if (!process.argv.includes('--postgres-only')) {
    const sqlite = await createTestApp()
    print('SQLite', await rounds(sqlite, count, times))
    await sqlite.close()
  }
  const server = await startPostgres()
  try {
    const postgres = await createTestApp({
      postgresUrl: await createDatabase(server.url),
      ...(batch > 0 ? { appendBatchMessages: batch } : {}),
    })
    print(`Postgres (pool 4${batch > 0 ? `, batch ${batch}` : ''})`, await rounds(postgres, count, times))
    await postgres.close()
  } finally {
    await server.stop()
  }
  process.exit(0)
}

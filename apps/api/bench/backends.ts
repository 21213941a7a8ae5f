// SQLite vs Postgres (issue 14 §4): the same operations, the same seeded inputs, on one app per
// backend in one run, so the ratio is measured side by side. Postgres is a throwaway
// postgresql-15 (packages/test-servers) on this machine: local, fsync off like the tests, so the
// figures compare the adapters' work, not a network or a disk flush.
import { createDatabase, startPostgres } from '@engram/test-servers'
import {
  type BenchOptions,
  type BenchRow,
  seededRandom,
  writeReport,
} from '../../../packages/core/bench/report.ts'
import { createAgentKey, createTestApp, type TestApp } from '../test/helpers.ts'

const WORDS =
  'agent page login form title result network selector click wait url error step data camping lake dinner trip'.split(
    ' ',
  )

/** One backend's figures for each operation, keyed by the operation's name. */
async function measure(t: TestApp, quick: boolean, seed: number): Promise<Map<string, BenchRow>> {
  const random = seededRandom(seed)
  const n = (full: number) => (quick ? Math.max(10, Math.round(full / 10)) : full)
  const text = (count: number) =>
    Array.from({ length: count }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ')
  const key = await createAgentKey(t, 'bench-backends')
  const rows = new Map<string, BenchRow>()
  async function timed(name: string, count: number, run: (i: number) => Promise<unknown>) {
    const start = performance.now()
    for (let i = 0; i < count; i++) await run(i)
    const ms = (performance.now() - start) / count
    rows.set(name, { name, value: ms, unit: 'ms/op', better: 'lower', note: `${count} sequential` })
  }
  const ADD = `mutation($c: String!) { addMessage(input: { conversationId: "bench", role: USER, content: $c }) { __typename } }`
  await timed('addMessage', n(500), () => t.gql(ADD, { c: text(40) }, key))
  const SEARCH = `query($q: String!) { search(input: { query: $q, scopes: [MESSAGES], limit: 10 }) { ... on SearchResult { hits { score } } } }`
  await timed('search MESSAGES (hybrid)', n(200), () => t.gql(SEARCH, { q: text(4) }, key))
  const WINDOW = `{ contextWindow(conversationId: "bench", budget: { maxContextTokens: 16000, fullMessageWindow: 30 }) { ... on ContextWindow { totalTokens } } }`
  await timed('contextWindow', n(100), () => t.gql(WINDOW, {}, key))
  const MEMORY = `mutation($c: String!) { createMemory(input: { content: $c, category: FACT }) { ... on MemoryWrite { outcome } } }`
  await timed('createMemory (verified)', n(300), (i) => t.gql(MEMORY, { c: `memory ${i}: ${text(12)}` }, key))
  const CONTEXT = `query($q: String!) { memoryContext(input: { query: $q, budgetTokens: 4000 }) { ... on MemoryContext { totalTokens } } }`
  await timed('memoryContext (uncached)', n(100), (i) => t.gql(CONTEXT, { q: `${text(4)} ${i}` }, key))
  const RUN = `mutation { runOptimizer { ... on OptimizationSnapshot { tokensBefore } } }`
  await timed('runOptimizer', quick ? 2 : 5, () => t.gql(RUN, {}, key))
  return rows
}

/** Every operation on SQLite, then on Postgres; Postgres rows carry the ratio to SQLite's. */
export async function backendBenchmarks({ quick }: BenchOptions): Promise<BenchRow[]> {
  const sqlite = await createTestApp()
  const onSqlite = await measure(sqlite, quick, 29)
  await sqlite.close()
  const server = await startPostgres()
  try {
    const postgres = await createTestApp({ postgresUrl: await createDatabase(server.url) })
    const onPostgres = await measure(postgres, quick, 29)
    await postgres.close()
    const rows: BenchRow[] = []
    for (const [name, row] of onSqlite) {
      const other = onPostgres.get(name)
      rows.push({ ...row, name: `${name}: SQLite` })
      if (other) rows.push({ ...other, name: `${name}: Postgres`, baseline: `${name}: SQLite` })
    }
    return rows
  } finally {
    await server.stop()
  }
}

// Run on its own: `tsx apps/api/bench/backends.ts [--quick]`.
if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await backendBenchmarks({ quick: process.argv.includes('--quick'), random: seededRandom(29) })
  for (const row of rows) {
    const base = row.baseline ? rows.find((r) => r.name === row.baseline) : null
    if (base) row.ratio = row.value / base.value
  }
  writeReport('backends', 'SQLite vs Postgres (apps/api, yoga.fetch)', rows)
}

// Search at scale on SQLite and Postgres side by side (issue 18): the load test seeds SQLite by
// direct SQL and measures it alone; here one app per backend holds the same agent history (the
// same seeded turns, written through addMessages and embedded by the server's own job queue), and
// the same queries alternate between the two, so the p95 of each is measured under the same
// machine load. `tsx apps/api/bench/backends-scale.ts [--quick] [--messages N]`.
import { createHashingEmbedder } from '@engram/core'
import { loadWordNetLexicon } from '@engram/providers'
import { createDatabase, startPostgres } from '@engram/test-servers'
import { type BenchRow, percentile, seededRandom, writeReport } from '../../../packages/core/bench/report.ts'
import { createAgentKey, createTestApp, type TestApp } from '../test/helpers.ts'
import { textMaker } from './load.ts'

/** Messages of the agent searched: the 100K; 10K for the smoke run. */
export const SCALE_MESSAGES = { full: 100_000, quick: 10_000 } as const
/** Searches of each kind per backend (each query asked of both, alternating which goes first). */
const QUERIES = { full: 300, quick: 60 } as const
const MESSAGES_PER_CONVERSATION = 100
const THIRTY_DAYS_MS = 30 * 86_400_000

const ADD = `mutation($c: String!, $m: [MessageInput!]!) { addMessages(input: { conversationId: $c, messages: $m }) { __typename } }`
const SEARCH = `query($q: String!, $s: SearchStrategy) { search(input: { query: $q, limit: 10, strategy: $s }) { __typename ... on SearchResult { hits { score text } } } }`

export async function fill(t: TestApp, key: string, messages: number, seed: number): Promise<number> {
  const text = textMaker(seededRandom(seed))
  const started = performance.now()
  // Conversations of MESSAGES_PER_CONVERSATION turns over the last 30 days, one addMessages call
  // each, as load.ts seeds them (the test clock stands still: without their own times every turn
  // would be one instant, and a conversation one episode).
  for (let at = 0; at < messages; at += MESSAGES_PER_CONVERSATION) {
    const batch = Array.from({ length: Math.min(MESSAGES_PER_CONVERSATION, messages - at) }, (_, i) => ({
      role: 'USER',
      content: text.turn(),
      timestamp: new Date(t.clock.now().getTime() - (messages - at - i) * (THIRTY_DAYS_MS / messages)),
    }))
    const c = `c${Math.floor(at / MESSAGES_PER_CONVERSATION)}`
    const result = await t.gql(ADD, { c, m: batch }, key)
    if (result.data?.addMessages?.__typename !== 'AddMessagesPayload')
      throw new Error(`addMessages failed: ${JSON.stringify(result.errors ?? result.data)}`)
  }
  return (performance.now() - started) / 1_000
}

/** Hybrid and lexical search p50/p95 over the same history on each backend, queries alternating. */
export async function backendScaleBenchmarks({ quick, messages }: { quick: boolean; messages?: number }) {
  const total = messages ?? (quick ? SCALE_MESSAGES.quick : SCALE_MESSAGES.full)
  const queries = quick ? QUERIES.quick : QUERIES.full
  const embedder = createHashingEmbedder({ lexicon: loadWordNetLexicon() })
  const server = await startPostgres()
  const apps: { name: 'SQLite' | 'Postgres'; t: TestApp; key: string; seedSeconds: number }[] = []
  try {
    for (const name of ['SQLite', 'Postgres'] as const) {
      const t = await createTestApp({
        embedder,
        ...(name === 'Postgres' ? { postgresUrl: await createDatabase(server.url) } : {}),
      })
      const key = await createAgentKey(t, 'bench-scale')
      const seedSeconds = await fill(t, key, total, 47)
      // The first search runs the queued embed jobs and starts the vector graph's build.
      await t.gql(SEARCH, { q: 'warm up', s: 'HYBRID' }, key)
      await t.app.services.embeddings.settled()
      apps.push({ name, t, key, seedSeconds })
    }
    const text = textMaker(seededRandom(53))
    const latency = new Map<string, number[]>()
    // `hybrid-all`: hybrid search reading dialogue context as before issue 18's hybrid18 slice
    // (whole episode spans, every context turn's row; the same hits), asked beside the default
    // with each query, the order alternating, so both see the same machine load.
    const kinds = [['HYBRID', 'HYBRID-ALL'], ['LEXICAL']] as const
    for (const round of kinds) {
      for (let i = 0; i < queries; i++) {
        const q = text.sentence(2, 5)
        const order = i % 2 === 0 ? apps : [...apps].reverse()
        const ways = i % 2 === 0 ? [...round] : [...round].reverse()
        for (const app of order) {
          for (const kind of ways) {
            app.t.app.services.search.dialogueReads = kind === 'HYBRID-ALL' ? 'all' : 'fewer'
            const started = performance.now()
            const result = await app.t.gql(
              SEARCH,
              { q, s: kind === 'LEXICAL' ? 'LEXICAL' : 'HYBRID' },
              app.key,
            )
            const ms = performance.now() - started
            app.t.app.services.search.dialogueReads = 'fewer'
            if (result.data?.search?.__typename !== 'SearchResult')
              throw new Error(`search failed on ${app.name}: ${JSON.stringify(result.errors ?? result.data)}`)
            // The first tenth warms each backend's caches and compiled plans up.
            if (i < queries / 10) continue
            const name = `${kind.toLowerCase()}:${app.name}`
            latency.set(name, [...(latency.get(name) ?? []), ms])
          }
        }
      }
    }
    const label = `${(total / 1_000).toLocaleString('en-US')}K messages`
    const rows: BenchRow[] = []
    for (const strategy of ['hybrid', 'hybrid-all', 'lexical'] as const) {
      for (const app of apps) {
        const values = latency.get(`${strategy}:${app.name}`) ?? []
        const row = (p: 50 | 95): BenchRow => ({
          name: `search MESSAGES over ${label} (${strategy}, yoga.fetch) p${p}: ${app.name}`,
          value: percentile(values, p),
          unit: 'ms',
          better: 'lower',
          // The before-hybrid18 rows against the default on the same backend; Postgres' others
          // against SQLite's.
          ...(strategy === 'hybrid-all'
            ? { baseline: `search MESSAGES over ${label} (hybrid, yoga.fetch) p${p}: ${app.name}` }
            : app.name === 'Postgres'
              ? { baseline: `search MESSAGES over ${label} (${strategy}, yoga.fetch) p${p}: SQLite` }
              : {}),
          ...(p === 95 && strategy === 'hybrid' ? { target: { op: '<=' as const, value: 10 } } : {}),
          note:
            strategy === 'hybrid-all'
              ? `dialogue context read as before hybrid18 (whole spans, every context turn's row): the same hits; ${values.length} searches beside the default's`
              : `${values.length} searches alternating with the other backend`,
        })
        rows.push(row(50), row(95))
      }
    }
    for (const app of apps)
      rows.push({
        name: `seed ${label} through addMessages (a call per ${MESSAGES_PER_CONVERSATION}-turn conversation): ${app.name}`,
        value: app.seedSeconds,
        unit: 's',
      })
    return rows
  } finally {
    for (const app of apps) await app.t.close()
    await server.stop()
  }
}

// Run on its own: `tsx apps/api/bench/backends-scale.ts [--quick] [--messages N]`.
if (import.meta.url === `file://${process.argv[1]}`) {
  const index = process.argv.indexOf('--messages')
  const messages = index >= 0 ? Number(process.argv[index + 1]) : undefined
  const rows = await backendScaleBenchmarks({ quick: process.argv.includes('--quick'), messages })
  for (const row of rows) {
    const base = row.baseline ? rows.find((r) => r.name === row.baseline) : null
    if (base) row.ratio = row.value / base.value
  }
  writeReport(
    'backends-scale',
    'Search at scale: SQLite and Postgres side by side (apps/api, yoga.fetch)',
    rows,
  )
}

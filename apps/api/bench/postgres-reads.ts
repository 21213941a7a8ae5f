// Postgres search reads before and after pgscale18's two changes, side by side in one process
// (docs/speed-pgscale18.md): the history written through addMessages as backends-scale.ts writes
// it, then hybrid MESSAGES searches asked both ways, the order alternating query by query, with
// the CPU of this process and of the Postgres server's processes per search.
// `--compare spans`: search's episode spans as a compound SELECT of a term per span (before) or
// one statement of one JSON parameter (after). `--compare reads`: search's per-request reads
// through Prisma's raw queries (before) or the pool's prepared statements (after).
// `tsx apps/api/bench/postgres-reads.ts [--compare spans|reads] [--entries N] [--searches N]`.
// Not a harness suite: a tool for checking one change's effect.
import { createHashingEmbedder } from '@engram/core'
import { loadWordNetLexicon } from '@engram/providers'
import { postgresDialect } from '@engram/store-postgres'
import { hotReaderOf, registerHotReader } from '@engram/store-sqlite'
import { createDatabase, startPostgres } from '@engram/test-servers'
import { median, percentile, seededRandom } from '../../../packages/core/bench/report.ts'
import { createAgentKey, createTestApp } from '../test/helpers.ts'
import { fill } from './backends-scale.ts'
import { textMaker } from './load.ts'
import { postmasterPid, ServerCpu } from './process-cpu.ts'

const argument = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 ? (process.argv[at + 1] as string) : fallback
}
const compare = argument('compare', 'reads')
if (compare !== 'spans' && compare !== 'reads') throw new Error(`--compare is spans or reads, not ${compare}`)
const entries = Number(argument('entries', '10000'))
const searches = Number(argument('searches', '150'))

const embedder = createHashingEmbedder({ lexicon: loadWordNetLexicon() })
const server = await startPostgres()
const t = await createTestApp({ embedder, postgresUrl: await createDatabase(server.url) })
try {
  const key = await createAgentKey(t, 'bench-scale')
  await fill(t, key, entries, 47)
  const postmaster = await postmasterPid(server.url)
  if (!postmaster) throw new Error('the Postgres server has no postmaster pid')
  const cpu = new ServerCpu(postmaster)
  const SEARCH = `query($q: String!) { search(input: { query: $q, limit: 10, strategy: HYBRID }) { __typename ... on SearchResult { hits { score text } } } }`
  const text = textMaker(seededRandom(53))
  for (let i = 0; i < 30; i++) await t.gql(SEARCH, { q: text.sentence(2, 5) }, key)
  await t.app.services.embeddings.settled()

  // The two ways, switched on the live app: the dialect object is shared, and the app's view of
  // the database (t.store.db) is the object its reader is registered for.
  const reader = hotReaderOf(t.store.db)
  const spans = postgresDialect.turnSpans
  if (!reader) throw new Error('the app’s database has no prepared-statement reader')
  const use = (way: 'before' | 'after') => {
    if (compare === 'spans')
      (postgresDialect as { turnSpans: typeof spans }).turnSpans = way === 'after' ? spans : () => null
    else registerHotReader(t.store.db, way === 'after' ? reader : null)
  }
  const figures = new Map<string, { wall: number[]; node: number; server: number }>()
  cpu.refresh()
  for (let i = 0; i < searches; i++) {
    const q = text.sentence(2, 5)
    for (const way of i % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const)) {
      use(way)
      const serverBefore = cpu.read()
      const cpuStart = process.cpuUsage()
      const started = performance.now()
      const result = await t.gql(SEARCH, { q }, key)
      const ms = performance.now() - started
      const used = process.cpuUsage(cpuStart)
      const serverAfter = cpu.read()
      if (result.data?.search?.__typename !== 'SearchResult') throw new Error(JSON.stringify(result))
      // The first tenth warms both ways' plans and prepared statements up.
      if (i < searches / 10) continue
      const f = figures.get(way) ?? { wall: [], node: 0, server: 0 }
      f.wall.push(ms)
      f.node += (used.user + used.system) / 1_000
      f.server += ServerCpu.between(serverBefore, serverAfter)
      figures.set(way, f)
    }
  }
  use('after')
  for (const [way, f] of figures)
    console.info(
      `${compare} ${way}: ${f.wall.length} hybrid searches over ${entries.toLocaleString('en-US')} turns, p50 ${median(f.wall).toFixed(1)} ms, p95 ${percentile(f.wall, 95).toFixed(1)} ms; CPU per search: Node ${(f.node / f.wall.length).toFixed(2)} ms + Postgres ${(f.server / f.wall.length).toFixed(2)} ms`,
    )
} finally {
  await t.close()
  await server.stop()
}

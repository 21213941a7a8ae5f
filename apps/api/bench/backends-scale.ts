// Search at scale on SQLite and Postgres side by side (issue 18): the load test seeds SQLite by
// direct SQL and measures it alone; here one app per backend holds the same agent history (the
// same seeded turns, written through addMessages and embedded by the server's own job queue), and
// the same queries alternate between the two, so the p95 of each is measured under the same
// machine load. The memory agent's memories are written by direct SQL (bench/memory-seed.ts,
// checked against the memory service by test/bench-memory-seed.test.ts) unless
// `--memory-seed pipeline` asks for the memory service's verification pipeline.
// `tsx apps/api/bench/backends-scale.ts [--quick] [--messages N] [--memories N] [--memory-seed sql|pipeline]`.
import { createHashingEmbedder, type Embedder } from '@engram/core'
import { loadWordNetLexicon } from '@engram/providers'
import type { MemoryRowReads } from '@engram/store-sqlite'
import { createDatabase, startPostgres } from '@engram/test-servers'
import { type BenchRow, percentile, seededRandom, writeReport } from '../../../packages/core/bench/report.ts'
import { createAgentKey, createTestApp, type TestApp } from '../test/helpers.ts'
import { textMaker } from './load.ts'
import { BENCH_MEMORY_CATEGORY, benchMemoryContents, seedMemoriesDirect } from './memory-seed.ts'
import { postmasterPid, ServerCpu } from './process-cpu.ts'

/** Messages of the agent searched: the 100K; 10K for the smoke run. */
export const SCALE_MESSAGES = { full: 100_000, quick: 10_000 } as const
/**
 * Memories of the memory agent searched: the 100K (2K for the smoke run), written by
 * direct SQL. Through the verification pipeline (`--memory-seed pipeline`) each takes ~40 ms on
 * SQLite and ~190 ms on Postgres on the loaded 2-core machine, growing with the count: hours at
 * 100K. `--memories N` asks for another count.
 */
export const SCALE_MEMORIES = { full: 100_000, quick: 2_000 } as const
/** How the memory agent's memories are written: direct SQL (default) or the memory service. */
export type MemorySeed = 'sql' | 'pipeline'
/** Searches of each kind per backend (each query asked of both, alternating which goes first). */
const QUERIES = { full: 300, quick: 60 } as const
const MESSAGES_PER_CONVERSATION = 100
const THIRTY_DAYS_MS = 30 * 86_400_000

const ADD = `mutation($c: String!, $m: [MessageInput!]!) { addMessages(input: { conversationId: $c, messages: $m }) { __typename } }`
const SEARCH = `query($q: String!, $s: SearchStrategy) { search(input: { query: $q, limit: 10, strategy: $s }) { __typename ... on SearchResult { hits { score text } } } }`
const SEARCH_MEMORIES = `query($q: String!, $s: SearchStrategy) { search(input: { query: $q, limit: 10, strategy: $s, scopes: [MEMORIES] }) { __typename ... on SearchResult { hits { score text } } } }`
/** Seeding progress on stderr: a full run seeds for minutes before it measures anything. */
const log = (line: string) => process.stderr.write(`[backends-scale] ${line}\n`)
/** The agent whose memories are searched (its own: the 100K entries + 100K memories). */
const MEMORY_AGENT = 'bench-scale-memories'

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

/**
 * Memories of one agent: by direct SQL (the rows the memory service writes for a stored memory,
 * see memory-seed.ts), or through the engine's memory service (the verification pipeline
 * createMemory runs, without a GraphQL round trip per memory: seeding is not what is measured;
 * it supersedes ~9% of these texts, which direct SQL keeps current).
 */
async function fillMemories(
  t: TestApp,
  count: number,
  seed: number,
  how: MemorySeed,
  embedder: Embedder,
): Promise<number> {
  const contents = benchMemoryContents(count, seed)
  if (how === 'sql') return (await seedMemoriesDirect(t, MEMORY_AGENT, contents, embedder)).seconds
  const started = performance.now()
  for (const content of contents)
    await t.app.services.memoryItems.create(MEMORY_AGENT, { content, category: BENCH_MEMORY_CATEGORY })
  // Caches keyed by the agent's write version see the writes (createMemory touches it per call).
  t.app.services.writes.touch(MEMORY_AGENT)
  return (performance.now() - started) / 1_000
}

/** Hybrid and lexical search p50/p95 over the same history on each backend, queries alternating. */
export async function backendScaleBenchmarks({
  quick,
  messages,
  memories,
  memorySeed = 'sql',
}: {
  quick: boolean
  messages?: number
  memories?: number
  memorySeed?: MemorySeed
}) {
  const total = messages ?? (quick ? SCALE_MESSAGES.quick : SCALE_MESSAGES.full)
  const memoryTotal = memories ?? (quick ? SCALE_MEMORIES.quick : SCALE_MEMORIES.full)
  const queries = quick ? QUERIES.quick : QUERIES.full
  const embedder = createHashingEmbedder({ lexicon: loadWordNetLexicon() })
  const server = await startPostgres()
  const apps: {
    name: 'SQLite' | 'Postgres'
    t: TestApp
    key: string
    memoryKey: string
    seedSeconds: number
    memorySeconds: number
    /** The database server's processes, read around each search (Postgres; SQLite runs in this one). */
    serverCpu: ServerCpu | null
  }[] = []
  try {
    for (const name of ['SQLite', 'Postgres'] as const) {
      const t = await createTestApp({
        embedder,
        ...(name === 'Postgres' ? { postgresUrl: await createDatabase(server.url) } : {}),
      })
      const key = await createAgentKey(t, 'bench-scale')
      const seedSeconds = await fill(t, key, total, 47)
      log(`${name}: ${total} messages through addMessages in ${seedSeconds.toFixed(1)} s`)
      const memoryKey = await createAgentKey(t, MEMORY_AGENT)
      const memorySeconds = await fillMemories(t, memoryTotal, 59, memorySeed, embedder)
      log(`${name}: ${memoryTotal} memories (${memorySeed}) in ${memorySeconds.toFixed(1)} s`)
      // The first search runs the queued embed jobs and starts the vector graph's build.
      const warming = performance.now()
      await t.gql(SEARCH, { q: 'warm up', s: 'HYBRID' }, key)
      await t.gql(SEARCH_MEMORIES, { q: 'warm up', s: 'HYBRID' }, memoryKey)
      await t.app.services.embeddings.settled()
      log(`${name}: first searches and embed jobs in ${((performance.now() - warming) / 1_000).toFixed(1)} s`)
      // Loudly, before anything is measured: every memory stored and embedded with the app's model
      // (the pipeline's duplicates and supersessions aside).
      const stats = await t.app.services.memoryItems.stats(MEMORY_AGENT)
      if (stats.embedded !== stats.total || (memorySeed === 'sql' && stats.current !== memoryTotal))
        throw new Error(
          `${name}: the memory agent holds ${stats.current} current memories of ${stats.total}, ${stats.embedded} embedded; ${memoryTotal} were seeded`,
        )
      const postmaster = name === 'Postgres' ? await postmasterPid(server.url) : null
      apps.push({
        name,
        t,
        key,
        memoryKey,
        seedSeconds,
        memorySeconds,
        serverCpu: postmaster ? new ServerCpu(postmaster) : null,
      })
    }
    const text = textMaker(seededRandom(53))
    const latency = new Map<string, number[]>()
    // CPU ms per search: this process's (the app: GraphQL, search, the client side of SQL; all of
    // SQLite) and, on Postgres, the server's processes'.
    const nodeCpu = new Map<string, number[]>()
    const serverCpu = new Map<string, number[]>()
    // Each query asked of both backends, alternating which goes first; messages (the agent's
    // default scopes) and memories (MEMORIES, the memory agent), hybrid then lexical.
    const scopes = [
      { scope: 'messages', query: SEARCH, keyOf: (app: (typeof apps)[number]) => app.key },
      { scope: 'memories', query: SEARCH_MEMORIES, keyOf: (app: (typeof apps)[number]) => app.memoryKey },
    ] as const
    // `hybrid-all` (messages): hybrid search reading dialogue context as before issue 18's
    // hybrid18 slice (whole episode spans, every context turn's row; the same hits), asked beside
    // the default with each query, the order alternating, so both see the same machine load.
    // `hybrid-planner` (memories): hybrid search reading the candidate memories' rows with the
    // statement before issue 18's memsearch18 slice (SQLite's planner walked the agent's index
    // for them; store-sqlite's MemoryRowReads), beside the default in the same way.
    const roundsOf = (scope: 'messages' | 'memories') =>
      scope === 'messages'
        ? ([['HYBRID', 'HYBRID-ALL'], ['LEXICAL']] as const)
        : ([['HYBRID', 'HYBRID-PLANNER'], ['LEXICAL']] as const)
    /** The app's recall sources, whose memory row reads a `hybrid-planner` search switches. */
    const recallOf = (app: (typeof apps)[number]) =>
      (app.t.app.services.search as unknown as { recall: { memoryRowReads: MemoryRowReads } }).recall
    for (const { scope, query, keyOf } of scopes) {
      for (const round of roundsOf(scope)) {
        for (const app of apps) app.serverCpu?.refresh()
        for (let i = 0; i < queries; i++) {
          const q = text.sentence(2, 5)
          const order = i % 2 === 0 ? apps : [...apps].reverse()
          const ways = i % 2 === 0 ? [...round] : [...round].reverse()
          for (const app of order) {
            for (const kind of ways) {
              app.t.app.services.search.dialogueReads = kind === 'HYBRID-ALL' ? 'all' : 'index'
              // As before hybrid18, every candidate's row too (as in the earlier runs of this row).
              app.t.app.services.search.candidateRows = kind === 'HYBRID-ALL' ? 'all' : 'pool'
              recallOf(app).memoryRowReads = kind === 'HYBRID-PLANNER' ? 'planner' : 'primary-key'
              const serverBefore = app.serverCpu?.read()
              const cpuStart = process.cpuUsage()
              const started = performance.now()
              const result = await app.t.gql(
                query,
                { q, s: kind === 'LEXICAL' ? 'LEXICAL' : 'HYBRID' },
                keyOf(app),
              )
              const ms = performance.now() - started
              const cpu = process.cpuUsage(cpuStart)
              const serverAfter = app.serverCpu?.read()
              app.t.app.services.search.dialogueReads = 'index'
              app.t.app.services.search.candidateRows = 'pool'
              recallOf(app).memoryRowReads = 'primary-key'
              if (result.data?.search?.__typename !== 'SearchResult')
                throw new Error(
                  `search failed on ${app.name}: ${JSON.stringify(result.errors ?? result.data)}`,
                )
              // The first tenth warms each backend's caches and compiled plans up.
              if (i < queries / 10) continue
              const name = `${scope}:${kind.toLowerCase()}:${app.name}`
              latency.set(name, [...(latency.get(name) ?? []), ms])
              nodeCpu.set(name, [...(nodeCpu.get(name) ?? []), (cpu.user + cpu.system) / 1_000])
              if (serverBefore && serverAfter)
                serverCpu.set(name, [
                  ...(serverCpu.get(name) ?? []),
                  ServerCpu.between(serverBefore, serverAfter),
                ])
            }
          }
        }
      }
    }
    const labels = {
      messages: `MESSAGES over ${(total / 1_000).toLocaleString('en-US')}K messages`,
      memories: `MEMORIES over ${(memoryTotal / 1_000).toLocaleString('en-US')}K memories`,
    }
    const label = `${(total / 1_000).toLocaleString('en-US')}K messages`
    const rows: BenchRow[] = []
    for (const { scope } of scopes) {
      const strategies =
        scope === 'messages'
          ? (['hybrid', 'hybrid-all', 'lexical'] as const)
          : (['hybrid', 'hybrid-planner', 'lexical'] as const)
      for (const strategy of strategies) {
        for (const app of apps) {
          const values = latency.get(`${scope}:${strategy}:${app.name}`) ?? []
          const row = (p: 50 | 95): BenchRow => ({
            name: `search ${labels[scope]} (${strategy}, yoga.fetch) p${p}: ${app.name}`,
            value: percentile(values, p),
            unit: 'ms',
            better: 'lower',
            // The before-hybrid18 rows against the default on the same backend; Postgres' others
            // against SQLite's.
            ...(strategy === 'hybrid-all' || strategy === 'hybrid-planner'
              ? { baseline: `search ${labels[scope]} (hybrid, yoga.fetch) p${p}: ${app.name}` }
              : app.name === 'Postgres'
                ? { baseline: `search ${labels[scope]} (${strategy}, yoga.fetch) p${p}: SQLite` }
                : {}),
            // The target: hybrid search p95 <= 10 ms, messages and memories, both backends.
            ...(p === 95 && strategy === 'hybrid' ? { target: { op: '<=' as const, value: 10 } } : {}),
            note:
              strategy === 'hybrid-all'
                ? `as before hybrid18 (whole spans, every context turn's row, every candidate's row before scoring): the same hits; ${values.length} searches beside the default's`
                : strategy === 'hybrid-planner'
                  ? `candidate memories' rows read as before memsearch18 (the planner's choice: the agent's index on SQLite without statistics; Postgres' statement is unchanged): the same hits; ${values.length} searches beside the default's`
                  : `${values.length} searches alternating with the other backend`,
          })
          rows.push(row(50), row(95))
          if (strategy === 'hybrid-all') continue
          const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length)
          const node = mean(nodeCpu.get(`${scope}:${strategy}:${app.name}`) ?? [])
          const database = serverCpu.get(`${scope}:${strategy}:${app.name}`)
          rows.push({
            name: `search ${labels[scope]} (${strategy}) server CPU per search: ${app.name}`,
            value: node + (database ? mean(database) : 0),
            unit: 'ms',
            better: 'lower',
            note: database
              ? `mean; Node ${node.toFixed(2)} ms + Postgres server processes ${mean(database).toFixed(2)} ms (/proc, 10 ms ticks averaged over ${database.length} searches)`
              : 'mean; the Node process (SQLite runs in it)',
          })
        }
      }
    }
    for (const app of apps)
      rows.push({
        name: `seed ${label} through addMessages (a call per ${MESSAGES_PER_CONVERSATION}-turn conversation): ${app.name}`,
        value: app.seedSeconds,
        unit: 's',
      })
    for (const app of apps)
      rows.push({
        name: `seed ${labels.memories} ${memorySeed === 'sql' ? 'by direct SQL (rows, full-text tokens, vectors)' : 'through the memory service (verification pipeline)'}: ${app.name}`,
        value: app.memorySeconds,
        unit: 's',
      })
    return rows
  } finally {
    for (const app of apps) await app.t.close()
    await server.stop()
  }
}

// Run on its own: `tsx apps/api/bench/backends-scale.ts [--quick] [--messages N] [--memories N]`.
if (import.meta.url === `file://${process.argv[1]}`) {
  const count = (name: string) => {
    const index = process.argv.indexOf(name)
    return index >= 0 ? Number(process.argv[index + 1]) : undefined
  }
  const memorySeed = process.argv.includes('--memory-seed')
    ? process.argv[process.argv.indexOf('--memory-seed') + 1]
    : 'sql'
  if (memorySeed !== 'sql' && memorySeed !== 'pipeline')
    throw new Error(`--memory-seed is sql or pipeline, not ${memorySeed}`)
  const rows = await backendScaleBenchmarks({
    quick: process.argv.includes('--quick'),
    messages: count('--messages'),
    memories: count('--memories'),
    memorySeed,
  })
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

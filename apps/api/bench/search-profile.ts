// Where a hybrid MESSAGES search's time goes, in process (issue 18, hybrid18): load.ts's seed, the
// app as the load server builds it (createApp over the SQLite file, the offline embedder), then
// searches through yoga.fetch with every port call a search makes wrapped in a timer. A CPU profile
// loses the caller at every await, so the port calls are timed instead; the rest of a search
// (scoring, fusion, MMR, GraphQL) is the whole minus the timed parts.
// `--backend postgres` (or `sqlite-api`): the history written through addMessages as
// backends-scale.ts writes it, on a throwaway Postgres database (or SQLite file) instead.
// `--memories N` (sqlite-api or postgres): N memories of an agent of their own, seeded as
// backends-scale.ts seeds its memory agent (memory-seed.ts: direct SQL, the same texts), searched
// instead of the history's agent (use with `--scope MEMORIES`; `--entries` may then be 0).
// `tsx apps/api/bench/search-profile.ts [--entries N] [--searches N] [--strategy HYBRID|LEXICAL]
// [--scope MESSAGES|MEMORIES] [--backend sqlite|sqlite-api|postgres] [--memories N]
// [--compare dialogue|memory-rows|source-turns] [--ways all,fewer,index,pool] [--memory-agent own|same]
// [--cpu-prof FILE]`.
// `--cpu-prof` (or `--cpu-profile`): a V8 CPU profile of the measured searches alone (node --cpu-prof
// would also hold the seeding, minutes of it at 100K).
// Not a harness suite: a tool for reading one search's parts.
import fs from 'node:fs'
import { Session } from 'node:inspector/promises'
import os from 'node:os'
import path from 'node:path'
import { createHashingEmbedder } from '@engram/core'
import { loadWordNetLexicon } from '@engram/providers'
import { createDatabase } from '@engram/store-sqlite'
import { createDatabase as createPostgresDatabase, startPostgres } from '@engram/test-servers'
import { median, percentile, seededRandom } from '../../../packages/core/bench/report.ts'
import { createApp } from '../src/yoga.ts'
import { createAgentKey, createTestApp } from '../test/helpers.ts'
import { fill } from './backends-scale.ts'
import { AGENT_KEY, FULL, seed, textMaker } from './load.ts'
import { benchMemoryContents, seedMemoriesDirect } from './memory-seed.ts'

const argument = (name: string, fallback: string) => {
  const at = process.argv.indexOf(`--${name}`)
  return at >= 0 ? (process.argv[at + 1] as string) : fallback
}
const entries = Number(argument('entries', '10000'))
const searches = Number(argument('searches', '300'))
const strategy = argument('strategy', 'HYBRID')
const scope = argument('scope', 'MESSAGES')

const backend = argument('backend', 'sqlite')
const memories = Number(argument('memories', '0'))
const embedder = createHashingEmbedder({ lexicon: loadWordNetLexicon() })

/** The app under measurement, how to ask it a search, and how to take it down. */
async function open() {
  if (backend === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-search-profile-'))
    const file = path.join(dir, 'profile.db')
    seed(file, { ...FULL, entries, memories: Math.min(entries, 1_000), smallEntries: 0 }, seededRandom(23))
    const db = createDatabase(file)
    const app = createApp({
      db,
      env: {
        NODE_ENV: 'production',
        OPTIMIZER_INTERVAL_MS: 0,
        ENGRAM_TOKENIZER: 'o200k_base',
        ENGRAM_MAX_QUERY_DEPTH: 12,
        ENGRAM_MAX_QUERY_COST: 20_000,
        ENGRAM_LEXICAL_INDEX: process.env.ENGRAM_LEXICAL_INDEX === 'off' ? 'off' : 'on',
      },
      embedder,
      databaseFile: file,
      log: { info() {}, warn: console.warn, error: console.error },
    })
    const gql = async (body: string) => {
      const response = await app.yoga.fetch('http://yoga/graphql', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${AGENT_KEY}` },
        body,
      })
      return (await response.json()) as { errors?: unknown }
    }
    return {
      app,
      gql,
      close: async () => {
        await app.close()
        await db.$disconnect()
        fs.rmSync(dir, { recursive: true, force: true })
      },
    }
  }
  const server = backend === 'postgres' ? await startPostgres() : null
  const t = await createTestApp({
    embedder,
    ...(server ? { postgresUrl: await createPostgresDatabase(server.url) } : {}),
  })
  let key = await createAgentKey(t, 'bench-scale')
  if (entries > 0) await fill(t, key, entries, 47)
  if (memories > 0) {
    // backends-scale.ts' memory agent: its seed (59) and agent, so the texts are the same.
    // `--memory-agent same`: the history's agent holds them too (memories beside 100K turns).
    const agent = argument('memory-agent', 'own') === 'same' ? 'bench-scale' : 'bench-scale-memories'
    if (agent !== 'bench-scale') key = await createAgentKey(t, agent)
    const { seconds } = await seedMemoriesDirect(t, agent, benchMemoryContents(memories, 59), embedder)
    console.info(`seeded ${memories} memories of ${agent} by direct SQL in ${seconds.toFixed(1)} s`)
  }
  const gql = async (body: string) => {
    const { query, variables } = JSON.parse(body)
    return t.gql(query, variables, key)
  }
  return {
    app: t.app,
    gql,
    close: async () => {
      await t.close()
      await server?.stop()
    },
  }
}
const { app, gql, close } = await open()

// Every timed part: total ms and calls over the measured searches, per way compared, alternating
// search by search in this one process: of reading dialogue context (search-context.ts'
// DialogueReads) and the candidates' rows (search-rows.ts; `--compare dialogue`, the default:
// `all`, `fewer` and `index` read every candidate's row before scoring, `pool` is `index` reading
// only the pool's rows, the default since hybridmsg18), of reading the candidate memories' rows
// (store-sqlite's MemoryRowReads; `--compare memory-rows`), or of hybrid memory search reading its
// source turns' context for every agent ('every', as before memsearch18) or only when one of its
// memories has a source turn ('from-turns'; `--compare source-turns`).
const compare = argument('compare', 'dialogue')
const WAYS_OF: Record<string, readonly string[]> = {
  dialogue: ['all', 'fewer', 'index', 'pool'],
  'memory-rows': ['planner', 'primary-key'],
  'source-turns': ['every', 'from-turns'],
}
const COMPARED = WAYS_OF[compare] ?? []
if (COMPARED.length === 0)
  throw new Error(`--compare is one of ${Object.keys(WAYS_OF).join(', ')}, not ${compare}`)
// `--ways index` measures fewer of them (a CPU profile of the default path alone).
const WAYS = argument('ways', COMPARED.join(','))
  .split(',')
  .map((way) => {
    if (!COMPARED.includes(way)) throw new Error(`unknown way ${way} for --compare ${compare}`)
    return way
  })
type Way = string
// biome-ignore lint/suspicious/noExplicitAny: a bench reaches into the services' private fields.
const recall = (app.services.search as any).recall
const hasMemoryItemsFromTurns = recall.hasMemoryItemsFromTurns.bind(recall)
/** Switches the app to one way of those compared. */
const useWay = (way: Way) => {
  if (compare === 'dialogue') {
    search.dialogueReads = way === 'pool' ? 'index' : way
    search.candidateRows = way === 'pool' ? 'pool' : 'all'
  } else if (compare === 'memory-rows') recall.memoryRowReads = way
  else recall.hasMemoryItemsFromTurns = way === 'every' ? async () => true : hasMemoryItemsFromTurns
}
const partsOf = new Map(WAYS.map((way) => [way, new Map<string, { ms: number; calls: number }>()]))
let parts = partsOf.get(WAYS[WAYS.length - 1] as Way) as Map<string, { ms: number; calls: number }>
let measuring = false
// biome-ignore lint/suspicious/noExplicitAny: a bench reaches into the services' private fields.
function time(owner: any, method: string, name: string) {
  const original = owner[method].bind(owner)
  owner[method] = async (...args: unknown[]) => {
    const started = performance.now()
    try {
      return await original(...args)
    } finally {
      if (measuring) {
        const part = parts.get(name) ?? { ms: 0, calls: 0 }
        part.ms += performance.now() - started
        part.calls++
        parts.set(name, part)
      }
    }
  }
}
// biome-ignore lint/suspicious/noExplicitAny: as above.
const search = app.services.search as any
time(search.memories, 'settings', 'memory settings')
time(search.embeddings, 'embedQuery', 'embed the query')
time(search.facts, 'of', 'agent facts (participants, newest)')
time(search.sources.lexicalSearch, 'lexical', 'lexical top-k')
time(search.sources.lexicalSearch, 'feedback', 'lexical feedback')
time(search.sources.lexicalSearch, 'cooccurrence', 'lexical co-occurrence')
time(search.accesses, 'record', 'access tracking')
const embeddings = search.embeddings
const index = embeddings.index.bind(embeddings)
embeddings.index = async (...args: [string, 'message']) => {
  const started = performance.now()
  const found = await index(...args)
  if (measuring) {
    const part = parts.get('vector index (catch-up)') ?? { ms: 0, calls: 0 }
    part.ms += performance.now() - started
    part.calls++
    parts.set('vector index (catch-up)', part)
  }
  const wrapped = Object.create(found)
  wrapped.search = async (...searchArgs: unknown[]) => {
    const at = performance.now()
    const hits = await found.search(...searchArgs)
    if (measuring) {
      const part = parts.get('vector search') ?? { ms: 0, calls: 0 }
      part.ms += performance.now() - at
      part.calls++
      parts.set('vector search', part)
    }
    return hits
  }
  return wrapped
}
for (const method of [
  'messages',
  'turnsBeside',
  'turnSpans',
  'memoryItems',
  'sessionIdOf',
  'documentTexts',
  'memoryItemIdsFromTurns',
])
  time(search.recall, method, `recall.${method}`)

const random = seededRandom(7)
const text = textMaker(random)
const body = (q: string) =>
  JSON.stringify({
    query: `query($q: String!) { search(input: { query: $q, limit: 10, strategy: ${strategy}, scopes: [${scope}] }) { ... on SearchResult { hits { score text } } } }`,
    variables: { q },
  })
const ask = async (q: string) => {
  const json = await gql(body(q))
  if (json.errors) throw new Error(JSON.stringify(json.errors))
  return json
}
// Warmed up the first way compared: what it loads lazily (an index the other never reads) is
// loaded before anything is measured.
useWay(WAYS[0] as Way)
for (let i = 0; i < 40; i++) await ask(text.sentence(2, 5))
await app.services.embeddings.settled()
for (let i = 0; i < 20; i++) await ask(text.sentence(2, 5))

// `--cpu-prof FILE`: a V8 CPU profile of the measured searches only (not the seed or the warm-up),
// for chrome://inspect or a script that sums self time per function.
const profileFile = argument('cpu-prof', argument('cpu-profile', ''))
const inspector = profileFile ? new Session() : null
if (inspector) {
  inspector.connect()
  await inspector.post('Profiler.enable')
  await inspector.post('Profiler.setSamplingInterval', { interval: 100 })
  await inspector.post('Profiler.start')
}
measuring = true
const wall = new Map(WAYS.map((way) => [way, [] as number[]]))
const cpu = new Map(WAYS.map((way) => [way, 0]))
let differing = 0
for (let i = 0; i < searches; i++) {
  // The same query both ways, the order alternating: the machine's load falls on both alike.
  const q = text.sentence(2, 5)
  const answers = new Set<string>()
  for (const way of i % 2 === 0 ? WAYS : [...WAYS].reverse()) {
    useWay(way)
    parts = partsOf.get(way) as typeof parts
    const cpuStart = process.cpuUsage()
    const started = performance.now()
    const answer = await ask(q)
    wall.get(way)?.push(performance.now() - started)
    const used = process.cpuUsage(cpuStart)
    cpu.set(way, (cpu.get(way) ?? 0) + used.user + used.system)
    answers.add(JSON.stringify(answer))
  }
  // Every way must answer alike (the same hits, texts and scores): a bench of a wrong path is void.
  if (answers.size > 1) differing++
}
measuring = false
if (inspector) {
  const { profile } = await inspector.post('Profiler.stop')
  fs.writeFileSync(profileFile, JSON.stringify(profile))
  inspector.disconnect()
}
useWay(WAYS[WAYS.length - 1] as Way)
console.info(
  `queries whose hits differ between the ways: ${differing} of ${searches}; searches run again for a pool row gone: ${search.candidateRowsRetries}`,
)
for (const way of WAYS) {
  const times = wall.get(way) as number[]
  const total = times.reduce((a, b) => a + b, 0)
  console.info(
    `${backend}, ${entries.toLocaleString('en-US')} turns, ${searches} ${strategy} ${scope} searches, ${compare} '${way}': mean ${(total / searches).toFixed(2)} ms, p50 ${median(times).toFixed(2)}, p95 ${percentile(times, 95).toFixed(2)}, CPU ${((cpu.get(way) ?? 0) / 1_000 / searches).toFixed(2)} ms per search`,
  )
  let timed = 0
  for (const [name, { ms, calls }] of [...(partsOf.get(way) ?? [])].sort((a, b) => b[1].ms - a[1].ms)) {
    timed += ms
    console.info(
      `  ${name.padEnd(40)} ${(ms / searches).toFixed(3).padStart(8)} ms  (${(calls / searches).toFixed(1)} calls)`,
    )
  }
  console.info(
    `  ${'the rest (JS between, GraphQL)'.padEnd(40)} ${((total - timed) / searches).toFixed(3).padStart(8)} ms`,
  )
}
await close()

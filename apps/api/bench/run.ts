// API benchmark: real SQLite through Prisma and GraphQL through yoga.fetch (no network), so the
// figures are the server's own cost per operation.
import {
  type BenchOptions,
  type BenchRow,
  seededRandom,
  writeReport,
} from '../../../packages/core/bench/report.ts'
import { createAgentKey, createTestApp } from '../test/helpers.ts'

/** Quick mode (CI smoke) times a tenth of the operations over the same data. */
export async function apiBenchmarks({ quick, random }: BenchOptions): Promise<BenchRow[]> {
  const n = (full: number) => (quick ? Math.max(10, Math.round(full / 10)) : full)
  const t = await createTestApp()
  const key = await createAgentKey(t, 'bench-agent')
  const words = 'agent page login form title result network selector click wait url error step data'.split(
    ' ',
  )
  const text = (n: number) =>
    Array.from({ length: n }, () => words[Math.floor(random() * words.length)]).join(' ')
  const rows: BenchRow[] = []

  async function timed(label: string, count: number, run: (i: number) => Promise<unknown>, unit = 'ops/s') {
    const start = performance.now()
    for (let i = 0; i < count; i++) await run(i)
    const seconds = (performance.now() - start) / 1_000
    rows.push({ name: label, value: count / seconds, unit, note: `${count} sequential` })
  }

  const ADD = `mutation($c: String!) { addMessage(input: { conversationId: "bench", role: USER, content: $c }) { __typename } }`
  await timed('addMessage (message + entry, one transaction)', n(500), () => t.gql(ADD, { c: text(40) }, key))

  const BATCH = `mutation($m: [MessageInput!]!) { addMessages(input: { conversationId: "bench", messages: $m }) { __typename } }`
  const batch = () => Array.from({ length: 100 }, () => ({ role: 'ASSISTANT', content: text(60) }))
  const batchStart = performance.now()
  for (let i = 0; i < 20; i++) await t.gql(BATCH, { m: batch() }, key)
  rows.push({
    name: 'addMessages, batches of 100',
    value: 2_000 / ((performance.now() - batchStart) / 1_000),
    unit: 'messages/s',
    note: '20 batches',
  })

  const WINDOW = `{ contextWindow(conversationId: "bench", budget: { maxContextTokens: 20000, fullMessageWindow: 30 }) { ... on ContextWindow { totalTokens compressed { tokenCount } } } }`
  const messageCount = n(500) + 2_000
  await timed(
    `contextWindow over ${messageCount.toLocaleString('en-US')} messages (under pressure)`,
    n(20),
    () => t.gql(WINDOW, {}, key),
  )

  const entries = await t.db.memoryEntry.findMany({ select: { id: true }, take: 2_000 })
  const vector = () => Array.from({ length: 384 }, () => random() - 0.5)
  const UPSERT = `mutation($id: ID!, $v: [Float!]!) { upsertEmbedding(entryId: $id, vector: $v) { __typename } }`
  await timed('upsertEmbedding, 384 dimensions', 2_000, (i) =>
    t.gql(UPSERT, { id: String(entries[i]?.id), v: vector() }, key),
  )
  const SEARCH = `query($v: [Float!]!) { searchByVector(vector: $v, limit: 10) { ... on VectorSearchResult { hits { similarity } } } }`
  await timed('searchByVector top-10 over 2,000 vectors', n(200), () => t.gql(SEARCH, { v: vector() }, key))

  const RUN = `mutation { runOptimizer { ... on OptimizationSnapshot { tokensBefore tokensAfter } } }`
  const runStart = performance.now()
  await t.gql(RUN, {}, key)
  rows.push({
    name: `runOptimizer over ${messageCount.toLocaleString('en-US')} entries`,
    value: performance.now() - runStart,
    unit: 'ms',
    note: 'analyze + apply + snapshot',
  })

  // Memory items through the verification pipeline (Jaccard over current items, semantic neighbours),
  // then search and context assembly over them.
  const MEMORY = `mutation($c: String!) { createMemory(input: { content: $c, category: FACT }) { ... on MemoryWrite { outcome } } }`
  const memoryKey = await createAgentKey(t, 'bench-memories')
  await t.gql(
    `mutation { updateMemorySettings(settings: { maxEntriesPerAgent: 0 }) { __typename } }`,
    {},
    memoryKey,
  )
  await timed('createMemory (verified, embedded), 1,000 writes', 1_000, (i) =>
    t.gql(MEMORY, { c: `memory ${i}: ${text(12)}` }, memoryKey),
  )
  const MEMORY_SEARCH = `query($q: String!) { search(input: { query: $q, scopes: [MEMORIES], limit: 10 }) { ... on SearchResult { hits { score } } } }`
  await timed('search MEMORIES (hybrid + MMR) over 1,000 memories', n(200), () =>
    t.gql(MEMORY_SEARCH, { q: text(4) }, memoryKey),
  )
  const MESSAGE_SEARCH = `query($q: String!) { search(input: { query: $q, scopes: [MESSAGES], limit: 10 }) { ... on SearchResult { hits { score } } } }`
  await timed(
    `search MESSAGES (hybrid + context + MMR) over ${messageCount.toLocaleString('en-US')} messages`,
    n(200),
    () => t.gql(MESSAGE_SEARCH, { q: text(4) }, key),
  )
  const CONTEXT = `query($q: String!) { memoryContext(input: { query: $q, budgetTokens: 4000 }) { ... on MemoryContext { totalTokens } } }`
  await timed('memoryContext (uncached: every query differs), 1,000 memories', n(100), (i) =>
    t.gql(CONTEXT, { q: `${text(4)} ${i}` }, memoryKey),
  )
  await timed('memoryContext (cached)', n(1_000), () => t.gql(CONTEXT, { q: 'the same question' }, memoryKey))
  const exportStart = performance.now()
  const exported = await t.gql(
    `{ exportMemory { ... on MemoryExport { document memories vectors } } }`,
    {},
    memoryKey,
  )
  rows.push({
    name: `exportMemory, ${exported.data.exportMemory.memories} memories with vectors`,
    value: performance.now() - exportStart,
    unit: 'ms',
    note: 'the rest of the 1,000 writes were verified duplicates',
  })
  const importKey = await createAgentKey(t, 'bench-import')
  const importStart = performance.now()
  await t.gql(
    `mutation($d: JSON!) { importMemory(document: $d) { __typename } }`,
    { d: exported.data.exportMemory.document },
    importKey,
  )
  rows.push({
    name: 'importMemory (REPLACE), same document',
    value: performance.now() - importStart,
    unit: 'ms',
    note: 'one transaction',
  })

  await t.close()
  return rows
}

// Run on its own: `tsx apps/api/bench/run.ts [--quick]` (the harness imports the function).
if (import.meta.url === `file://${process.argv[1]}`) {
  const rows = await apiBenchmarks({ quick: process.argv.includes('--quick'), random: seededRandom(11) })
  writeReport('api', 'API over SQLite (apps/api, yoga.fetch)', rows)
}

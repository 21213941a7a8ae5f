// API benchmark: real SQLite through Prisma and GraphQL through yoga.fetch (no network), so the
// figures are the server's own cost per operation.
import { type BenchRow, seededRandom, writeReport } from '../../../packages/core/bench/report.ts'
import { createAgentKey, createTestApp } from '../test/helpers.ts'

const t = await createTestApp()
const key = await createAgentKey(t, 'bench-agent')
const random = seededRandom(11)
const words = 'agent page login form title result network selector click wait url error step data'.split(' ')
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
await timed('addMessage (message + entry, one transaction)', 500, () => t.gql(ADD, { c: text(40) }, key))

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
await timed('contextWindow over 2,500 messages (under pressure)', 20, () => t.gql(WINDOW, {}, key))

const entries = await t.db.memoryEntry.findMany({ select: { id: true }, take: 2_000 })
const vector = () => Array.from({ length: 384 }, () => random() - 0.5)
const UPSERT = `mutation($id: ID!, $v: [Float!]!) { upsertEmbedding(entryId: $id, vector: $v) { __typename } }`
await timed('upsertEmbedding, 384 dimensions', 2_000, (i) =>
  t.gql(UPSERT, { id: String(entries[i]?.id), v: vector() }, key),
)
const SEARCH = `query($v: [Float!]!) { searchByVector(vector: $v, limit: 10) { ... on VectorSearchResult { hits { similarity } } } }`
await timed('searchByVector top-10 over 2,000 vectors', 200, () => t.gql(SEARCH, { v: vector() }, key))

const RUN = `mutation { runOptimizer { ... on OptimizationSnapshot { tokensBefore tokensAfter } } }`
const runStart = performance.now()
await t.gql(RUN, {}, key)
rows.push({
  name: 'runOptimizer over 2,500 entries',
  value: performance.now() - runStart,
  unit: 'ms',
  note: 'analyze + apply + snapshot',
})

writeReport('api', 'API over SQLite (apps/api, yoga.fetch)', rows)
await t.close()

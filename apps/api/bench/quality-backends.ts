// LoCoMo recall on both storage backends in one run: `pnpm bench:quality -- --dataset PATH
// --backend sqlite,postgres [--postgres-url URL]`. Each backend ingests the development set through
// the engine's operations (what the API's resolvers call: the same addMessage and search inputs as
// the quality suite's defaults), then every question is asked on each. Reported side by side:
// recall@5/10/25 per category, the questions whose top 25 differ (named, not averaged away), and
// what the lexical side costs per query on each backend (the FullTextIndex port's calls timed).
// Postgres is a throwaway postgresql-15 (packages/test-servers) unless a URL is given.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { type Clock, createHashingEmbedder, createTokenCounter, type Embedder } from '@engram/core'
import { createOperations, type Engine, type FullTextIndex } from '@engram/engine'
import { loadWordNetLexicon } from '@engram/providers'
import { applyPostgresMigrations, createPostgresDatabase, createPostgresEngine } from '@engram/store-postgres'
import {
  applyMigrations,
  createDatabase,
  createSqliteEngine,
  migrationsDirectory,
} from '@engram/store-sqlite'
import { createDatabase as createPostgresTestDatabase, startPostgres } from '@engram/test-servers'
import { type LocomoConversation, loadLocomo } from '../../../packages/core/bench/locomo.ts'
import { type BenchRow, percentile } from '../../../packages/core/bench/report.ts'
import { BUCKETS, inBucket, KS, meanRecall, outcomeOf, type QuestionOutcome } from './quality-crossval.ts'

export const BACKENDS = ['sqlite', 'postgres'] as const
export type Backend = (typeof BACKENDS)[number]

/** Enough hits for R@25. */
const SEARCH_LIMIT = 25
const QUIET = { info() {}, warn() {}, error() {} }
/** The expansions' weights for the cost pass: the defaults leave them off, so documentFrequencies is never called. */
const EXPANSION_WEIGHTS = { feedback: 0.5, cooccurrence: 0.5 }

export interface BackendOptions {
  dataset: string
  backends: Backend[]
  /** A Postgres server to create a throwaway database on; a throwaway server when not given. */
  postgresUrl?: string
}

/** The port's calls timed, in ms, per method; and per search, the sum of its calls. */
interface PortTimings {
  calls: Record<'corpus' | 'postings' | 'documentFrequencies', number[]>
  perSearch: number[]
  postingsPerSearch: number[]
}

interface BackendRun {
  backend: Backend
  ingestSeconds: number
  /** Per conversation, per question: the dia ids retrieved, best first. */
  retrieved: Map<string, string[][]>
  outcomes: QuestionOutcome[]
  searchMs: number[]
  /** The defaults' searches. */
  port: PortTimings
  /** The cost pass (feedback and co-occurrence on). */
  expansionPort: PortTimings
  expansionSearchMs: number[]
}

/** Wraps the engine's FullTextIndex in place (search holds this very object) so each call is timed. */
function timePort(fullText: FullTextIndex): { current: PortTimings; reset(): PortTimings } {
  const fresh = (): PortTimings => ({
    calls: { corpus: [], postings: [], documentFrequencies: [] },
    perSearch: [],
    postingsPerSearch: [],
  })
  const state = { current: fresh() }
  for (const method of ['corpus', 'postings', 'documentFrequencies'] as const) {
    const original = (fullText[method] as (...a: unknown[]) => Promise<unknown>).bind(fullText)
    ;(fullText as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
      const started = performance.now()
      try {
        return await original(...args)
      } finally {
        state.current.calls[method].push(performance.now() - started)
      }
    }
  }
  return {
    get current() {
      return state.current
    },
    reset() {
      state.current = fresh()
      return state.current
    },
  }
}

async function openEngine(
  backend: Backend,
  embedder: Embedder,
  postgresUrl: string | null,
): Promise<{ engine: Engine; close(): Promise<void> }> {
  const clock: Clock = { now: () => new Date() }
  const tokenCounter = createTokenCounter()
  const common = {
    clock,
    tokenCounter,
    embedder,
    log: QUIET,
    automaticSummaries: false,
    automaticProfile: false,
  }
  // Closing waits for the embeddings in flight, then disconnects and removes what the run made.
  const opened = (engine: Engine, db: { $disconnect(): Promise<void> }, removeFiles = () => {}) => ({
    engine,
    async close() {
      await engine.embeddings.settled()
      await db.$disconnect()
      removeFiles()
    },
  })
  if (backend === 'sqlite') {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-quality-'))
    const file = path.join(dir, 'store.db')
    applyMigrations(file, migrationsDirectory())
    const db = createDatabase(file)
    return opened(createSqliteEngine({ ...common, db }) as unknown as Engine, db, () =>
      fs.rmSync(dir, { recursive: true, force: true }),
    )
  }
  if (!postgresUrl) throw new Error('postgres backend without a server')
  const url = await createPostgresTestDatabase(postgresUrl)
  await applyPostgresMigrations(url)
  const db = createPostgresDatabase(url)
  return opened(createPostgresEngine({ ...common, db }) as unknown as Engine, db)
}

async function runBackend(
  backend: Backend,
  conversations: LocomoConversation[],
  embedder: Embedder,
  postgresUrl: string | null,
): Promise<BackendRun> {
  const { engine, close } = await openEngine(backend, embedder, postgresUrl)
  const timings = timePort(engine.storage.fullText)
  const operations = createOperations(engine)
  try {
    // Ingest: the quality suite's default (`structured`: the turn's text, the speaker as a field).
    const started = performance.now()
    const diaIds = new Map<string, string>()
    for (const conversation of conversations) {
      await engine.agents.createAgent(conversation.id)
      const principal = { kind: 'agent' as const, agentId: conversation.id }
      for (const turn of conversation.turns) {
        const result = await operations.call('addMessage', principal, {
          conversationId: conversation.id,
          role: 'USER',
          timestamp: turn.timestamp.toISOString(),
          content: turn.caption ? `${turn.text} [shared ${turn.caption}]` : turn.text,
          speaker: turn.speaker,
          metadata: { dia_id: turn.diaId },
        })
        if (!result.ok) throw new Error(`${backend}: addMessage failed: ${JSON.stringify(result.error)}`)
        diaIds.set(`${conversation.id}\u0000${result.data.id}`, turn.diaId)
      }
      await engine.embeddings.fill(conversation.id, 'message')
    }
    await engine.embeddings.settled()
    const ingestSeconds = (performance.now() - started) / 1_000

    const ask = async (
      conversation: LocomoConversation,
      query: string,
      weights?: typeof EXPANSION_WEIGHTS,
    ) => {
      const principal = { kind: 'agent' as const, agentId: conversation.id }
      const before = {
        calls: Object.values(timings.current.calls).reduce((n, list) => n + list.length, 0),
        postings: timings.current.calls.postings.length,
      }
      const askedAt = performance.now()
      const result = await operations.call('search', principal, {
        query,
        scopes: ['MESSAGES'],
        limit: SEARCH_LIMIT,
        ...(weights ? { weights } : {}),
      })
      const ms = performance.now() - askedAt
      if (!result.ok) throw new Error(`${backend}: search failed: ${JSON.stringify(result.error)}`)
      const all = Object.values(timings.current.calls).flat()
      const calls = Object.values(timings.current.calls).reduce((n, list) => n + list.length, 0)
      timings.current.perSearch.push(all.slice(-(calls - before.calls)).reduce((a, b) => a + b, 0))
      timings.current.postingsPerSearch.push(timings.current.calls.postings.length - before.postings)
      return {
        ms,
        ids: result.data.hits.map((h) => diaIds.get(`${conversation.id}\u0000${h.id}`) ?? `?${h.id}`),
      }
    }

    // A first search per agent warms its caches (participants, corpus figures): not timed.
    for (const conversation of conversations) await ask(conversation, 'warm-up')
    const port = timings.reset()
    const retrieved = new Map<string, string[][]>()
    const outcomes: QuestionOutcome[] = []
    const searchMs: number[] = []
    for (const conversation of conversations) {
      const lists: string[][] = []
      for (const question of conversation.questions) {
        const { ms, ids } = await ask(conversation, question.question)
        searchMs.push(ms)
        lists.push(ids)
        outcomes.push(outcomeOf(question.category, ids, question.evidence))
      }
      retrieved.set(conversation.id, lists)
    }
    const expansionPort = timings.reset()
    const expansionSearchMs: number[] = []
    for (const conversation of conversations)
      for (const question of conversation.questions)
        expansionSearchMs.push((await ask(conversation, question.question, EXPANSION_WEIGHTS)).ms)
    return {
      backend,
      ingestSeconds,
      retrieved,
      outcomes,
      searchMs,
      port,
      expansionPort,
      expansionSearchMs,
    }
  } finally {
    await close()
  }
}

const ms = (values: readonly number[], p: number) => percentile(values, p).toFixed(2)
const mean = (values: readonly number[]) =>
  values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length

/** Each backend's recall, the differing questions and the per-query costs, as rows and as markdown. */
export async function backendComparison(
  options: BackendOptions,
): Promise<{ rows: BenchRow[]; table: string }> {
  const conversations = loadLocomo(options.dataset)
  const lexicon = loadWordNetLexicon()
  const embedder = createHashingEmbedder({ lexicon })
  const server = options.backends.includes('postgres') && !options.postgresUrl ? await startPostgres() : null
  const postgresUrl = options.postgresUrl ?? server?.url ?? null
  const runs: BackendRun[] = []
  try {
    for (const backend of options.backends)
      runs.push(await runBackend(backend, conversations, embedder, postgresUrl))
  } finally {
    await server?.stop()
  }

  const rows: BenchRow[] = []
  const lines: string[] = []
  const row = (cells: (string | number)[]) => lines.push(`| ${cells.join(' | ')} |`)
  const questions = conversations.reduce((n, c) => n + c.questions.length, 0)
  const turns = conversations.reduce((n, c) => n + c.turns.length, 0)
  lines.push(
    `## Retrieval quality by backend (${conversations.map((c) => c.id).join(', ')}: ${turns} turns, ${questions} questions, defaults)`,
    '',
  )
  row(['R@5 / R@10 / R@25 %', 'n', ...runs.map((r) => r.backend)])
  row(['---', '---:', ...runs.map(() => '---:')])
  for (const bucket of BUCKETS) {
    const n = inBucket(runs[0]?.outcomes ?? [], bucket).length
    if (n === 0) continue
    row([
      bucket === 'overall' ? '**overall**' : bucket,
      n,
      ...runs.map((r) => KS.map((k) => meanRecall(inBucket(r.outcomes, bucket), k).toFixed(1)).join(' / ')),
    ])
    for (const r of runs)
      for (const k of KS)
        rows.push({
          name: `${r.backend} ${bucket} R@${k}`,
          value: meanRecall(inBucket(r.outcomes, bucket), k),
          unit: '%',
          better: 'higher',
          note: `n=${n}`,
        })
  }

  // Every question whose top 25 differs between the first backend and each other one, by name.
  const [first, ...others] = runs
  for (const other of first ? others : []) {
    const differing: string[] = []
    for (const conversation of conversations) {
      const a = first?.retrieved.get(conversation.id) ?? []
      const b = other.retrieved.get(conversation.id) ?? []
      for (const [i, question] of conversation.questions.entries())
        if (JSON.stringify(a[i]) !== JSON.stringify(b[i]))
          differing.push(
            `${conversation.id} #${i + 1} "${question.question}": ${a[i]?.join(',')} vs ${b[i]?.join(',')}`,
          )
    }
    const r10 = (r: BackendRun) => meanRecall(r.outcomes, 10)
    const gap = first ? r10(other) - r10(first) : Number.NaN
    lines.push(
      '',
      `${other.backend} vs ${first?.backend}: R@10 ${gap >= 0 ? '+' : '−'}${Math.abs(gap).toFixed(1)} pts (acceptance: within 1); top 25 differs on ${differing.length} of ${questions} questions${differing.length ? ':' : '.'}`,
    )
    for (const d of differing.slice(0, 50)) lines.push(`- ${d}`)
    rows.push({
      name: `${other.backend} − ${first?.backend} overall R@10`,
      value: gap,
      unit: 'pts',
      note: 'acceptance: within 1 point',
      target: { op: '<=', value: 1 },
    })
    rows.push({
      name: `${other.backend} vs ${first?.backend}: questions whose top 25 differ`,
      value: differing.length,
      unit: 'questions',
    })
  }

  lines.push('', '### Cost per query (ms; the FullTextIndex port timed inside each search)', '')
  row(['', ...runs.map((r) => r.backend)])
  row(['---', ...runs.map(() => '---:')])
  row(['ingest (s)', ...runs.map((r) => r.ingestSeconds.toFixed(1))])
  row(['search p50 / p95, defaults', ...runs.map((r) => `${ms(r.searchMs, 50)} / ${ms(r.searchMs, 95)}`)])
  row([
    'port time per search p50 / p95',
    ...runs.map((r) => `${ms(r.port.perSearch, 50)} / ${ms(r.port.perSearch, 95)}`),
  ])
  row(['postings calls per search (mean)', ...runs.map((r) => mean(r.port.postingsPerSearch).toFixed(1))])
  row([
    'postings p50 / p95',
    ...runs.map((r) => `${ms(r.port.calls.postings, 50)} / ${ms(r.port.calls.postings, 95)}`),
  ])
  row([
    'corpus p50 / p95',
    ...runs.map((r) => `${ms(r.port.calls.corpus, 50)} / ${ms(r.port.calls.corpus, 95)}`),
  ])
  row([
    'search p50 / p95, feedback + co-occurrence on',
    ...runs.map((r) => `${ms(r.expansionSearchMs, 50)} / ${ms(r.expansionSearchMs, 95)}`),
  ])
  row([
    'documentFrequencies p50 / p95 (calls)',
    ...runs.map(
      (r) =>
        `${ms(r.expansionPort.calls.documentFrequencies, 50)} / ${ms(r.expansionPort.calls.documentFrequencies, 95)} (${r.expansionPort.calls.documentFrequencies.length})`,
    ),
  ])
  row([
    'postings calls per search (mean), expansions on',
    ...runs.map((r) => mean(r.expansionPort.postingsPerSearch).toFixed(1)),
  ])
  row([
    'port time per search p50 / p95, expansions on',
    ...runs.map((r) => `${ms(r.expansionPort.perSearch, 50)} / ${ms(r.expansionPort.perSearch, 95)}`),
  ])
  for (const r of runs) {
    rows.push({ name: `${r.backend} ingest`, value: r.ingestSeconds, unit: 's' })
    rows.push({
      name: `${r.backend} search p95`,
      value: percentile(r.searchMs, 95),
      unit: 'ms',
      better: 'lower',
    })
    rows.push({
      name: `${r.backend} postings p95`,
      value: percentile(r.port.calls.postings, 95),
      unit: 'ms',
      better: 'lower',
    })
    rows.push({
      name: `${r.backend} port time per search p95`,
      value: percentile(r.port.perSearch, 95),
      unit: 'ms',
      better: 'lower',
    })
    rows.push({
      name: `${r.backend} documentFrequencies p95 (expansions on)`,
      value: percentile(r.expansionPort.calls.documentFrequencies, 95),
      unit: 'ms',
      better: 'lower',
    })
  }
  return { rows, table: lines.join('\n') }
}

/** `--backend sqlite,postgres`: the backends named, each known. */
export function parseBackends(value: string): Backend[] {
  const names = value.split(',').map((name) => name.trim())
  for (const name of names)
    if (!(BACKENDS as readonly string[]).includes(name))
      throw new Error(`--backend: unknown backend "${name}" (one or more of ${BACKENDS.join(', ')})`)
  return names as Backend[]
}

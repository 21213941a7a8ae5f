// Recall at scale (issue 18): the LoCoMo development conversations planted inside a large synthetic
// history of the same agent, beside the same conversations alone, asked the same questions in the
// same run: what faster search must not cost. `tsx apps/api/bench/quality-scale.ts --dataset PATH
// [--quick] [--turns N]` (the harness imports qualityScaleBenchmarks).
//
// Each conversation gets two agents: `<id>-alone` holds only the conversation, `<id>-scaled` holds
// `turns` synthetic turns first and then the conversation. The synthetic turns have the same shape
// as the real ones: the conversation's two speakers taking turns, sessions of a few dozen turns
// with a date each over the year up to the conversation's last session (also between its
// sessions), and `Speaker said, "…"` text drawn from a Zipfian vocabulary ranked by the dataset's
// own word frequencies (then a tail of made-up words), so distractors share the questions' words
// as real history would. They are seeded by direct SQL into the migrated schema (the full-text
// triggers fire as for any insert) with vectors from the server's own embedder, as load.ts seeds;
// the conversations go in through addMessage. Questions are asked through `search` (MESSAGES,
// the default ranking, 25 hits) of both agents alternately; recall@k is scored on LoCoMo's dia ids.
//
// "Before and after each speed change, in the same run": the same questions also go to two more
// servers over the same database file, as other processes would open it. One runs the search path
// from before issue 18 (the in-process lexical index off, so FTS5 ranks; HNSW instead of slot
// postings for the hashing embedder's vectors); one runs every exact path (lexical index off, the
// exact vector scan in JavaScript at every size): its recall is the scaled rows' target.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createHashingEmbedder, createTokenCounter, vectorToBytes } from '@engram/core'
import { contentHash, hashApiKey, keyPrefix } from '@engram/engine'
import { loadWordNetLexicon } from '@engram/providers'
import { applyMigrations, migrationsDirectory } from '@engram/store-sqlite'
import Database from 'better-sqlite3'
import { type LocomoConversation, loadLocomo } from '../../../packages/core/bench/locomo.ts'
import { type BenchRow, percentile, seededRandom, writeReport } from '../../../packages/core/bench/report.ts'
import { candidateRowsOf, dialogueReadsOf } from '../src/env.ts'
import { createTestApp, type TestApp } from '../test/helpers.ts'
import { meanRecall, outcomeOf, type QuestionOutcome } from './quality-crossval.ts'

/** Synthetic turns per conversation's scaled agent: the issue's 100K, ~10K for the smoke run. */
export const SCALE_TURNS = { full: 100_000, quick: 10_000 } as const
const SEARCH_LIMIT = 25
const KS = [5, 10, 25] as const
/** Turns per synthetic session (uniform in this range), as LoCoMo's sessions run. */
const SESSION_TURNS = [12, 36] as const
/** Made-up words after the dataset's own: a long tail no question asks about. */
const TAIL_WORDS = 20_000
/** Zipf's exponent: word frequency ∝ rank^-s (≈1 in English text). */
const ZIPF_EXPONENT = 1.07
const YEAR_MS = 365 * 86_400_000

export interface QualityScaleOptions {
  dataset: string
  quick?: boolean
  /** Synthetic turns per scaled agent (default SCALE_TURNS by quick). */
  turns?: number
}

const SEARCH = `query($input: SearchInput!) { search(input: $input) { __typename ... on SearchResult { hits { message { metadata } } } ... on Error { message } } }`
const ADD = `mutation($input: AddMessageInput!) { addMessage(input: $input) { __typename } }`

type SearchPath = 'now' | 'before' | 'exact'
type Side = 'alone' | 'scaled'
/** The search paths compared on the same data, and which agents each is asked about. */
const PATHS: Record<SearchPath, { label: string; sides: readonly Side[] }> = {
  now: { label: '', sides: ['alone', 'scaled'] },
  before: { label: ', before issue 18 (FTS5 ranking, HNSW)', sides: ['alone', 'scaled'] },
  // The conversations alone are under the exact-scan size: only the scaled agents differ.
  exact: {
    label: ", issue 18's fast paths off (lexical index off, exact vector scan in JavaScript)",
    sides: ['scaled'],
  },
}

/** Lowercase word tokens, as the vocabulary is ranked. */
const wordsOf = (text: string) => text.toLowerCase().match(/[a-z][a-z']+/g) ?? []

/** A sampler of words by Zipf's law over the dataset's words (most frequent first), then made-up ones. */
function zipfianWords(conversations: readonly LocomoConversation[], random: () => number): () => string {
  const counts = new Map<string, number>()
  for (const c of conversations)
    for (const turn of c.turns) for (const w of wordsOf(turn.text)) counts.set(w, (counts.get(w) ?? 0) + 1)
  const ranked = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([w]) => w)
  for (let i = 0; i < TAIL_WORDS; i++) ranked.push(`z${i.toString(36)}q`)
  const cumulative = new Float64Array(ranked.length)
  let total = 0
  for (let r = 0; r < ranked.length; r++) {
    total += 1 / (r + 1) ** ZIPF_EXPONENT
    cumulative[r] = total
  }
  return () => {
    const target = random() * total
    let lo = 0
    let hi = ranked.length - 1
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if ((cumulative[mid] as number) < target) lo = mid + 1
      else hi = mid
    }
    return ranked[lo] as string
  }
}

interface Seeded {
  /** Agent id → its key. */
  keys: Map<string, string>
  seconds: number
}

/**
 * The agents, their keys and the scaled agents' synthetic history, straight into the migrated
 * file: sessions and turns (the full-text triggers index them) and each turn's vector from the
 * embedder the app runs with, stored as the server stores it.
 */
function seedSynthetic(
  file: string,
  conversations: readonly LocomoConversation[],
  turns: number,
  embedder: ReturnType<typeof createHashingEmbedder>,
  random: () => number,
): Seeded {
  const started = performance.now()
  applyMigrations(file, migrationsDirectory())
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = OFF')
  const tokens = createTokenCounter('o200k_base')
  const word = zipfianWords(conversations, random)
  const now = new Date().toISOString().replace('Z', '+00:00')
  const insertAgent = db.prepare(`INSERT INTO "Agent" ("id", "name", "createdAt") VALUES (?, ?, ?)`)
  const insertKey = db.prepare(
    `INSERT INTO "ApiKey" ("id", "agentId", "role", "label", "keyHash", "keyPrefix", "createdAt") VALUES (?, ?, 'AGENT', 'bench', ?, ?, ?)`,
  )
  const insertSession = db.prepare(
    `INSERT INTO "Session" ("id", "agentId", "conversationId", "messageCount", "createdAt", "updatedAt") VALUES (?, ?, ?, ?, ?, ?)`,
  )
  const insertMessage = db.prepare(
    `INSERT INTO "Message" ("sessionId", "agentId", "role", "speaker", "content", "tokenCount", "isCompressed", "metadata", "timestamp", "createdAt") VALUES (?, ?, 'user', ?, ?, ?, 0, ?, ?, ?)`,
  )
  const insertEmbedding = db.prepare(
    `INSERT INTO "Embedding" ("kind", "ownerId", "agentId", "model", "dimensions", "vector", "contentHash", "createdAt") VALUES ('message', ?, ?, ?, ?, ?, ?, ?)`,
  )
  const keys = new Map<string, string>()
  db.transaction(() => {
    for (const c of conversations)
      for (const agentId of [`${c.id}-alone`, `${c.id}-scaled`]) {
        const key = `engram_bench-scale-${agentId}-0123456789abcdef`
        insertAgent.run(agentId, agentId, now)
        insertKey.run(`key-${agentId}`, agentId, hashApiKey(key), keyPrefix(key), now)
        keys.set(agentId, key)
      }
  })()
  for (const c of conversations) {
    const agentId = `${c.id}-scaled`
    const speakers = [...new Set(c.turns.map((t) => t.speaker))].slice(0, 2)
    const last = Math.max(...c.turns.map((t) => t.timestamp.getTime()))
    // Sessions over the year up to the conversation's last one: before it and between its sessions.
    let session = 0
    let written = 0
    while (written < turns) {
      const size = Math.min(
        turns - written,
        SESSION_TURNS[0] + Math.floor(random() * (SESSION_TURNS[1] - SESSION_TURNS[0] + 1)),
      )
      const start = last - Math.floor(random() * YEAR_MS)
      const sessionId = `${agentId}-syn${session}`
      db.transaction(() => {
        insertSession.run(
          sessionId,
          agentId,
          `synthetic-${session}`,
          size,
          new Date(start).toISOString().replace('Z', '+00:00'),
          now,
        )
        for (let i = 0; i < size; i++) {
          const speaker = speakers[i % speakers.length] ?? 'Speaker'
          const length = 6 + Math.floor(random() * 24)
          const text = Array.from({ length }, word).join(' ')
          const content = `${speaker} said, "${text.charAt(0).toUpperCase()}${text.slice(1)}."`
          const at = new Date(start + i * 30_000).toISOString().replace('Z', '+00:00')
          const { lastInsertRowid } = insertMessage.run(
            sessionId,
            agentId,
            speaker,
            content,
            tokens.count(content),
            JSON.stringify({ speaker }),
            at,
            now,
          )
          const vector = embedder.embedOne(content)
          insertEmbedding.run(
            lastInsertRowid,
            agentId,
            embedder.model,
            vector.length,
            vectorToBytes(vector),
            contentHash(content),
            now,
          )
        }
      })()
      written += size
      session++
    }
  }
  db.pragma('wal_checkpoint(TRUNCATE)')
  db.close()
  return { keys, seconds: (performance.now() - started) / 1_000 }
}

/** The conversation through the public API, as the quality suite's `said` ingest sends it. */
async function ingest(t: TestApp, conversation: LocomoConversation, key: string): Promise<void> {
  for (const turn of conversation.turns) {
    const input = {
      conversationId: conversation.id,
      role: 'USER',
      timestamp: turn.timestamp.toISOString(),
      content: turn.content,
      metadata: { dia_id: turn.diaId, speaker: turn.speaker },
    }
    const result = await t.gql(ADD, { input }, key)
    if (result.data?.addMessage?.__typename !== 'Message')
      throw new Error(`addMessage failed: ${JSON.stringify(result.errors ?? result.data)}`)
  }
}

async function ask(t: TestApp, key: string, question: string): Promise<{ retrieved: string[]; ms: number }> {
  const input = { query: question, scopes: ['MESSAGES'], limit: SEARCH_LIMIT }
  const started = performance.now()
  const result = await t.gql(SEARCH, { input }, key)
  const ms = performance.now() - started
  if (result.data?.search?.__typename !== 'SearchResult')
    throw new Error(`search failed: ${JSON.stringify(result.errors ?? result.data)}`)
  const hits = result.data.search.hits as { message: { metadata: { dia_id?: string } } }[]
  return { retrieved: hits.map((h) => String(h.message.metadata.dia_id)), ms }
}

/** Recall@5/10/25 of the conversations alone and planted in the synthetic history, same run. */
export async function qualityScaleBenchmarks(options: QualityScaleOptions): Promise<BenchRow[]> {
  const quick = options.quick ?? false
  const turns = options.turns ?? (quick ? SCALE_TURNS.quick : SCALE_TURNS.full)
  const all = loadLocomo(options.dataset)
  const conversations = quick ? all.slice(0, 1) : all
  const lexicon = loadWordNetLexicon()
  const embedder = createHashingEmbedder({ lexicon })
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'engram-quality-scale-'))
  const file = path.join(dir, 'scale.db')
  const seeded = seedSynthetic(file, conversations, turns, embedder, seededRandom(43))
  const t = await createTestApp({
    databaseFile: file,
    embedder,
    // ENGRAM_SEARCH_DIALOGUE_READS=all reads dialogue context as before hybrid18: same recall expected.
    env: {
      ENGRAM_SEARCH_DIALOGUE_READS: dialogueReadsOf(process.env.ENGRAM_SEARCH_DIALOGUE_READS),
      // ENGRAM_SEARCH_CANDIDATE_ROWS=all reads every candidate's row before scoring: same recall expected.
      ENGRAM_SEARCH_CANDIDATE_ROWS: candidateRowsOf(process.env.ENGRAM_SEARCH_CANDIDATE_ROWS),
    },
  })
  const others: TestApp[] = []
  try {
    const ingestStarted = performance.now()
    for (const c of conversations) {
      for (const side of ['alone', 'scaled'] as const) {
        const key = seeded.keys.get(`${c.id}-${side}`) as string
        await ingest(t, c, key)
        // The first search embeds what is queued and (past the exact-scan size) builds the
        // agent's vector index: both before anything is asked.
        await ask(t, key, 'warm-up')
        await t.app.services.embeddings.settled()
      }
    }
    const ingestSeconds = (performance.now() - ingestStarted) / 1_000
    const before = await createTestApp({
      sameStoreAs: t,
      embedder,
      // Issue 18's fast paths off: the store-read lexical path, HNSW, whole-span dialogue reads.
      env: { ENGRAM_LEXICAL_INDEX: 'off', ENGRAM_SEARCH_DIALOGUE_READS: 'all' },
      vectorIndex: { approximateIndex: 'hnsw' },
    })
    others.push(before)
    const exact = await createTestApp({
      sameStoreAs: t,
      embedder,
      vectorIndex: { approximateAbove: 1_000_000_000, scan: { kernel: 'javascript' } },
      env: { ENGRAM_LEXICAL_INDEX: 'off', ENGRAM_SEARCH_DIALOGUE_READS: 'all' },
    })
    others.push(exact)
    const apps: Record<SearchPath, TestApp> = { now: t, before, exact }
    const paths = Object.keys(PATHS) as SearchPath[]
    const asked = paths.flatMap((p) => PATHS[p].sides.map((side) => [p, side] as const))
    for (const [p, side] of asked)
      for (const c of conversations) {
        await ask(apps[p], seeded.keys.get(`${c.id}-${side}`) as string, 'warm-up')
        await apps[p].app.services.embeddings.settled()
      }
    const outcomes = new Map<string, QuestionOutcome[]>()
    const latency = new Map<string, number[]>()
    const cell = (p: SearchPath, side: Side) => `${p}:${side}`
    for (const c of conversations) {
      for (const [index, q] of c.questions.entries()) {
        // Which path and side go first rotates, so all see the same warm-up and machine load.
        const shift = index % asked.length
        for (const [p, side] of [...asked.slice(shift), ...asked.slice(0, shift)]) {
          const { retrieved, ms } = await ask(
            apps[p],
            seeded.keys.get(`${c.id}-${side}`) as string,
            q.question,
          )
          const key = cell(p, side)
          outcomes.set(key, [...(outcomes.get(key) ?? []), outcomeOf(q.category, retrieved, q.evidence)])
          latency.set(key, [...(latency.get(key) ?? []), ms])
        }
      }
    }
    const scale = `${(turns / 1_000).toLocaleString('en-US')}K synthetic turns`
    const recall = (p: SearchPath, side: Side, k: (typeof KS)[number]) =>
      meanRecall(outcomes.get(cell(p, side)) ?? [], k)
    const questions = `${outcomes.get(cell('now', 'scaled'))?.length ?? 0} questions of ${conversations.map((c) => c.id).join(', ')}`
    const rows: BenchRow[] = []
    for (const p of paths) {
      const label = PATHS[p].label
      for (const k of KS) {
        const alone = `overall R@${k}, conversations alone`
        const scaled = `overall R@${k}, inside ${scale} of the same agent`
        if (PATHS[p].sides.includes('alone'))
          rows.push({
            name: `${alone}${label}`,
            value: recall(p, 'alone', k),
            unit: '%',
            better: 'higher',
            ...(p === 'now' ? {} : { baseline: alone }),
          })
        const exactRecall = recall('exact', 'scaled', k)
        rows.push({
          name: `${scaled}${label}`,
          value: recall(p, 'scaled', k),
          unit: '%',
          better: 'higher',
          baseline: p === 'now' ? alone : scaled,
          // The target: what the exact paths find in the same run, on the same data.
          ...(p === 'now' ? { target: { op: '>=' as const, value: exactRecall } } : {}),
          note:
            p === 'now'
              ? `${questions}; target: the exact paths' ${exactRecall.toFixed(1)}% (same run)`
              : 'another server on the same database, asked the same questions in turn',
        })
      }
      for (const side of PATHS[p].sides) {
        const times = latency.get(cell(p, side)) ?? []
        rows.push({
          name: `search MESSAGES p95 (yoga.fetch), ${side === 'alone' ? 'conversations alone' : `inside ${scale}`}${label}`,
          value: percentile(times, 95),
          unit: 'ms',
          better: 'lower',
          note: `p50 ${percentile(times, 50).toFixed(1)} ms over ${times.length} searches`,
        })
      }
    }
    rows.push({
      name: `seed ${scale} per conversation (direct SQL, with vectors)`,
      value: seeded.seconds,
      unit: 's',
      note: `${conversations.length} scaled agents; conversations ingested through addMessage in ${ingestSeconds.toFixed(1)} s`,
    })
    return rows
  } finally {
    for (const other of others) await other.close()
    await t.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

// Run on its own: `tsx apps/api/bench/quality-scale.ts --dataset PATH [--quick] [--turns N]`.
if (import.meta.url === `file://${process.argv[1]}`) {
  const option = (name: string) => {
    const index = process.argv.indexOf(name)
    return index >= 0 ? process.argv[index + 1] : undefined
  }
  const dataset = path.resolve(
    process.env.INIT_CWD ?? process.cwd(),
    option('--dataset') ?? '../shared/datasets/locomo-dev.json',
  )
  if (!fs.existsSync(dataset)) {
    console.error('usage: tsx apps/api/bench/quality-scale.ts --dataset PATH [--quick] [--turns N]')
    process.exit(2)
  }
  const turns = option('--turns') ? Number(option('--turns')) : undefined
  const rows = await qualityScaleBenchmarks({ dataset, quick: process.argv.includes('--quick'), turns })
  for (const row of rows) {
    const base = row.baseline ? rows.find((r) => r.name === row.baseline) : null
    if (base) row.ratio = row.value / base.value
  }
  writeReport('quality-scale', 'Recall at scale: LoCoMo planted in a synthetic history', rows, {
    dataset,
    turns,
  })
}

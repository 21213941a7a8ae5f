// Retrieval quality on a LoCoMo-format dataset: `pnpm bench:quality -- --dataset PATH [options]`.
// Ingests each conversation once per ingest mode through the public API, then asks every question
// through `search` under each configuration (a configuration is only a different search input on
// the same agents). Reports recall per category for each conversation separately, before issue 11
// and with the defaults, beside a plain BM25 baseline; cross-validates every retrieval change
// (tuned on one conversation, measured on the other, both ways); and times the search calls of
// both sides in the same run against the p95 budget.
import fs from 'node:fs'
import path from 'node:path'
import { createHashingEmbedder } from '@engram/core'
import { loadWordNetLexicon, type WordNetPart } from '@engram/providers'
import { type LocomoConversation, type LocomoTurn, loadLocomo } from '../../../packages/core/bench/locomo.ts'
import { type BenchRow, writeReport } from '../../../packages/core/bench/report.ts'
import { candidateRowsOf, dialogueReadsOf } from '../src/env.ts'
import { createAgentKey, createTestApp, type TestApp } from '../test/helpers.ts'
import { type Backend, backendComparison, parseBackends } from './quality-backends.ts'
import { bm25Baseline } from './quality-bm25.ts'
import {
  beforeIssue11,
  type Configuration,
  configurationKey,
  DEFAULTS,
  type Ingest,
  type KnobValue,
  missingKnob,
  type RetrievalChange,
  type SearchSchema,
  selectChanges,
  withKnob,
} from './quality-changes.ts'
import {
  crossValidate,
  meanRecall,
  outcomeOf,
  type QuestionOutcome,
  summariseLatency,
  verdictOf,
} from './quality-crossval.ts'
import { type ChangeResult, type QualityRun, qualityRows, qualityTable } from './quality-report.ts'

/**
 * Whether the `structured` ingest sends the speaker as AddMessageInput.speaker (true) or only as
 * metadata.speaker (false: builds without that field). Flip to true once `speaker` is merged.
 */
const SPEAKER_AS_FIELD = true

/** Enough hits for R@25. */
const SEARCH_LIMIT = 25

export interface QualityOptions {
  /** A LoCoMo-format JSON file. */
  dataset: string
  /** CI smoke: the first conversation, before/defaults only, no cross-validation. */
  quick?: boolean
  /** Names from RETRIEVAL_CHANGES to cross-validate (all when not given). */
  changes?: string[]
  /** Times each question set is asked under both sides for the latency figures (default 2, quick 1). */
  latencyRounds?: number
  /** 'none' turns the WordNet lexicon off; senses, parts and synonymWeight vary it. */
  lexicon?: 'wordnet' | 'none'
  senses?: string
  parts?: WordNetPart[]
  synonymWeight?: number
}

function datasetPath(): string {
  const index = process.argv.indexOf('--dataset')
  const given = index >= 0 ? process.argv[index + 1] : undefined
  // pnpm runs the script in apps/api; a relative path means relative to where it was typed.
  const value = given ? path.resolve(process.env.INIT_CWD ?? process.cwd(), given) : undefined
  if (!value || !fs.existsSync(value)) {
    console.error('usage: pnpm bench:quality -- --dataset PATH   (e.g. ../shared/datasets/locomo-dev.json)')
    process.exit(2)
  }
  return value
}

/** --quick, --changes time,speaker, --lexicon none, --senses N|all, --synonym-weight W, --parts noun,verb,adj,adv. */
function cliOptions(): QualityOptions {
  const option = (name: string) => {
    const index = process.argv.indexOf(name)
    return index >= 0 ? process.argv[index + 1] : undefined
  }
  const changes = option('--changes')?.split(',')
  try {
    selectChanges(changes)
  } catch (error) {
    console.error(String((error as Error).message))
    process.exit(2)
  }
  return {
    dataset: datasetPath(),
    quick: process.argv.includes('--quick'),
    changes,
    lexicon: option('--lexicon') === 'none' ? 'none' : 'wordnet',
    senses: option('--senses'),
    parts: option('--parts')?.split(',') as WordNetPart[] | undefined,
    synonymWeight: option('--synonym-weight') ? Number(option('--synonym-weight')) : undefined,
  }
}

const fieldsOf = (type: { inputFields?: { name: string }[] } | null) =>
  new Set((type?.inputFields ?? []).map((f) => f.name))

/** Which knobs this build's schema has: a change whose knob is missing is reported, not run. */
async function introspect(t: TestApp): Promise<SearchSchema & { addMessage: ReadonlySet<string> }> {
  const result = await t.gql(
    `{ search: __type(name: "SearchInput") { inputFields { name } }
       weights: __type(name: "SearchWeightsInput") { inputFields { name } }
       addMessage: __type(name: "AddMessageInput") { inputFields { name } } }`,
  )
  if (!result.data?.search) throw new Error(`introspection failed: ${JSON.stringify(result.errors)}`)
  return {
    search: fieldsOf(result.data.search),
    weights: fieldsOf(result.data.weights),
    addMessage: fieldsOf(result.data.addMessage),
  }
}

function addMessageInput(conversationId: string, turn: LocomoTurn, ingest: Ingest) {
  const common = { conversationId, role: 'USER', timestamp: turn.timestamp.toISOString() }
  if (ingest === 'said')
    return { ...common, content: turn.content, metadata: { dia_id: turn.diaId, speaker: turn.speaker } }
  return {
    ...common,
    content: turn.caption ? `${turn.text} [shared ${turn.caption}]` : turn.text,
    ...(SPEAKER_AS_FIELD
      ? { speaker: turn.speaker, metadata: { dia_id: turn.diaId } }
      : { metadata: { dia_id: turn.diaId, speaker: turn.speaker } }),
  }
}

const SEARCH = `query($input: SearchInput!) { search(input: $input) { __typename ... on SearchResult { hits { message { metadata } } } ... on Error { message } } }`

/** Recall@k per conversation and category, cross-validated changes and search latency, through the real API. */
export async function qualityBenchmarks(options: QualityOptions): Promise<BenchRow[]> {
  const run = await runQualitySuite(options)
  console.info(qualityTable(run))
  return qualityRows(run)
}

export async function runQualitySuite(options: QualityOptions): Promise<QualityRun> {
  const started = performance.now()
  const quick = options.quick ?? false
  const selected = quick ? [] : selectChanges(options.changes)
  const lexiconStarted = performance.now()
  const lexicon =
    options.lexicon === 'none'
      ? undefined
      : loadWordNetLexicon({
          ...(options.senses
            ? {
                maxSensesPerWord:
                  options.senses === 'all' ? Number.POSITIVE_INFINITY : Number(options.senses),
              }
            : {}),
          ...(options.parts ? { parts: options.parts } : {}),
        })
  lexicon?.groupsOf('car') // the files are read on first use: time that here, not in the first search
  const lexiconLoadMs = performance.now() - lexiconStarted
  const embedder = createHashingEmbedder({
    lexicon,
    ...(options.synonymWeight ? { synonymWeight: options.synonymWeight } : {}),
  })

  const all = loadLocomo(options.dataset)
  const conversations = quick ? all.slice(0, 1) : all
  // ENGRAM_LEXICAL_INDEX=off ranks with the store-read lexical path of before issue 18: same recall expected.
  const lexicalIndex = process.env.ENGRAM_LEXICAL_INDEX === 'off' ? 'off' : 'on'
  const t = await createTestApp({
    embedder,
    env: {
      ENGRAM_INTROSPECTION: true,
      ENGRAM_LEXICAL_INDEX: lexicalIndex,
      // ENGRAM_SEARCH_DIALOGUE_READS=all reads dialogue context as before hybrid18: same recall expected.
      ENGRAM_SEARCH_DIALOGUE_READS: dialogueReadsOf(process.env.ENGRAM_SEARCH_DIALOGUE_READS),
      // ENGRAM_SEARCH_CANDIDATE_ROWS=all reads every candidate's row before scoring: same recall expected.
      ENGRAM_SEARCH_CANDIDATE_ROWS: candidateRowsOf(process.env.ENGRAM_SEARCH_CANDIDATE_ROWS),
    },
  })
  try {
    const schema = await introspect(t)
    if (SPEAKER_AS_FIELD && !schema.addMessage.has('speaker'))
      throw new Error('SPEAKER_AS_FIELD is on but AddMessageInput has no speaker field in this build')
    const notes: string[] = []
    if (!SPEAKER_AS_FIELD && schema.addMessage.has('speaker'))
      notes.push('AddMessageInput has `speaker` now: flip SPEAKER_AS_FIELD in apps/api/bench/quality.ts')

    // One agent per (conversation, ingest mode), ingested on first use.
    const ingestSeconds: Partial<Record<Ingest, number>> = {}
    const agents = new Map<string, Promise<string>>()
    const agentKey = (conversation: LocomoConversation, ingest: Ingest) => {
      const id = `${conversation.id}-${ingest}`
      let key = agents.get(id)
      if (!key) {
        key = ingestConversation(t, conversation, ingest, id).then(({ key, seconds }) => {
          ingestSeconds[ingest] = (ingestSeconds[ingest] ?? 0) + seconds
          return key
        })
        agents.set(id, key)
      }
      return key
    }

    let searches = 0
    async function ask(conversation: LocomoConversation, configuration: Configuration, question: string) {
      const key = await agentKey(conversation, configuration.ingest)
      const input = { ...configuration.input, query: question, scopes: ['MESSAGES'], limit: SEARCH_LIMIT }
      const askedAt = performance.now()
      const result = await t.gql(SEARCH, { input }, key)
      const ms = performance.now() - askedAt
      searches++
      if (result.data?.search?.__typename !== 'SearchResult')
        throw new Error(
          `search ${JSON.stringify(input)} failed: ${JSON.stringify(result.errors ?? result.data)}`,
        )
      const hits = result.data.search.hits as { message: { metadata: { dia_id?: string } } }[]
      return { retrieved: hits.map((h) => String(h.message.metadata.dia_id)), ms }
    }

    // Every configuration's outcomes per conversation, asked once whatever asks for it again.
    const cache = new Map<string, Map<string, QuestionOutcome[]>>()
    async function evaluate(configuration: Configuration) {
      const cacheKey = configurationKey(configuration)
      let outcomes = cache.get(cacheKey)
      if (!outcomes) {
        outcomes = new Map()
        for (const conversation of conversations) {
          const asked: QuestionOutcome[] = []
          for (const q of conversation.questions) {
            const { retrieved } = await ask(conversation, configuration, q.question)
            asked.push(outcomeOf(q.category, retrieved, q.evidence))
          }
          outcomes.set(conversation.id, asked)
        }
        cache.set(cacheKey, outcomes)
      }
      return outcomes
    }

    const before = beforeIssue11(schema)
    const defaults = DEFAULTS
    // Ingest both sides' agents before timing anything.
    for (const conversation of conversations) {
      await agentKey(conversation, before.ingest)
      await agentKey(conversation, defaults.ingest)
    }

    // Latency: each question under both sides alternately (which goes first alternates too), so
    // both see the same warm-up, caches and machine load; the first round also gives their recall.
    const rounds = options.latencyRounds ?? (quick ? 1 : 2)
    const latencyMs = { before: [] as number[], defaults: [] as number[] }
    const firstRound = {
      before: new Map<string, QuestionOutcome[]>(),
      defaults: new Map<string, QuestionOutcome[]>(),
    }
    for (let round = 0; round < rounds; round++) {
      for (const conversation of conversations) {
        for (const [index, q] of conversation.questions.entries()) {
          const sides =
            index % 2 === 0 ? (['before', 'defaults'] as const) : (['defaults', 'before'] as const)
          for (const side of sides) {
            const { retrieved, ms } = await ask(
              conversation,
              side === 'before' ? before : defaults,
              q.question,
            )
            latencyMs[side].push(ms)
            if (round > 0) continue
            const list = firstRound[side].get(conversation.id) ?? []
            list.push(outcomeOf(q.category, retrieved, q.evidence))
            firstRound[side].set(conversation.id, list)
          }
        }
      }
    }
    cache.set(configurationKey(before), firstRound.before)
    cache.set(configurationKey(defaults), firstRound.defaults)

    const bm25 = new Map<string, QuestionOutcome[]>()
    for (const conversation of conversations) {
      const search = bm25Baseline(conversation.turns.map((turn) => ({ id: turn.diaId, text: turn.said })))
      bm25.set(
        conversation.id,
        conversation.questions.map((q) =>
          outcomeOf(q.category, search(q.question, SEARCH_LIMIT), q.evidence),
        ),
      )
    }

    const changes: ChangeResult[] = []
    for (const change of selected)
      changes.push(await crossValidateChange(change, schema, conversations, evaluate))

    return {
      quick,
      conversations: conversations.map((c) => ({
        id: c.id,
        turns: c.turns.length,
        questions: c.questions.length,
      })),
      ranking: { bm25, before: firstRound.before, defaults: firstRound.defaults },
      configurations: { before, defaults },
      changes,
      latency: summariseLatency(latencyMs.before, latencyMs.defaults),
      speakerAsField: SPEAKER_AS_FIELD,
      ingestSeconds,
      configurationsAsked: cache.size,
      searches,
      notes,
      lexicon: lexicon ? { id: lexicon.id, loadMs: lexiconLoadMs } : null,
      seconds: (performance.now() - started) / 1_000,
    }
  } finally {
    await t.close()
  }
}

async function crossValidateChange(
  change: RetrievalChange,
  schema: SearchSchema,
  conversations: LocomoConversation[],
  evaluate: (configuration: Configuration) => Promise<Map<string, QuestionOutcome[]>>,
): Promise<ChangeResult> {
  const unavailable = missingKnob(change, schema)
  if (unavailable) return { change, unavailable, results: [], verdict: null }
  const r10 = new Map<KnobValue, Map<string, number>>()
  for (const value of [change.off, ...change.values]) {
    const outcomes = await evaluate(withKnob(DEFAULTS, change, value))
    r10.set(value, new Map(conversations.map((c) => [c.id, meanRecall(outcomes.get(c.id) ?? [], 10)])))
  }
  const results = crossValidate(
    change,
    conversations.map((c) => c.id),
    (value, conversation) => r10.get(value)?.get(conversation) ?? Number.NaN,
  )
  return { change, unavailable: null, results, verdict: verdictOf(results.map((r) => r.heldOutDelta)) }
}

async function ingestConversation(
  t: TestApp,
  conversation: LocomoConversation,
  ingest: Ingest,
  agentId: string,
) {
  const started = performance.now()
  const key = await createAgentKey(t, agentId)
  for (const turn of conversation.turns) {
    const result = await t.gql(
      `mutation($input: AddMessageInput!) { addMessage(input: $input) { __typename } }`,
      { input: addMessageInput(conversation.id, turn, ingest) },
      key,
    )
    if (result.data?.addMessage?.__typename !== 'Message')
      throw new Error(`ingest (${ingest}) failed: ${JSON.stringify(result)}`)
  }
  // A search first runs the agent's queued embed jobs: do that here, not in the first timed search.
  await t.gql(SEARCH, { input: { query: 'warm-up', scopes: ['MESSAGES'], limit: 1 } }, key)
  return { key, seconds: (performance.now() - started) / 1_000 }
}

/** The title the standalone run writes beside its rows. */
export function qualityTitle(options: QualityOptions): string {
  const ids = loadLocomo(options.dataset).map((conversation) => conversation.id)
  return `Retrieval quality, cross-validated: ${(options.quick ? ids.slice(0, 1) : ids).join(', ')}`
}

// `pnpm bench:quality -- --dataset PATH [options]` (the harness imports qualityBenchmarks).
// `--backend sqlite,postgres [--postgres-url URL]` compares storage backends instead (the defaults
// on each, same run: quality-backends.ts).
if (import.meta.url === `file://${process.argv[1]}` && process.argv.includes('--backend')) {
  const option = (name: string) => {
    const index = process.argv.indexOf(name)
    return index >= 0 ? process.argv[index + 1] : undefined
  }
  let backends: Backend[]
  try {
    backends = parseBackends(option('--backend') ?? '')
  } catch (error) {
    console.error((error as Error).message)
    process.exit(2)
  }
  const dataset = datasetPath()
  const postgresUrl = option('--postgres-url')
  const { rows, table } = await backendComparison({
    dataset,
    backends,
    ...(postgresUrl ? { postgresUrl } : {}),
  })
  console.info(table)
  writeReport('quality-backends', `Retrieval quality by storage backend: ${backends.join(', ')}`, rows, {
    dataset,
    backends,
  })
} else if (import.meta.url === `file://${process.argv[1]}`) {
  const options = cliOptions()
  const rows = await qualityBenchmarks(options)
  writeReport('quality', qualityTitle(options), rows, {
    dataset: options.dataset,
    changes: options.changes ?? 'all',
    lexicon: options.lexicon ?? 'wordnet',
  })
}

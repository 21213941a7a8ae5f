// Memory formation on a LoCoMo-format development set (issue 13 §6), the `formation` suite of
// `pnpm bench` (`pnpm bench -- --only formation [--quick] [--llm-url URL --llm-model M]`):
//
// 1. the offline extractor against the dataset's `observation` field, cross-validated (settings
//    chosen on one conversation, reported on the other): the raw extractor, and the same settings
//    through the engine's pipeline (addMessages through the API, syncMemory, then the stored
//    memories with their metadata.sourceMessageIds: what users get after verification and dedup);
//    with --llm-url, the same pipeline asking that model;
// 2. question recall when search runs over those memories only (scope MEMORIES, evidence turns
//    reached through the memories' source messages) next to search over the raw messages (scope
//    MESSAGES), on the same questions, all of them and those whose evidence the memories cover;
// 3. the extractive summary of each session against the dataset's `session_summary`;
// 4. the memory router's accuracy on the 226 hand-labelled turns;
// 5. addMessage throughput and p95 with extraction on vs off, in the same run, alternating.
// Definitions: docs/memory-formation.md ("The bench").
import fs from 'node:fs'
import path from 'node:path'
import type { LlmProvider } from '@engram/core'
import {
  classifyTurn,
  createTokenCounter,
  DEFAULT_OFFLINE_EXTRACTOR_SETTINGS,
  DEFAULT_SUMMARY_SETTINGS,
  extractiveSummary,
  type OfflineExtractorSettings,
} from '@engram/core'
import { createOpenAiCompatibleLlm } from '@engram/providers'
import { asFormed, extractConversation } from '../../../packages/core/bench/formation.ts'
import {
  chooseSettings,
  evidenceCovered,
  extractorGrid,
  type FormationConversation,
  type FormedMemory,
  loadFormationConversations,
  type ObservationScore,
  recallThroughMemories,
  scoreObservations,
  sessionOf,
  settingsNote,
  speakerNames,
  summaryCoverage,
} from '../../../packages/core/bench/formation-score.ts'
import type { LocomoTurn } from '../../../packages/core/bench/locomo.ts'
import { type BenchRow, percentile, writeReport } from '../../../packages/core/bench/report.ts'
import labelledTurns from '../../../packages/core/src/formation/fixtures/labelled-turns.json' with {
  type: 'json',
}
import { createAgentKey, createTestApp, type GqlResult, ManualClock, type TestApp } from '../test/helpers.ts'
import { recallAt } from './quality-crossval.ts'

const RECALL_TARGET = 60
const PRECISION_TARGET = 70
/** Recall is reported at these k (hits: memories for MEMORIES, messages for MESSAGES). */
const KS = [10, 25] as const
const SEARCH_LIMIT = 25
/** --quick: questions asked per conversation, and messages timed per side. */
const QUICK_QUESTIONS = 40
const QUICK_WRITES = 150
/** Messages per addMessages call when a conversation is loaded (the limit is 500). */
const INGEST_BATCH = 100

export interface FormationBenchOptions {
  /** A LoCoMo-format JSON file with `observation` and `session_summary`. */
  dataset: string
  /**
   * Smaller: an 8-setting tuning grid, the engine's pipeline in one direction with 40 questions,
   * 150 timed messages a side.
   */
  quick?: boolean
  /** An OpenAI-compatible endpoint to run the same pipeline with (besides the offline extractor). */
  llm?: { url: string; model: string; apiKey?: string } | null
  /** The writes' extraction threads (ENGRAM_EXTRACTION_WORKERS; 0: in process). The server's 1 by default. */
  extractionWorkers?: number
  /** Only the writes with the job worker running (the figure extraction threads change). */
  writesOnly?: boolean
  /**
   * Only the memories (raw extractor, engine pipeline and question recall), in both directions and
   * with every question even with `quick` (which then only keeps the small tuning grid): the
   * figures an extractor, verification or search change moves, without the writes.
   */
  memoriesOnly?: boolean
  /** Print each supersession the engine's pipeline made (older → newer), to read what it replaces. */
  showSuperseded?: boolean
}

const pct = (value: number) => Math.round(value * 1_000) / 10

export async function formationBenchmarks(options: FormationBenchOptions): Promise<BenchRow[]> {
  const quick = options.quick ?? false
  const conversations = loadFormationConversations(options.dataset)
  if (conversations.length < 2) throw new Error('cross-validation needs two conversations')
  const rows: BenchRow[] = []
  const workers = options.extractionWorkers ?? 1
  if (options.writesOnly) return writeThroughput(conversations, quick, true, workers)
  const llm = options.llm
    ? createOpenAiCompatibleLlm({
        baseUrl: options.llm.url,
        model: options.llm.model,
        ...(options.llm.apiKey ? { apiKey: options.llm.apiKey } : {}),
      })
    : null

  for (const [tuneIndex, reportIndex] of [
    [0, 1],
    [1, 0],
  ] as const) {
    const tune = conversations[tuneIndex] as FormationConversation
    const report = conversations[reportIndex] as FormationConversation
    const direction = `tuned on ${tune.id}, reported on ${report.id}`
    const lap = performance.now()
    const chosen = chooseSettings(
      extractorGrid(quick ? 'small' : 'full').map((settings) => ({
        settings,
        score: scoreObservations(tune, asFormed(extractConversation(tune, settings))),
      })),
    )
    const started = performance.now()
    const raw = scoreObservations(report, asFormed(extractConversation(report, chosen.settings)))
    const rawTurnsPerSecond = report.turns.length / ((performance.now() - started) / 1_000)
    rows.push(...observationRows(`raw extractor, ${direction}`, raw, settingsNote(chosen.settings)), {
      name: `raw extractor turns/s on ${report.id}`,
      value: rawTurnsPerSecond,
      unit: 'turns/s',
      better: 'higher',
    })
    console.info(`[formation] ${direction}: tuning + raw: ${Math.round(performance.now() - lap)} ms`)
    // --quick: the engine's pipeline (most of the suite's time) in the first direction only.
    if (quick && !options.memoriesOnly && tuneIndex === 1) continue
    const engineLap = performance.now()
    const engine = await throughEngine(report, {
      settings: chosen.settings,
      // --memories-only asks every question (quick keeps its small tuning grid).
      quick: quick && !options.memoriesOnly,
      showSuperseded: options.showSuperseded ?? false,
    })
    console.info(
      `[formation] ${direction}: engine + questions: ${Math.round(performance.now() - engineLap)} ms`,
    )
    rows.push(...engineRows(`engine, offline, ${direction}`, report, engine, settingsNote(chosen.settings)))
    if (llm) {
      const withModel = await throughEngine(report, {
        settings: DEFAULT_OFFLINE_EXTRACTOR_SETTINGS,
        quick,
        llm,
      })
      rows.push(
        ...engineRows(`engine, LLM ${llm.model}, on ${report.id}`, report, withModel, options.llm?.url ?? ''),
      )
    }
  }

  if (options.memoriesOnly) return rows
  const lap = performance.now()
  rows.push(...summaryRows(conversations))
  rows.push(...routerRows())
  console.info(`[formation] summaries and router: ${Math.round(performance.now() - lap)} ms`)
  const writes = performance.now()
  // The server as it runs (background jobs share the thread with requests), then the request
  // path alone (jobs queued, none run while timing).
  rows.push(...(await writeThroughput(conversations, quick, true, workers)))
  rows.push(...(await writeThroughput(conversations, quick, false, workers)))
  console.info(`[formation] writes on/off: ${Math.round(performance.now() - writes)} ms`)
  return rows
}

function observationRows(label: string, score: ObservationScore, note: string): BenchRow[] {
  const counts = `${score.memories} memories, ${score.observations} observations; ${note}`
  return [
    {
      name: `${label}: observations covered (recall)`,
      value: pct(score.recall),
      unit: '%',
      note: counts,
      better: 'higher',
      target: { op: '>=', value: RECALL_TARGET },
    },
    {
      name: `${label}: memories matching an observation (precision)`,
      value: pct(score.precision),
      unit: '%',
      note: counts,
      better: 'higher',
      target: { op: '>=', value: PRECISION_TARGET },
    },
    {
      name: `${label}: precision on annotated turns`,
      value: pct(score.precisionOnAnnotatedTurns),
      unit: '%',
      note: 'memories from turns without any observation left out',
      better: 'higher',
    },
  ]
}

interface EngineRun {
  score: ObservationScore
  turnsPerSecond: number
  stored: number
  duplicates: number
  superseded: number
  rejected: number
  questions: QuestionRecall
}

interface QuestionRecall {
  asked: number
  covered: number
  /** Mean recall per k (KS order), in %: all questions, then those the memories cover. */
  memories: { all: number[]; covered: number[] }
  messages: { all: number[]; covered: number[] }
}

/**
 * The conversation through the engine as a user runs it: its turns added through the API (one
 * agent, one conversation), syncMemory, then the memories as stored, and both searches.
 */
async function throughEngine(
  conversation: FormationConversation,
  options: {
    settings: OfflineExtractorSettings
    quick: boolean
    llm?: LlmProvider
    showSuperseded?: boolean
  },
): Promise<EngineRun> {
  // The clock just after the conversation: validity read from the text ("until Friday") is judged
  // as it was then, not years later.
  const lastTurn = conversation.turns.at(-1)?.timestamp ?? new Date(0)
  const t = await createTestApp({
    clock: new ManualClock(new Date(lastTurn.getTime() + 60_000)),
    llm: options.llm ?? null,
    // Extraction on request only (syncMemory): the figure is the pipeline's, not the debounce's.
    env: { ENGRAM_EXTRACTION: 'off' },
    formation: { offlineExtractor: options.settings },
  })
  try {
    const agentId = `formation-${conversation.id}`
    const key = await createAgentKey(t, agentId)
    const turnOf = await ingest(t, key, conversation)
    const started = performance.now()
    const formed = await t.app.services.formation.syncMemory(agentId)
    const turnsPerSecond = formed.turns / ((performance.now() - started) / 1_000)
    const memories = await storedMemories(t, key, turnOf)
    if (options.showSuperseded) await printSuperseded(t, agentId)
    const questions = await questionRecall(t, key, conversation, memories, turnOf, options.quick)
    return {
      score: scoreObservations(conversation, memories),
      turnsPerSecond,
      stored: formed.stored.length,
      duplicates: formed.duplicates,
      superseded: formed.superseded,
      rejected: formed.rejected,
      questions,
    }
  } finally {
    await t.close()
  }
}

/** Adds the turns in order; returns message id → dataset turn id. */
async function ingest(t: TestApp, key: string, conversation: FormationConversation) {
  const turnOf = new Map<string, string>()
  const ADD = `mutation($input: AddMessagesInput!) { addMessages(input: $input) { __typename
    ... on AddMessagesPayload { messages { id } } ... on Error { message } } }`
  for (let from = 0; from < conversation.turns.length; from += INGEST_BATCH) {
    const batch = conversation.turns.slice(from, from + INGEST_BATCH)
    const result = await t.gql(
      ADD,
      {
        input: {
          conversationId: conversation.id,
          messages: batch.map((turn) => ({
            role: 'USER',
            speaker: turn.speaker,
            // The turn's words only, as the raw extractor reads them (captions are not statements).
            content: turn.text,
            timestamp: turn.timestamp.toISOString(),
            metadata: { dia_id: turn.diaId },
          })),
        },
      },
      key,
    )
    const messages = result.data?.addMessages?.messages as { id: string }[] | undefined
    if (!messages) throw new Error(`addMessages failed: ${JSON.stringify(result.errors ?? result.data)}`)
    for (const [index, message] of messages.entries())
      turnOf.set(String(message.id), (batch[index] as LocomoTurn).diaId)
  }
  return turnOf
}

const sourcesOf = (metadata: unknown, turnOf: ReadonlyMap<string, string>): string[] => {
  const ids = (metadata as { sourceMessageIds?: unknown })?.sourceMessageIds
  return Array.isArray(ids) ? ids.flatMap((id) => turnOf.get(String(id)) ?? []) : []
}

interface MemoriesPage {
  __typename: 'QueryMemoriesConnection'
  edges: { node: { content: string; metadata: unknown } }[]
  pageInfo: { hasNextPage: boolean; endCursor: string | null }
}

/** Each superseded memory of the agent beside the one that replaced it. */
async function printSuperseded(t: TestApp, agentId: string): Promise<void> {
  const listed = await t.app.services.memoryItems.list(agentId, { includeSuperseded: true }, 'createdAt')
  const all = await listed.page(0, listed.totalCount)
  const byId = new Map(all.map((item) => [item.id, item]))
  for (const item of all) {
    const by = item.supersededById ? byId.get(item.supersededById) : undefined
    if (by) console.info(`[superseded] ${item.content}\n         by ${by.content}`)
  }
}

/** Every current memory of the agent, through the API, with its source turns. */
async function storedMemories(t: TestApp, key: string, turnOf: ReadonlyMap<string, string>) {
  const LIST = `query($after: String) { memories(first: 200, after: $after) { __typename
    ... on QueryMemoriesConnection { edges { node { content metadata } } pageInfo { hasNextPage endCursor } }
    ... on Error { message } } }`
  const memories: FormedMemory[] = []
  let after: string | null = null
  for (;;) {
    const result: GqlResult<{ memories?: MemoriesPage | { __typename: string } }> = await t.gql(
      LIST,
      { after },
      key,
    )
    const page: MemoriesPage | { __typename: string } | undefined = result.data?.memories
    if (page?.__typename !== 'QueryMemoriesConnection')
      throw new Error(`memories failed: ${JSON.stringify(result.errors ?? result.data)}`)
    for (const { node } of (page as MemoriesPage).edges)
      memories.push({ content: node.content, sourceTurnIds: sourcesOf(node.metadata, turnOf) })
    if (!(page as MemoriesPage).pageInfo.hasNextPage) break
    after = (page as MemoriesPage).pageInfo.endCursor
  }
  return memories
}

async function questionRecall(
  t: TestApp,
  key: string,
  conversation: FormationConversation,
  memories: readonly FormedMemory[],
  turnOf: ReadonlyMap<string, string>,
  quick: boolean,
): Promise<QuestionRecall> {
  const SEARCH = `query($input: SearchInput!) { search(input: $input) { __typename
    ... on SearchResult { hits { message { metadata } memory { metadata } } } ... on Error { message } } }`
  const search = async (query: string, scope: 'MEMORIES' | 'MESSAGES') => {
    const result = await t.gql(SEARCH, { input: { query, scopes: [scope], limit: SEARCH_LIMIT } }, key)
    if (result.data?.search?.__typename !== 'SearchResult')
      throw new Error(`search failed: ${JSON.stringify(result.errors ?? result.data)}`)
    return result.data.search.hits as {
      message: { metadata: { dia_id?: string } } | null
      memory: { metadata: unknown } | null
    }[]
  }
  const sources = new Set(memories.flatMap((memory) => memory.sourceTurnIds))
  const questions = quick ? conversation.questions.slice(0, QUICK_QUESTIONS) : conversation.questions
  const per = { memories: [] as number[][], messages: [] as number[][], covered: [] as boolean[] }
  for (const question of questions) {
    const viaMemories = (await search(question.question, 'MEMORIES')).map((hit) => ({
      content: '',
      sourceTurnIds: sourcesOf(hit.memory?.metadata, turnOf),
    }))
    const viaMessages = (await search(question.question, 'MESSAGES')).map((hit) =>
      String(hit.message?.metadata.dia_id),
    )
    per.memories.push(KS.map((k) => recallThroughMemories(viaMemories, question.evidence, k)))
    per.messages.push(KS.map((k) => recallAt(viaMessages, question.evidence, k)))
    per.covered.push(evidenceCovered(question.evidence, sources))
  }
  const mean = (lists: number[][], only?: boolean[]) =>
    KS.map((_, i) => {
      const picked = lists.filter((_, q) => !only || only[q])
      return picked.length === 0
        ? Number.NaN
        : (picked.reduce((sum, list) => sum + (list[i] as number), 0) / picked.length) * 100
    })
  return {
    asked: questions.length,
    covered: per.covered.filter(Boolean).length,
    memories: { all: mean(per.memories), covered: mean(per.memories, per.covered) },
    messages: { all: mean(per.messages), covered: mean(per.messages, per.covered) },
  }
}

function engineRows(
  label: string,
  conversation: FormationConversation,
  run: EngineRun,
  note: string,
): BenchRow[] {
  const q = run.questions
  const rows: BenchRow[] = [
    ...observationRows(label, run.score, note),
    {
      name: `${label}: turns/s (syncMemory: extract, verify, embed, store)`,
      value: run.turnsPerSecond,
      unit: 'turns/s',
      better: 'higher',
      note: `${conversation.turns.length} turns; ${run.stored} stored (${run.superseded} of them superseding an earlier one), ${run.duplicates} duplicates, ${run.rejected} refused; ${run.score.memories} current at the end`,
    },
  ]
  for (const [i, k] of KS.entries()) {
    const messagesAll = `${label}: question R@${k}, search over MESSAGES`
    const messagesCovered = `${label}: question R@${k} where memories cover the evidence, MESSAGES`
    rows.push(
      { name: messagesAll, value: q.messages.all[i] as number, unit: '%', note: `${q.asked} questions` },
      {
        name: `${label}: question R@${k}, search over MEMORIES`,
        value: q.memories.all[i] as number,
        unit: '%',
        note: `${q.asked} questions; k memories, evidence reached through their source messages`,
        better: 'higher',
        baseline: messagesAll,
      },
    )
    // No question whose evidence the memories cover: nothing to compare there.
    if (q.covered === 0) continue
    rows.push(
      {
        name: messagesCovered,
        value: q.messages.covered[i] as number,
        unit: '%',
        note: `${q.covered} of ${q.asked} questions: every evidence turn is a memory's source`,
      },
      {
        name: `${label}: question R@${k} where memories cover the evidence, MEMORIES`,
        value: q.memories.covered[i] as number,
        unit: '%',
        note: `${q.covered} of ${q.asked} questions; target: at least MESSAGES' figure`,
        better: 'higher',
        baseline: messagesCovered,
      },
    )
  }
  return rows
}

/**
 * Each session's extractive summary (core's summary.ts: no summary service in the engine yet)
 * against the dataset's `session_summary`, at the default budget and at the reference's own
 * length, beside the session's opening turns cut to that length (the lead baseline).
 */
function summaryRows(conversations: readonly FormationConversation[]): BenchRow[] {
  const tokens = createTokenCounter('o200k_base')
  const countTokens = (text: string) => tokens.count(text)
  const rows: BenchRow[] = []
  for (const conversation of conversations) {
    const names = speakerNames(conversation.speakers)
    const sums = { defaultBudget: [0, 0], referenceLength: [0, 0], lead: [0, 0] }
    let sessions = 0
    let generatedTokens = 0
    for (const [session, reference] of conversation.sessionSummaries) {
      const turns = conversation.turns
        .filter((turn) => sessionOf(turn.diaId) === session)
        .map((turn) => ({ speaker: turn.speaker, content: turn.text }))
      if (turns.length === 0) continue
      sessions++
      const referenceTokens = countTokens(reference)
      const add = (into: number[], generated: string) => {
        const coverage = summaryCoverage(reference, generated, names)
        into[0] = (into[0] as number) + coverage.sentences
        into[1] = (into[1] as number) + coverage.words
      }
      const atDefault = extractiveSummary(turns, {
        maxTokens: DEFAULT_SUMMARY_SETTINGS.summaryMaxTokens,
        countTokens,
      })
      generatedTokens += countTokens(atDefault)
      add(sums.defaultBudget, atDefault)
      add(sums.referenceLength, extractiveSummary(turns, { maxTokens: referenceTokens, countTokens }))
      add(sums.lead, leadOf(turns, referenceTokens, countTokens))
    }
    const label = (what: string) => `summary ${what} on ${conversation.id}`
    const entries = [
      ['defaultBudget', `extractive, ${DEFAULT_SUMMARY_SETTINGS.summaryMaxTokens}-token budget`],
      ['referenceLength', 'extractive, as long as the reference'],
      ['lead', 'lead baseline (opening turns), as long as the reference'],
    ] as const
    for (const [field, what] of entries) {
      const [sentences, words] = sums[field]
      rows.push(
        {
          name: label(`${what}: reference sentences covered`),
          value: pct((sentences as number) / Math.max(1, sessions)),
          unit: '%',
          note: `${sessions} sessions; a sentence is covered when the summary holds half its words`,
          better: 'higher',
        },
        {
          name: label(`${what}: reference words covered`),
          value: pct((words as number) / Math.max(1, sessions)),
          unit: '%',
          note:
            field === 'defaultBudget'
              ? `mean ${Math.round(generatedTokens / Math.max(1, sessions))} tokens`
              : '',
          better: 'higher',
        },
      )
    }
  }
  return rows
}

/** The session's turns from the start, as `speaker: text` lines, until the budget is spent. */
function leadOf(
  turns: readonly { speaker: string; content: string }[],
  maxTokens: number,
  count: (text: string) => number,
) {
  const lines: string[] = []
  let used = 0
  for (const turn of turns) {
    const line = `${turn.speaker}: ${turn.content}`
    const cost = count(line)
    if (used + cost > maxTokens) break
    lines.push(line)
    used += cost
  }
  return lines.join('\n')
}

interface LabelledTurn {
  text: string
  role: 'user' | 'assistant' | 'tool'
  tier: string
  category: string
  memoryType: string
}

/**
 * classifyTurn on the hand-labelled fixture. The fixture labels tier, category and type; it has no
 * importance label, so importance is reported as how it separates the turns labelled worth keeping
 * (episodic, semantic) from those labelled working.
 */
function routerRows(): BenchRow[] {
  const now = new Date('2026-03-01T12:00:00Z')
  const turns = labelledTurns as LabelledTurn[]
  const results = turns.map((turn) => ({
    turn,
    got: classifyTurn({ content: turn.text, role: turn.role, timestamp: now }, { now }),
  }))
  const rows: BenchRow[] = (['tier', 'category', 'memoryType'] as const).map((field) => ({
    name: `router accuracy: ${field}`,
    value: pct(results.filter(({ turn, got }) => got[field] === turn[field]).length / results.length),
    unit: '%',
    note: `${results.length} hand-labelled turns (in-sample: written with the rules)`,
    better: 'higher',
  }))
  const meanImportance = (keep: boolean) => {
    const picked = results.filter(({ turn }) => (turn.tier !== 'working') === keep)
    return picked.reduce((sum, { got }) => sum + got.importance, 0) / Math.max(1, picked.length)
  }
  rows.push(
    {
      name: 'router importance: mean on turns labelled episodic/semantic',
      value: meanImportance(true),
      unit: '0-1',
      note: 'the fixture has no importance labels',
    },
    {
      name: 'router importance: mean on turns labelled working',
      value: meanImportance(false),
      unit: '0-1',
      note: 'should be lower than the kept turns’',
    },
  )
  return rows
}

/** The engine's clock on the wall clock: the debounce and the job worker run in real time here. */
class WallClock extends ManualClock {
  override now(): Date {
    return new Date()
  }
}

/**
 * addMessage one at a time through yoga.fetch, extraction on (debounce 200 ms, so extraction runs
 * during the run and competes for the CPU) and off, on the same turns. Blocks of one session
 * alternate between the sides (which goes first alternates too). With `worker`, each side's job
 * worker runs only during its own blocks, so one side's background work never lands in the
 * other's timings; without, no job runs while timing (the request path's own cost, the job row
 * included) and the backlog is extracted afterwards.
 */
async function writeThroughput(
  conversations: readonly FormationConversation[],
  quick: boolean,
  worker: boolean,
  extractionWorkers: number,
): Promise<BenchRow[]> {
  const blocks = conversations.flatMap((conversation) => {
    const bySession = new Map<number, LocomoTurn[]>()
    for (const turn of conversation.turns) {
      const session = sessionOf(turn.diaId)
      bySession.set(session, [...(bySession.get(session) ?? []), turn])
    }
    return [...bySession.entries()].map(([session, turns]) => ({
      conversationId: `${conversation.id}-s${session}`,
      turns,
    }))
  })
  const limit = quick ? QUICK_WRITES : Number.POSITIVE_INFINITY
  const sides = {
    on: await createTestApp({
      clock: new WallClock(),
      env: {
        ENGRAM_EXTRACTION: 'auto',
        ENGRAM_EXTRACTION_DEBOUNCE_MS: 200,
        ENGRAM_EXTRACTION_WORKERS: extractionWorkers,
      },
    }),
    off: await createTestApp({ clock: new WallClock(), env: { ENGRAM_EXTRACTION: 'off' } }),
  }
  try {
    const keys = {
      on: await createAgentKey(sides.on, 'writer'),
      off: await createAgentKey(sides.off, 'writer'),
    }
    const ADD = `mutation($input: AddMessageInput!) { addMessage(input: $input) { __typename } }`
    const latency = { on: [] as number[], off: [] as number[] }
    const busy = { on: 0, off: 0 }
    let sent = 0
    for (const [index, block] of blocks.entries()) {
      if (sent >= limit) break
      const turns = block.turns.slice(0, limit - sent)
      sent += turns.length
      for (const side of index % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
        const t = sides[side]
        if (worker) t.app.services.jobs.start()
        const started = performance.now()
        for (const turn of turns) {
          const at = performance.now()
          const result = await t.gql(
            ADD,
            {
              input: {
                conversationId: block.conversationId,
                role: 'USER',
                speaker: turn.speaker,
                content: turn.text,
              },
            },
            keys[side],
          )
          latency[side].push(performance.now() - at)
          if (result.data?.addMessage?.__typename !== 'Message')
            throw new Error(`addMessage failed: ${JSON.stringify(result.errors ?? result.data)}`)
        }
        busy[side] += performance.now() - started
        if (worker) await t.app.services.jobs.stop()
      }
    }
    // What the 'on' side still had to extract when the writes ended.
    const drainStarted = performance.now()
    const backlog = await sides.on.app.services.formation.syncMemory('writer')
    const drainMs = performance.now() - drainStarted
    const memories = await sides.on.db.memoryItem.count({ where: { agentId: 'writer' } })
    const rows: BenchRow[] = []
    const threads =
      extractionWorkers > 0 ? `${extractionWorkers} extraction thread(s)` : 'extraction in process'
    const mode = worker ? `job worker running, ${threads}` : 'job worker idle (request path only)'
    for (const side of ['off', 'on'] as const) {
      const label = `${side === 'on' ? 'extraction on (debounce 200 ms)' : 'extraction off'}, ${mode}`
      const offLabel = `extraction off, ${mode}`
      rows.push(
        {
          name: `addMessage throughput, ${label}`,
          value: latency[side].length / (busy[side] / 1_000),
          unit: 'messages/s',
          better: 'higher',
          note: `${latency[side].length} sequential calls in alternating session blocks`,
          ...(side === 'on' ? { baseline: `addMessage throughput, ${offLabel}` } : {}),
        },
        {
          name: `addMessage p95, ${label}`,
          value: percentile(latency[side], 95),
          unit: 'ms',
          better: 'lower',
          ...(side === 'on' ? { baseline: `addMessage p95, ${offLabel}` } : {}),
        },
        {
          name: `addMessage p99, ${label}`,
          value: percentile(latency[side], 99),
          unit: 'ms',
          better: 'lower',
          ...(side === 'on' ? { baseline: `addMessage p99, ${offLabel}` } : {}),
        },
      )
    }
    rows.push({
      name: `extraction backlog when the writes ended, ${mode}`,
      value: backlog.turns,
      unit: 'turns',
      note: `syncMemory then took ${Math.round(drainMs)} ms (${Math.round(backlog.turns / Math.max(drainMs / 1_000, 1e-3))} turns/s); ${memories} memories formed in all`,
    })
    return rows
  } finally {
    await sides.on.close()
    await sides.off.close()
  }
}

// `tsx apps/api/bench/formation.ts --dataset PATH [--quick] [--llm-url URL --llm-model M]
//  [--extraction-workers N] [--writes-only] [--memories-only] [--show-superseded]`
// (the harness imports formationBenchmarks).
if (import.meta.url === `file://${process.argv[1]}`) {
  const option = (name: string) => {
    const index = process.argv.indexOf(name)
    return index >= 0 ? process.argv[index + 1] : undefined
  }
  const given = option('--dataset')
  // pnpm runs the script in apps/api; a relative path means relative to where it was typed.
  const dataset = given ? path.resolve(process.env.INIT_CWD ?? process.cwd(), given) : null
  if (!dataset || !fs.existsSync(dataset)) {
    // As the other suites: no dataset here is not a failure, only nothing to measure.
    console.info(
      `formation bench: no dataset${dataset ? ` at ${dataset}` : ''}; usage: tsx bench/formation.ts --dataset PATH [--quick] [--llm-url URL --llm-model M]`,
    )
    process.exit(0)
  }
  const url = option('--llm-url')
  const model = option('--llm-model')
  const quick = process.argv.includes('--quick')
  const apiKey = process.env.ENGRAM_LLM_API_KEY
  const llm = url && model ? { url, model, ...(apiKey ? { apiKey } : {}) } : null
  const workers = option('--extraction-workers')
  const extractionWorkers = workers === undefined ? 1 : Number(workers)
  const writesOnly = process.argv.includes('--writes-only')
  const memoriesOnly = process.argv.includes('--memories-only')
  const showSuperseded = process.argv.includes('--show-superseded')
  const rows = await formationBenchmarks({
    dataset,
    quick,
    llm,
    extractionWorkers,
    writesOnly,
    memoriesOnly,
    showSuperseded,
  })
  writeReport('formation', 'Memory formation (LoCoMo-format dataset, cross-validated)', rows, {
    dataset: dataset.split('/').at(-1),
    quick,
    extractionWorkers,
    writesOnly,
  })
}

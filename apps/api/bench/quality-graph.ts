// Graph expansion on the LoCoMo development set (issue 15):
// `pnpm --filter @engram/api bench:graph -- --dataset ../shared/datasets/locomo-dev.json [--quick]`.
//
// Each conversation is ingested through the API as the quality suite ingests it (`said`), its
// graph formed offline by the engine's own pipeline (syncMemory: offline extraction into memories,
// graph formation from every memory change, its jobs run to the end), then every question is asked
// through `search` over MESSAGES with graph expansion off (weights.graph 0) and at each value tried,
// in the same run on the same agents. The weight is tuned (best R@10) on one conversation and its
// gain measured on the other, both ways (quality-crossval.ts); recall per category is reported
// with and without. Writes bench/results/quality-graph.{json,md}.
import fs from 'node:fs'
import path from 'node:path'
import { createHashingEmbedder } from '@engram/core'
import { loadWordNetLexicon } from '@engram/providers'
import { type LocomoConversation, loadLocomo } from '../../../packages/core/bench/locomo.ts'
import { type BenchRow, writeReport } from '../../../packages/core/bench/report.ts'
import { createAgentKey, createTestApp, type TestApp } from '../test/helpers.ts'
import type { KnobValue } from './quality-changes.ts'
import {
  BUCKETS,
  crossValidate,
  inBucket,
  KS,
  meanRecall,
  outcomeOf,
  type QuestionOutcome,
  verdictOf,
} from './quality-crossval.ts'

const SEARCH_LIMIT = 25
const INGEST_BATCH = 200
/** The graph weights tried; 0 is off. */
const VALUES: readonly number[] = [0.1, 0.25, 0.5, 1]
const OFF = 0

const SEARCH = `query($input: SearchInput!) { search(input: $input) { __typename
  ... on SearchResult { hits { message { metadata } } } ... on Error { message } } }`

function option(name: string): string | undefined {
  const index = process.argv.indexOf(name)
  return index >= 0 ? process.argv[index + 1] : undefined
}

/** The turns as the quality suite's `said` ingest stores them (its DEFAULT_INGEST). */
async function ingest(t: TestApp, key: string, conversation: LocomoConversation): Promise<void> {
  const ADD = `mutation($input: AddMessagesInput!) { addMessages(input: $input) { __typename ... on Error { message } } }`
  for (let from = 0; from < conversation.turns.length; from += INGEST_BATCH) {
    const batch = conversation.turns.slice(from, from + INGEST_BATCH)
    const result = await t.gql(
      ADD,
      {
        input: {
          conversationId: conversation.id,
          messages: batch.map((turn) => ({
            role: 'USER',
            content: turn.content,
            timestamp: turn.timestamp.toISOString(),
            metadata: { dia_id: turn.diaId, speaker: turn.speaker },
          })),
        },
      },
      key,
    )
    if (result.data?.addMessages?.__typename !== 'AddMessagesPayload')
      throw new Error(`ingest failed: ${JSON.stringify(result.errors ?? result.data)}`)
  }
}

/** What the formed graph holds, through the storage port. */
async function graphSize(t: TestApp, agentId: string) {
  const graph = t.app.services.engine.storage.graph
  const entities = await graph.countEntities(agentId, {})
  const relationships = await graph.countRelationships(agentId, {})
  const edges = await graph.relationships(agentId, {}, 0, 100_000)
  const evidence = await graph.evidenceOf(agentId, { relationshipIds: edges.map((r) => r.id) })
  return {
    entities,
    relationships,
    withMessage: new Set(evidence.filter((e) => e.messageId).map((e) => e.relationshipId)).size,
    relations: [...new Set(edges.map((r) => r.relation))].length,
  }
}

export async function graphQuality(dataset: string, quick: boolean) {
  const started = performance.now()
  const lexicon = loadWordNetLexicon({})
  const embedder = createHashingEmbedder({ lexicon })
  const conversations = loadLocomo(dataset)
  const t = await createTestApp({ embedder, env: { ENGRAM_INTROSPECTION: true } })
  try {
    const keys = new Map<string, string>()
    const sizes = new Map<string, Awaited<ReturnType<typeof graphSize>>>()
    const formSeconds = new Map<string, number>()
    for (const conversation of conversations) {
      const agentId = `graph-${conversation.id}`
      const key = await createAgentKey(t, agentId)
      await ingest(t, key, conversation)
      const formStarted = performance.now()
      await formGraph(t, agentId)
      formSeconds.set(conversation.id, (performance.now() - formStarted) / 1_000)
      sizes.set(conversation.id, await graphSize(t, agentId))
      // The agent's queued embed jobs run before the first timed search, not in it.
      await t.gql(SEARCH, { input: { query: 'warm-up', scopes: ['MESSAGES'], limit: 1 } }, key)
      keys.set(conversation.id, key)
    }

    // Every question under every value, the values alternating per question (same warm-up and load).
    const outcomes = new Map<number, Map<string, QuestionOutcome[]>>()
    const ms = new Map<number, number[]>()
    const values = [OFF, ...VALUES]
    for (const conversation of conversations) {
      const questions = quick ? conversation.questions.slice(0, 40) : conversation.questions
      for (const [index, q] of questions.entries()) {
        const order = index % 2 === 0 ? values : [...values].reverse()
        for (const value of order) {
          const input = {
            query: q.question,
            scopes: ['MESSAGES'],
            limit: SEARCH_LIMIT,
            weights: { graph: value },
          }
          const askedAt = performance.now()
          const result = await t.gql(SEARCH, { input }, keys.get(conversation.id))
          const took = performance.now() - askedAt
          if (result.data?.search?.__typename !== 'SearchResult')
            throw new Error(`search failed: ${JSON.stringify(result.errors ?? result.data)}`)
          const hits = result.data.search.hits as { message: { metadata: { dia_id?: string } } }[]
          const retrieved = hits.map((h) => String(h.message.metadata.dia_id))
          const byConversation = outcomes.get(value) ?? new Map<string, QuestionOutcome[]>()
          const list = byConversation.get(conversation.id) ?? []
          list.push(outcomeOf(q.category, retrieved, q.evidence))
          byConversation.set(conversation.id, list)
          outcomes.set(value, byConversation)
          ms.set(value, [...(ms.get(value) ?? []), took])
        }
      }
    }

    const ids = conversations.map((c) => c.id)
    const r10 = (value: KnobValue, conversation: string) =>
      meanRecall(outcomes.get(value as number)?.get(conversation) ?? [], 10)
    const results = crossValidate({ values: VALUES, off: OFF }, ids, r10)
    const verdict = verdictOf(results.map((r) => r.heldOutDelta))
    return {
      conversations,
      outcomes,
      ms,
      results,
      verdict,
      sizes,
      formSeconds,
      seconds: (performance.now() - started) / 1_000,
    }
  } finally {
    await t.close()
  }
}

/**
 * The graph formed offline from the conversation: the engine's memory formation (the offline
 * extractor, no model) and graph formation from every memory it writes, run to the end.
 */
async function formGraph(t: TestApp, agentId: string): Promise<void> {
  await t.app.services.formation.syncMemory(agentId)
  // Each memory written queued its graph job (and embed jobs): run them all, to the end.
  while ((await t.app.services.jobs.drain()) > 0);
}

const f1 = (n: number) => (Number.isNaN(n) ? '–' : n.toFixed(1))
const signed = (n: number) => `${n > 0 ? '+' : n < 0 ? '−' : '±'}${Math.abs(n).toFixed(1)}`
const p = (list: readonly number[], q: number) => {
  const sorted = [...list].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((q / 100) * sorted.length) - 1)] ?? Number.NaN
}

function report(run: Awaited<ReturnType<typeof graphQuality>>): { rows: BenchRow[]; table: string } {
  const rows: BenchRow[] = []
  const lines: string[] = []
  const scopes = [
    ...run.conversations.map((c) => ({
      name: c.id,
      pick: (m: Map<string, QuestionOutcome[]>) => m.get(c.id) ?? [],
    })),
    { name: 'all', pick: (m: Map<string, QuestionOutcome[]>) => [...m.values()].flat() },
  ]
  lines.push('## Graph formed offline')
  for (const c of run.conversations) {
    const s = run.sizes.get(c.id)
    lines.push(
      `- ${c.id}: ${s?.entities} entities, ${s?.relationships} relationships (${s?.relations} relation types, ${s?.withMessage} with a source turn), formed in ${f1(run.formSeconds.get(c.id) ?? 0)} s`,
    )
  }
  lines.push('', '## Cross-validated (R@10 points; tuned on one conversation, measured on the other)')
  for (const r of run.results)
    lines.push(
      `- tuned on ${r.tunedOn}: graph ${r.value}, in-sample ${signed(r.inSample)}, held-out ${r.heldOut} ${signed(r.heldOutDelta)}`,
    )
  lines.push(`- verdict: ${run.verdict}`, '')
  const header = ['R@5 / R@10 / R@25', 'off', ...VALUES.map((v) => `graph ${v}`)]
  lines.push(`| ${header.join(' | ')} |`, `| ${header.map(() => '---').join(' | ')} |`)
  for (const scope of scopes) {
    for (const bucket of BUCKETS) {
      const off = inBucket(scope.pick(run.outcomes.get(OFF) ?? new Map()), bucket)
      if (off.length === 0) continue
      const cells = [OFF, ...VALUES].map((value) => {
        const asked = inBucket(scope.pick(run.outcomes.get(value) ?? new Map()), bucket)
        return KS.map((k) => f1(meanRecall(asked, k))).join(' / ')
      })
      lines.push(`| ${scope.name} ${bucket} (n=${off.length}) | ${cells.join(' | ')} |`)
      for (const value of [OFF, ...VALUES]) {
        const asked = inBucket(scope.pick(run.outcomes.get(value) ?? new Map()), bucket)
        for (const k of KS)
          rows.push({
            name: `${scope.name} ${bucket} R@${k} graph ${value}`,
            value: meanRecall(asked, k),
            unit: '%',
            better: 'higher',
            note: `n=${off.length}`,
          })
      }
    }
  }
  lines.push('', '## Search time (ms, same run, values alternating)')
  for (const value of [OFF, ...VALUES]) {
    const list = run.ms.get(value) ?? []
    lines.push(`- graph ${value}: p50 ${f1(p(list, 50))}, p95 ${f1(p(list, 95))} (${list.length} searches)`)
  }
  lines.push('', `Run: ${f1(run.seconds)} s.`)
  return { rows, table: lines.join('\n') }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const given = option('--dataset')
  const dataset = given ? path.resolve(process.env.INIT_CWD ?? process.cwd(), given) : undefined
  if (!dataset || !fs.existsSync(dataset)) {
    console.error('usage: pnpm --filter @engram/api bench:graph -- --dataset PATH [--quick]')
    process.exit(2)
  }
  const quick = process.argv.includes('--quick')
  const run = await graphQuality(dataset, quick)
  const { rows, table } = report(run)
  console.info(table)
  writeReport('quality-graph', 'Graph expansion on LoCoMo dev, cross-validated', rows, { dataset, quick })
}

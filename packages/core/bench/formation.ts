// Memory-formation bench (issue 13 §6): the offline extractor on a LoCoMo-format development set,
// scored against its `observation` field (the facts a careful reader extracts, per session and
// speaker, each with the turns it comes from). Cross-validated: the extractor's settings are chosen
// on one conversation and reported on the other, both ways round.
//
//   pnpm --filter @engram/core exec tsx bench/formation.ts --dataset ../../../shared/datasets/locomo-dev.json
//
// Match definition (written down in docs/memory-formation.md): a memory matches an observation when
// it comes from one of the observation's turns AND the F1 of their word sets is at least
// MATCH_THRESHOLD, where a word set is the Porter stems of the text's content words (STOP_WORDS
// removed) without the conversation's two speaker names (every memory and observation names its
// speaker, which would make any two look alike).
import { type CandidateMemory, extractMemoriesOffline } from '../src/formation/extractor.ts'
import {
  DEFAULT_OFFLINE_EXTRACTOR_SETTINGS,
  type OfflineExtractorSettings,
} from '../src/formation/settings.ts'
import {
  chooseSettings,
  extractorGrid,
  type FormationConversation,
  type FormedMemory,
  loadFormationConversations,
  MATCH_THRESHOLD,
  scoreObservations,
  settingsNote,
} from './formation-score.ts'
import { type BenchRow, writeReport } from './report.ts'

const SENSITIVITY = [0.2, 0.3, 0.4, 0.5]
const PRECISION_TARGET = 0.7
const RECALL_TARGET = 0.6

type Conversation = FormationConversation

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`)
  return index >= 0 ? process.argv[index + 1] : undefined
}

/** The raw offline extractor over a whole conversation (no verification, no deduplication). */
export function extractConversation(
  conversation: Pick<FormationConversation, 'turns'>,
  settings: OfflineExtractorSettings,
): CandidateMemory[] {
  const turns = conversation.turns.map((turn) => ({
    id: turn.diaId,
    speaker: turn.speaker,
    content: turn.text,
    timestamp: turn.timestamp,
  }))
  const now = conversation.turns.at(-1)?.timestamp ?? new Date(0)
  return extractMemoriesOffline(turns, { now, settings })
}

/** Candidates as the scorer reads them (their source ids are the dataset's turn ids). */
export const asFormed = (candidates: readonly CandidateMemory[]): FormedMemory[] =>
  candidates.map((c) => ({ content: c.content, sourceTurnIds: c.sourceMessageIds }))

const extract = extractConversation
const score = (conversation: Conversation, memories: CandidateMemory[], threshold: number) =>
  scoreObservations(conversation, asFormed(memories), threshold)
const grid = () => extractorGrid('full')
const choose = chooseSettings

function turnsPerSecond(conversation: Conversation): number {
  extract(conversation, DEFAULT_OFFLINE_EXTRACTOR_SETTINGS) // warm-up: the NLP model loads once
  const runs = 3
  const started = performance.now()
  for (let i = 0; i < runs; i++) extract(conversation, DEFAULT_OFFLINE_EXTRACTOR_SETTINGS)
  return (conversation.turns.length * runs) / ((performance.now() - started) / 1000)
}

function main() {
  const dataset = argument('dataset')
  if (!dataset) throw new Error('usage: tsx bench/formation.ts --dataset PATH [--examples N]')
  const conversations = loadFormationConversations(dataset)
  if (conversations.length < 2) throw new Error('cross-validation needs two conversations')
  const rows: BenchRow[] = []
  const pct = (value: number) => Math.round(value * 1000) / 10

  for (const [tuneIndex, reportIndex] of [
    [0, 1],
    [1, 0],
  ] as const) {
    const tune = conversations[tuneIndex] as Conversation
    const report = conversations[reportIndex] as Conversation
    const scored = grid().map((settings) => ({
      settings,
      score: score(tune, extract(tune, settings), MATCH_THRESHOLD),
    }))
    const chosen = choose(scored)
    const held = score(report, extract(report, chosen.settings), MATCH_THRESHOLD)
    const direction = `tuned on ${tune.id}, reported on ${report.id}`
    const note = `${direction}; ${settingsNote(chosen.settings)}; ${held.memories} memories, ${held.observations} observations`
    rows.push(
      {
        name: `recall (${direction})`,
        value: pct(held.recall),
        unit: '%',
        note,
        better: 'higher',
        target: { op: '>=', value: RECALL_TARGET * 100 },
      },
      {
        name: `precision (${direction})`,
        value: pct(held.precision),
        unit: '%',
        note,
        better: 'higher',
        target: { op: '>=', value: PRECISION_TARGET * 100 },
      },
      {
        name: `precision on annotated turns (${direction})`,
        value: pct(held.precisionOnAnnotatedTurns),
        unit: '%',
        note: 'memories from turns without any observation left out',
      },
      {
        name: `tuning fit on ${tune.id}`,
        value: pct(chosen.score.recall),
        unit: '% recall',
        note: `precision ${pct(chosen.score.precision)}%`,
      },
    )
  }

  for (const conversation of conversations) {
    const memories = extract(conversation, DEFAULT_OFFLINE_EXTRACTOR_SETTINGS)
    for (const threshold of SENSITIVITY) {
      const s = score(conversation, memories, threshold)
      rows.push({
        name: `defaults on ${conversation.id}, F1 ≥ ${threshold}`,
        value: pct(s.recall),
        unit: '% recall',
        note: `precision ${pct(s.precision)}% (${pct(s.precisionOnAnnotatedTurns)}% on annotated turns), ${s.memories} memories`,
      })
    }
    rows.push({
      name: `turns/s on ${conversation.id}`,
      value: Math.round(turnsPerSecond(conversation)),
      unit: 'turns/s',
      better: 'higher',
    })
    const examples = Number(argument('examples') ?? 0)
    for (const memory of memories.slice(0, examples))
      console.info(
        `${memory.sourceMessageIds.join(',')} [${memory.type}/${memory.family} ${memory.confidence}] ${memory.content}`,
      )
  }

  writeReport('formation-extractor', 'Memory formation: offline extractor on LoCoMo observations', rows, {
    dataset: dataset.split('/').at(-1),
    matchThreshold: MATCH_THRESHOLD,
    match: 'same source turn and F1 of stemmed content words (speaker names removed) >= threshold',
  })
}

// Run on its own (the harness's formation suite in apps/api/bench/formation.ts imports the helpers).
if (import.meta.url === `file://${process.argv[1]}`)
  if (import.meta.url === `file://${process.argv[1]}`)
    // Run on its own (the harness's formation suite in apps/api/bench/formation.ts imports the helpers).
    main()

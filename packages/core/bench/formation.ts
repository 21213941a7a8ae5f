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
import fs from 'node:fs'
import { stemmer } from 'stemmer'
import { type CandidateMemory, extractMemoriesOffline } from '../src/formation/extractor.ts'
import {
  DEFAULT_OFFLINE_EXTRACTOR_SETTINGS,
  type OfflineExtractorSettings,
} from '../src/formation/settings.ts'
import { contentWords } from '../src/retrieval/lexical.ts'
import { type LocomoTurn, loadLocomo, normaliseEvidence } from './locomo.ts'
import { type BenchRow, writeReport } from './report.ts'

const MATCH_THRESHOLD = 0.3
const SENSITIVITY = [0.2, 0.3, 0.4, 0.5]
const PRECISION_TARGET = 0.7
const RECALL_TARGET = 0.6

interface Observation {
  text: string
  speaker: string
  turnIds: string[]
}
interface Conversation {
  id: string
  speakers: string[]
  turns: LocomoTurn[]
  observations: Observation[]
}

function argument(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`)
  return index >= 0 ? process.argv[index + 1] : undefined
}

function loadConversations(file: string): Conversation[] {
  const raw = JSON.parse(fs.readFileSync(file, 'utf8')) as {
    sample_id: string
    observation: Record<string, Record<string, [string, string | string[]][]>>
  }[]
  return loadLocomo(file).map((conversation, index) => {
    const sample = raw[index] as (typeof raw)[number]
    const observations: Observation[] = []
    for (const session of Object.values(sample.observation ?? {}))
      for (const [speaker, list] of Object.entries(session))
        for (const [text, ids] of list)
          observations.push({ text, speaker, turnIds: normaliseEvidence([ids].flat().map(String)) })
    const speakers = [...new Set(conversation.turns.map((turn) => turn.speaker))]
    return { id: conversation.id, speakers, turns: conversation.turns, observations }
  })
}

function wordSet(text: string, names: ReadonlySet<string>): Set<string> {
  return new Set([...contentWords(text)].filter((word) => !names.has(word)).map((word) => stemmer(word)))
}

function f1(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 || b.size === 0) return 0
  let shared = 0
  for (const word of a) if (b.has(word)) shared++
  return shared === 0 ? 0 : (2 * shared) / (a.size + b.size)
}

function extract(conversation: Conversation, settings: OfflineExtractorSettings): CandidateMemory[] {
  const turns = conversation.turns.map((turn) => ({
    id: turn.diaId,
    speaker: turn.speaker,
    content: turn.text,
    timestamp: turn.timestamp,
  }))
  const now = conversation.turns.at(-1)?.timestamp ?? new Date(0)
  return extractMemoriesOffline(turns, { now, settings })
}

interface Score {
  recall: number
  precision: number
  /**
   * Precision over the memories whose turn has at least one observation. LoCoMo's annotators wrote
   * observations for about half the turns; a memory from an unannotated turn ("Melanie loved reading
   * Charlotte's Web as a kid") counts as unmatched in `precision` even when it is true and useful.
   * This figure separates that from memories that miss what the annotators did write.
   */
  precisionOnAnnotatedTurns: number
  memories: number
  observations: number
}

function score(conversation: Conversation, memories: CandidateMemory[], threshold: number): Score {
  const names = new Set(conversation.speakers.flatMap((speaker) => [...contentWords(speaker)]))
  const observationWords = conversation.observations.map((o) => wordSet(o.text, names))
  const covered = new Set<number>()
  let matched = 0
  let onAnnotated = 0
  const annotated = new Set(conversation.observations.flatMap((o) => o.turnIds))
  for (const memory of memories) {
    if (memory.sourceMessageIds.some((id) => annotated.has(id))) onAnnotated++
    const words = wordSet(memory.content, names)
    let any = false
    for (const [index, observation] of conversation.observations.entries()) {
      if (!observation.turnIds.some((id) => memory.sourceMessageIds.includes(id))) continue
      if (f1(words, observationWords[index] as Set<string>) < threshold) continue
      covered.add(index)
      any = true
    }
    if (any) matched++
  }
  return {
    recall: covered.size / Math.max(1, conversation.observations.length),
    precision: matched / Math.max(1, memories.length),
    precisionOnAnnotatedTurns: matched / Math.max(1, onAnnotated),
    memories: memories.length,
    observations: conversation.observations.length,
  }
}

/** The settings tried when tuning: the dials that trade precision for recall. */
function grid(): OfflineExtractorSettings[] {
  const out: OfflineExtractorSettings[] = []
  for (const minConfidence of [0.4, 0.5, 0.6, 0.7])
    for (const minContentWords of [3, 4, 5])
      for (const minContentWordsNamed of [2, 3, 4])
        for (const maxItemsPerTurn of [2, 6])
          for (const keepThirdPerson of [true, false])
            out.push({
              ...DEFAULT_OFFLINE_EXTRACTOR_SETTINGS,
              minConfidence,
              minContentWords,
              minContentWordsNamed,
              maxItemsPerTurn,
              keepThirdPerson,
            })
  return out
}

/**
 * The settings with the best F1 of recall and precision on the tuning conversation. "Highest recall
 * at 70% precision" was tried first and picks degenerate settings (14 memories for 184
 * observations) that reach the precision by keeping almost nothing.
 */
function choose(scored: { settings: OfflineExtractorSettings; score: Score }[]) {
  const f = (s: Score) =>
    s.recall + s.precision === 0 ? 0 : (2 * s.recall * s.precision) / (s.recall + s.precision)
  return scored.reduce((best, entry) => (f(entry.score) > f(best.score) ? entry : best))
}

function turnsPerSecond(conversation: Conversation): number {
  extract(conversation, DEFAULT_OFFLINE_EXTRACTOR_SETTINGS) // warm-up: the NLP model loads once
  const runs = 3
  const started = performance.now()
  for (let i = 0; i < runs; i++) extract(conversation, DEFAULT_OFFLINE_EXTRACTOR_SETTINGS)
  return (conversation.turns.length * runs) / ((performance.now() - started) / 1000)
}

const settingsNote = (s: OfflineExtractorSettings) =>
  `minConfidence ${s.minConfidence}, minContentWords ${s.minContentWords}, minContentWordsNamed ${s.minContentWordsNamed}, maxItemsPerTurn ${s.maxItemsPerTurn}, keepThirdPerson ${s.keepThirdPerson}`

function main() {
  const dataset = argument('dataset')
  if (!dataset) throw new Error('usage: tsx bench/formation.ts --dataset PATH [--examples N]')
  const conversations = loadConversations(dataset)
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

  writeReport('formation', 'Memory formation: offline extractor on LoCoMo observations', rows, {
    dataset: dataset.split('/').at(-1),
    matchThreshold: MATCH_THRESHOLD,
    match: 'same source turn and F1 of stemmed content words (speaker names removed) >= threshold',
  })
}

main()

// The offline graph extractor on LoCoMo's `observation` facts (docs/knowledge-graph.md, "Offline
// extraction on conversations"). The dataset is read from the path given, never copied:
//   pnpm --filter @engram/core exec tsx bench/graph-conversations.ts <locomo.json> [--turns] [--sample N] [--labels file]
// --turns reads the dialog turns (each by its speaker, first person restated) instead of the observations.
// Prints per conversation: observations, relationships (distinct triples), entities (distinct
// normalised names), relations by kind; with --sample, the first N relations of each conversation
// (for labelling by hand); with --labels, the precision of the labelled fixture against what the
// extractor finds now (a labelled relation no longer found is reported, not counted).
import fs from 'node:fs'
import { extractGraphOffline } from '../src/graph/extract.ts'
import { normalizeEntityName } from '../src/graph/graph.ts'
import { loadLocomo, sessionTime } from './locomo.ts'

interface RawSample {
  sample_id: string
  conversation: Record<string, unknown>
  observation: Record<string, Record<string, [string, string | string[]][]>>
}

export interface ObservedRelation {
  conversation: string
  diaId: string
  /** The observation, as given: the fixture quotes its first 90 characters. */
  text: string
  triple: string
}

interface Fact {
  text: string
  speaker: string
  diaId: string
  reference: Date
}

/** The observations of each conversation (by speaker, dated by their session), or its dialog turns. */
function factsOf(file: string, turns: boolean): { id: string; facts: Fact[] }[] {
  if (turns)
    return loadLocomo(file).map((c) => ({
      id: c.id,
      facts: c.turns.map((t) => ({
        text: t.text,
        speaker: t.speaker,
        diaId: t.diaId,
        reference: t.timestamp,
      })),
    }))
  const samples = JSON.parse(fs.readFileSync(file, 'utf8')) as RawSample[]
  return samples.map((sample) => {
    const facts: Fact[] = []
    const sessions = Object.keys(sample.observation).sort(
      (a, b) => Number(a.split('_')[1]) - Number(b.split('_')[1]),
    )
    for (const key of sessions) {
      const reference = sessionTime(
        String(sample.conversation[`${key.replace('_observation', '')}_date_time`]),
      )
      for (const [speaker, said] of Object.entries(sample.observation[key] ?? {}))
        for (const [text, dia] of said) facts.push({ text, speaker, diaId: String(dia), reference })
    }
    return { id: sample.sample_id, facts }
  })
}

export function extractConversations(file: string, turns = false) {
  return factsOf(file, turns).map((sample) => {
    const relations: ObservedRelation[] = []
    const entities = new Map<string, string>()
    const byRelation = new Map<string, number>()
    let observations = 0
    let mentions = 0
    let ms = 0
    for (const { text, speaker, diaId, reference } of sample.facts) {
      observations++
      const started = performance.now()
      const found = extractGraphOffline(text, { speaker, reference })
      ms += performance.now() - started
      for (const e of found.entities) entities.set(normalizeEntityName(e.name), e.type)
      mentions += found.entities.length
      for (const r of found.relations) {
        const triple = `${r.source} -${r.relation}-> ${r.target}`
        relations.push({ conversation: sample.id, diaId, text, triple })
        byRelation.set(r.relation, (byRelation.get(r.relation) ?? 0) + 1)
      }
    }
    const distinct = new Set(relations.map((r) => r.triple.toLowerCase()))
    return {
      id: sample.id,
      observations,
      relations,
      distinct: distinct.size,
      entities,
      mentions,
      byRelation,
      ms,
    }
  })
}

/** How much of an observation a label quotes: enough to find it again, not the dataset. */
const QUOTED = 90

/** One hand-checked relation (bench/fixtures/locomo-graph-labels.json). */
interface Label {
  conversation: string
  source: 'observation' | 'turn'
  diaId: string
  /** The first QUOTED characters of the observation or turn. */
  text: string
  relation: string
  correct: boolean
  note?: string
}

function main() {
  const args = process.argv.slice(2)
  const file = args[0]
  if (!file) throw new Error('usage: graph-conversations.ts <locomo.json> [--sample N] [--labels file]')
  const sample = args.includes('--sample') ? Number(args[args.indexOf('--sample') + 1]) : 0
  const labelsFile = args.includes('--labels') ? args[args.indexOf('--labels') + 1] : null
  const results = extractConversations(file, args.includes('--turns'))
  for (const c of results) {
    const typed = [...c.entities.values()].reduce<Record<string, number>>(
      (acc, t) => Object.assign(acc, { [t]: (acc[t] ?? 0) + 1 }),
      {},
    )
    console.log(
      `${c.id}: ${c.observations} observations, ${c.relations.length} relations (${c.distinct} distinct), ` +
        `${c.entities.size} entities (${c.mentions} mentions) ${JSON.stringify(typed)}, ${(c.ms / c.observations).toFixed(1)} ms/observation`,
    )
    console.log(`  by relation: ${JSON.stringify(Object.fromEntries(c.byRelation))}`)
    for (const r of c.relations.slice(0, sample)) console.log(`  ${r.diaId}\t${r.triple}\t| ${r.text}`)
  }
  if (labelsFile) {
    const labels = JSON.parse(fs.readFileSync(labelsFile, 'utf8')) as Label[]
    const source = args.includes('--turns') ? 'turn' : 'observation'
    for (const c of results) {
      const mine = labels.filter((l) => l.conversation === c.id && l.source === source)
      const key = (text: string, triple: string) => `${text.slice(0, QUOTED)}|${triple}`
      const found = new Set(c.relations.map((r) => key(r.text, r.triple)))
      const still = mine.filter((l) => found.has(key(l.text, l.relation)))
      const correct = still.filter((l) => l.correct).length
      const unlabelled = c.relations.filter(
        (r) => !mine.some((l) => key(l.text, l.relation) === key(r.text, r.triple)),
      )
      console.log(
        `${c.id} ${source}s: ${mine.length} labelled, ${still.length} still found, ${correct} correct: precision ` +
          `${still.length ? ((100 * correct) / still.length).toFixed(1) : '-'}%; ${unlabelled.length} found unlabelled`,
      )
      for (const l of mine.filter((l) => !found.has(key(l.text, l.relation))))
        console.log(`  no longer found: ${l.relation} | ${l.text}`)
      for (const r of unlabelled) console.log(`  unlabelled: ${r.triple} | ${r.text.slice(0, QUOTED)}`)
    }
  }
}

if (process.argv[1]?.endsWith('graph-conversations.ts')) main()

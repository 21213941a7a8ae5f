// The LoCoMo workload every system gets: the same turns as memories and the same questions, in
// the same order. Kept identical to apps/api/bench/quality.ts so Engram's recall here matches it.
import fs from 'node:fs'

interface RawTurn {
  speaker: string
  dia_id: string
  text: string
  blip_caption?: string
}
interface RawSample {
  sample_id: string
  conversation: Record<string, unknown>
  qa: { question: string; evidence: string[]; category: number }[]
}

export interface Turn {
  /** The conversation (LoCoMo sample) it belongs to: every system scopes memories by it. */
  conversation: string
  /** LoCoMo's dialog id, "D<session>:<turn>": kept in each system's metadata to score recall. */
  diaId: string
  /** `Speaker said, "text"` (and the shared image's caption, as quality.ts stores it). */
  content: string
  /** The session's real time plus one second per turn (Engram's messages carry it). */
  timestamp: Date
  /** Index of its session within the conversation: batches are one session each. */
  session: number
}

export interface Question {
  conversation: string
  question: string
  /** Normalised evidence dialog ids, never empty. */
  evidence: string[]
  category: number
}

export interface Workload {
  turns: Turn[]
  questions: Question[]
  conversations: string[]
}

/** "1:56 pm on 8 May, 2023" → a UTC date. */
function sessionTime(text: string): Date {
  const match = /(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+(\w+),?\s+(\d{4})/i.exec(text)
  if (!match) throw new Error(`unreadable session time: ${text}`)
  const [, h, m, half, day, month, year] = match as unknown as string[]
  const hour = (Number(h) % 12) + (half?.toLowerCase() === 'pm' ? 12 : 0)
  const monthIndex = new Date(`${month} 1, 2000`).getMonth()
  return new Date(Date.UTC(Number(year), monthIndex, Number(day), hour, Number(m)))
}

/** A few evidence ids are malformed ("D8:6; D9:17", "D:11:26", "D30:05"). */
export function normaliseEvidence(ids: string[]): string[] {
  return ids
    .flatMap((id) => id.split(/[;,\s]+/))
    .map((id) => id.replace(/^D:/, 'D').replace(/:0+(\d)/, ':$1'))
    .filter((id) => /^D\d+:\d+$/.test(id))
}

/** Conversation ids double as Engram agent ids, LangGraph namespace labels and mem0 user ids. */
const conversationId = (sampleId: string) => sampleId.toLowerCase().replace(/[^a-z0-9_-]/g, '-')

export function loadWorkload(file: string): Workload {
  const samples = JSON.parse(fs.readFileSync(file, 'utf8')) as RawSample[]
  const turns: Turn[] = []
  const questions: Question[] = []
  for (const sample of samples) {
    const conversation = conversationId(sample.sample_id)
    const sessionKeys = Object.keys(sample.conversation)
      .filter((k) => /^session_\d+$/.test(k))
      .sort((a, b) => Number(a.split('_')[1]) - Number(b.split('_')[1]))
    for (const [session, key] of sessionKeys.entries()) {
      const start = sessionTime(String(sample.conversation[`${key}_date_time`]))
      for (const [i, turn] of (sample.conversation[key] as RawTurn[]).entries()) {
        const said = `${turn.speaker} said, "${turn.text}"`
        turns.push({
          conversation,
          diaId: turn.dia_id,
          content: turn.blip_caption ? `${said} and shared ${turn.blip_caption}.` : said,
          timestamp: new Date(start.getTime() + i * 1_000),
          session,
        })
      }
    }
    for (const qa of sample.qa) {
      const evidence = normaliseEvidence(qa.evidence)
      if (evidence.length > 0)
        questions.push({ conversation, question: qa.question, evidence, category: qa.category })
    }
  }
  return { turns, questions, conversations: [...new Set(turns.map((t) => t.conversation))] }
}

/**
 * The --quick subset: the first `turnCount` turns, and the first `questionCount` questions whose
 * evidence all lies in them (so recall stays meaningful on the subset).
 */
export function subsetWorkload(workload: Workload, turnCount: number, questionCount: number): Workload {
  const turns = workload.turns.slice(0, turnCount)
  const present = new Set(turns.map((t) => `${t.conversation}/${t.diaId}`))
  const questions = workload.questions
    .filter((q) => q.evidence.every((id) => present.has(`${q.conversation}/${id}`)))
    .slice(0, questionCount)
  return { turns, questions, conversations: [...new Set(turns.map((t) => t.conversation))] }
}

/** Turns grouped by conversation and session, in order: the unit of a batched add. */
export function sessionBatches(turns: readonly Turn[]): Turn[][] {
  const batches: Turn[][] = []
  let current: Turn[] = []
  for (const turn of turns) {
    const last = current[current.length - 1]
    if (last && (last.conversation !== turn.conversation || last.session !== turn.session)) {
      batches.push(current)
      current = []
    }
    current.push(turn)
  }
  if (current.length) batches.push(current)
  return batches
}

/** recall@k = |evidence ∩ top-k| / |evidence| (the LoCoMo paper's retrieval metric). */
export const recallAt = (retrieved: readonly string[], evidence: readonly string[], k: number) =>
  evidence.filter((id) => retrieved.slice(0, k).includes(id)).length / evidence.length

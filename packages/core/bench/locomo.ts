// LoCoMo-format datasets (e.g. ../shared/datasets/locomo-dev.json), read one way for every
// benchmark that uses them (retrieval quality, peers), so their recall figures are comparable.
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

export interface LocomoTurn {
  /** LoCoMo's dialog id, "D<session>:<turn>": what recall is scored on. */
  diaId: string
  speaker: string
  /** The turn's own words, without the speaker's name (what a structured ingest stores). */
  text: string
  /** The caption of the image shared in the turn, or null. */
  caption: string | null
  /** `Speaker said, "text"`: the plain BM25 baseline's document. */
  said: string
  /** What is stored: `said`, and the shared image's caption when there is one. */
  content: string
  /** The session's real time plus one second per turn. */
  timestamp: Date
  /** Index of its session within the conversation. */
  session: number
}

export interface LocomoQuestion {
  question: string
  /** Normalised evidence dialog ids, never empty (questions without any are left out). */
  evidence: string[]
  category: number
}

export interface LocomoConversation {
  /** The sample id as an id the systems accept (Engram agent, LangGraph namespace, mem0 user). */
  id: string
  turns: LocomoTurn[]
  questions: LocomoQuestion[]
}

/** "1:56 pm on 8 May, 2023" → a UTC date. */
export function sessionTime(text: string): Date {
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

export function loadLocomo(file: string): LocomoConversation[] {
  const samples = JSON.parse(fs.readFileSync(file, 'utf8')) as RawSample[]
  return samples.map((sample) => {
    const turns: LocomoTurn[] = []
    const sessionKeys = Object.keys(sample.conversation)
      .filter((k) => /^session_\d+$/.test(k))
      .sort((a, b) => Number(a.split('_')[1]) - Number(b.split('_')[1]))
    for (const [session, key] of sessionKeys.entries()) {
      const start = sessionTime(String(sample.conversation[`${key}_date_time`]))
      for (const [i, turn] of (sample.conversation[key] as RawTurn[]).entries()) {
        const said = `${turn.speaker} said, "${turn.text}"`
        turns.push({
          diaId: turn.dia_id,
          speaker: turn.speaker,
          text: turn.text,
          caption: turn.blip_caption || null,
          said,
          content: turn.blip_caption ? `${said} and shared ${turn.blip_caption}.` : said,
          timestamp: new Date(start.getTime() + i * 1_000),
          session,
        })
      }
    }
    const questions = sample.qa
      .map((qa) => ({
        question: qa.question,
        evidence: normaliseEvidence(qa.evidence),
        category: qa.category,
      }))
      .filter((qa) => qa.evidence.length > 0)
    return { id: sample.sample_id.toLowerCase().replace(/[^a-z0-9_-]/g, '-'), turns, questions }
  })
}

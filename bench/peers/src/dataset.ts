// The LoCoMo workload every system gets: the same turns as memories and the same questions, in
// the same order, read by the same loader as apps/api/bench/quality.ts so Engram's recall matches.
import { loadLocomo } from '../../../packages/core/bench/locomo.ts'

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

export function loadWorkload(file: string): Workload {
  const turns: Turn[] = []
  const questions: Question[] = []
  for (const { id: conversation, turns: said, questions: asked } of loadLocomo(file)) {
    for (const turn of said) turns.push({ conversation, ...turn })
    for (const qa of asked) questions.push({ conversation, ...qa })
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
